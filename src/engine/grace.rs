//! Grace (stale-if-error): expired slots kept for the host's loaders until
//! their deadline plus grace.

use super::*;

impl Engine {
    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Turns grace on, with `ms` as the grace of every slot not given its
    /// own; nothing if it is on already (its slots keep theirs). Called on
    /// a new engine (the `grace` option), and before a `fetch` with a
    /// `grace` of its own can store anything. Fallible: a column for every
    /// slot, which a full memory may not hold; on `Err` nothing changed.
    pub fn set_grace(&mut self, ms: f64) -> core::result::Result<(), TryReserveError> {
        if self.grace_on {
            return Ok(());
        }
        self.grace_ms.try_reserve_exact(self.capacity())?;
        self.hash_graced.try_reserve_exact(self.hashes.len())?;
        self.grace_on = true;
        self.grace = ms;
        // (resize, not vec!: the same code as grow's, and no alloc macro in no_std)
        self.grace_ms.resize(self.capacity(), ms);
        self.hash_graced.resize(self.hashes.len(), 0);
        Ok(())
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Gives the value of live slot `s` its own grace (a `fetch` with
    /// `grace`, which turned grace on before it started). Grace belongs to a
    /// value: the slot's next value, written by `overwrite`, has the default
    /// again (marked in the slot's byte, so that the host does not write it
    /// on its side).
    pub fn set_slot_grace(&mut self, s: u32, ms: f64) {
        debug_assert!(self.grace_on, "a slot's grace with grace off");
        if self.grace_on {
            self.grace_ms[s as usize] = ms;
            self.policy.own_grace(s, ms != self.grace);
        }
    }

    /// Until when the value of expired slot `s` is kept as a fallback: a
    /// time after now, or 0 if it is live, has no grace left, or belongs to
    /// a hash whose own deadline passed (a hash's deadline has no grace).
    pub fn stale_until(&self, s: u32) -> f64 {
        let i = s as usize;
        if !self.grace_on || !matches!(self.kind(s), Kind::Plain | Kind::Field) {
            return 0.0;
        }
        if self.kind(s) == Kind::Field && !self.own_live(self.family[i], self.now()) {
            return 0.0;
        }
        let d = self.deadline_of(s);
        let end = d + self.grace_ms[i].abs();
        if d > self.now() || end <= self.now() {
            0.0
        } else {
            end
        }
    }

    /// When slot `s` next needs a sweep, as the wheel holds it: its
    /// deadline, or for a slot in grace the end of its grace. `next_expiry`
    /// reported a graced slot's past deadline, so a host ticking there made
    /// no progress until the grace ended (a probe: 100 again and again with
    /// the clock at 576 and the grace ending at 600).
    pub(super) fn due_at(&self, s: u32) -> f64 {
        let d = self.deadline_of(s);
        if self.graced(s as usize) {
            d + self.grace_ms[s as usize].abs()
        } else {
            d
        }
    }

    /// Whether slot `i` is in grace (the sign bit of its `grace_ms`).
    pub(super) fn graced(&self, i: usize) -> bool {
        self.grace_on && self.grace_ms[i].is_sign_negative()
    }

    pub(super) fn set_graced(&mut self, i: usize, on: bool) {
        debug_assert_ne!(self.graced(i), on, "slot {i} enters or leaves grace twice");
        let g = self.grace_ms[i].abs();
        self.grace_ms[i] = if on { -g } else { g };
    }

    /// Keeps expired slot `s` (unscheduled by the caller, or not) in grace
    /// while it has some left; false when it must go now. The first time
    /// logs an enter-grace record, so that the host stops counting it.
    pub(super) fn hold_in_grace(&mut self, s: u32) -> bool {
        let end = self.stale_until(s);
        if end == 0.0 {
            return false;
        }
        let i = s as usize;
        if self.graced(i) && self.wheel.is_scheduled(s) {
            // Found again by a read: already waiting for its grace to end.
            return true;
        }
        if !self.graced(i) {
            debug_assert!(!self.own_live(s, self.now()), "slot {s} enters grace before its deadline");
            self.set_graced(i, true);
            if self.kind(s) == Kind::Plain {
                self.graced_keys += 1;
                self.log_enter_grace(s, Kind::Plain, NIL);
            } else {
                let h = self.family[i];
                self.log_enter_grace(s, Kind::Field, h);
                let hid = self.family[h as usize] as usize;
                self.hash_graced[hid] += 1;
                if self.hash_graced[hid] == self.hashes[hid].len {
                    self.set_graced(h as usize, true);
                    self.graced_keys += 1;
                    self.log_enter_grace(h, Kind::Hash, NIL);
                }
            }
        }
        self.wheel.cancel(s);
        if end != NEVER {
            let t = self.tick_of(end);
            self.wheel.schedule(s, t);
        } else {
            self.policy.park(s);
        }
        true
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Lazy expiry, found by a read: an expired slot goes, unless it has
    /// grace left (then it enters grace). An expired hash goes whole; a hash
    /// whose own deadline holds lets each expired field go or enter grace,
    /// and goes with its last field. A read that counts or lists a hash's
    /// fields (`hlen`, `hgetall`, iteration) calls this when it passes an
    /// expired one, so that no later read passes it again: the contract
    /// bounds no operation's cost by dead fields it does not remove.
    /// Returns the entries removed.
    pub fn expire_found(&mut self, s: u32) -> u64 {
        let kind = self.kind(s);
        match kind {
            // All its fields wait out their grace already: nothing to walk.
            Kind::Hash if self.graced(s as usize) => 0,
            Kind::Hash if self.own_live(s, self.now()) => {
                // Oldest first, as `remove`. Removing a field leaves its
                // siblings' links intact; the last one, which takes the
                // hash, has no prev.
                let mut n = 0;
                let mut f = self.hashes[self.family[s as usize] as usize].tail;
                while f != NIL && self.step_ok() {
                    let next = self.policy.links().prev(f);
                    if !self.own_live(f, self.now()) && !self.hold_in_grace(f) {
                        n += self.remove(f, Reason::Expired);
                    }
                    f = next;
                }
                n
            }
            Kind::Plain | Kind::Field if self.hold_in_grace(s) => 0,
            _ => self.remove(s, Reason::Expired),
        }
    }

    #[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm binding
    /// Slots in grace that are top-level keys (not counted in `size`).
    pub fn graced_keys(&self) -> u64 {
        self.graced_keys
    }
}
