//! Removal: the removal log, counters, freeing slots, `clear`.

use super::*;

impl Engine {
    /// Logs the removal of slot `s` and returns the reason logged: a value
    /// in grace had expired already and leaves as such, flagged
    /// `LOG_GRACED` (the host stopped counting it when it entered).
    fn log(&mut self, s: u32, reason: Reason, kind: Kind, parent: u32) -> Reason {
        debug_assert_eq!(kind == Kind::Field, parent != NIL, "slot {s}: only a field names a parent");
        let (reason, graced) = if self.leave_grace(s, kind) { (Reason::Expired, true) } else { (reason, false) };
        let rec = LogRecord { slot: s, reason: reason as u8, kind: kind as u8, ghost: false, graced, parent };
        self.log.extend_from_slice(&rec.words());
        reason
    }

    /// Whether the log has room for one more step: a removal or an entry
    /// into grace logs at most two records (a field's and its hash's). If
    /// not, the call stops here (`cut`), and its host makes it again once
    /// it has replayed the log. Every loop that may remove many checks this
    /// before each step, and leaves the engine where a call made again
    /// goes on from.
    pub(super) fn step_ok(&mut self) -> bool {
        self.cut = self.log.len() + 2 * LOG_STRIDE > self.log_cap;
        !self.cut
    }

    /// Logs that slot `s` entered grace (it keeps its key and value).
    pub(super) fn log_enter_grace(&mut self, s: u32, kind: Kind, parent: u32) {
        let reason = LOG_ENTER_GRACE as u8;
        let rec = LogRecord { slot: s, reason, kind: kind as u8, ghost: false, graced: false, parent };
        self.log.extend_from_slice(&rec.words());
    }

    /// Whether slot `s` is in grace; if so, takes it out of the grace counts
    /// (it is being removed).
    fn leave_grace(&mut self, s: u32, kind: Kind) -> bool {
        let i = s as usize;
        if !self.graced(i) {
            return false;
        }
        self.set_graced(i, false);
        if kind == Kind::Field {
            let hid = self.family[self.family[i] as usize] as usize;
            self.hash_graced[hid] -= 1;
        } else {
            self.graced_keys -= 1;
        }
        true
    }

    fn count(&mut self, reason: Reason, n: u64) {
        match reason {
            Reason::Expired => self.counters.expired += n,
            Reason::Evicted => self.counters.evicted += n,
            Reason::Deleted => self.counters.deleted += n,
            Reason::Replaced | Reason::Cleared => {}
        }
    }

    fn release(&mut self, s: u32) {
        let i = s as usize;
        debug_assert!(!matches!(self.kind(s), Kind::Free), "slot {s} released twice");
        self.wheel.cancel(s);
        self.times.put(s, Clocks::EMPTY);
        self.set_kind(s, Kind::Free, true);
        self.set_wt(i, 0);
        if !self.family.is_empty() {
            self.family[i] = NIL;
        }
        if self.grace_on {
            self.grace_ms[i] = self.grace;
        }
        self.wheel.set_next_spare(s, self.free);
        self.free = s;
        self.free_len += 1;
    }

    /// Removes a slot and everything it owns, logging each record. Returns
    /// the number of entries (plain entries and fields) removed.
    pub fn remove(&mut self, s: u32, reason: Reason) -> u64 {
        let i = s as usize;
        match self.kind(s) {
            Kind::Free | Kind::Reserved => 0,
            Kind::Plain => {
                self.policy.remove(s);
                let reason = self.log(s, reason, Kind::Plain, NIL);
                self.bytes -= u64::from(self.wt(i));
                self.entries -= 1;
                self.keys -= 1;
                self.release(s);
                self.count(reason, 1);
                1
            }
            Kind::Hash => {
                // Field by field, oldest first (as they were written, the
                // order `hgetall` lists them in), the last one taking the
                // key with it; a call stopped early leaves the hash with
                // the rest. A field
                // whose own deadline passed (not yet swept) goes as expired,
                // as a plain entry found expired does: what a `delete`,
                // eviction or overwrite of the key removes is what was live.
                // `clear` says "cleared" of everything, as it does of
                // plain entries.
                let hid = self.family[i] as usize;
                let now = self.now();
                let mut n = 0;
                while self.kind(s) == Kind::Hash && self.step_ok() {
                    let f = self.hashes[hid].tail;
                    let r =
                        if reason != Reason::Cleared && self.deadline_of(f) <= now { Reason::Expired } else { reason };
                    n += self.remove_field(f, r, reason);
                }
                n
            }
            Kind::Field => self.remove_field(s, reason, reason),
        }
    }

    /// Removes field `s` for `reason`; if it was its hash's last, the hash
    /// goes too, logged with `hash_reason` (the reason the key went, which
    /// decides, for one, whether the host's running loads of it are
    /// overtaken).
    fn remove_field(&mut self, s: u32, reason: Reason, hash_reason: Reason) -> u64 {
        let i = s as usize;
        let h = self.family[i];
        let hid = self.family[h as usize] as usize;
        self.policy.links_mut().unlink(&mut self.hashes[hid], s);
        let w = self.wt(i);
        self.set_wt(h as usize, self.wt(h as usize) - w);
        self.bytes -= u64::from(w);
        self.entries -= 1;
        let field_reason = self.log(s, reason, Kind::Field, h);
        self.release(s);
        self.count(field_reason, 1);
        if self.hashes[hid].is_empty() {
            self.policy.remove(h);
            self.log(h, hash_reason, Kind::Hash, NIL);
            self.hash_free.push(hid as u32);
            self.keys -= 1;
            self.release(h);
        } else if self.grace_on && !self.graced(h as usize) && self.hash_graced[hid] == self.hashes[hid].len {
            // Its last field not in grace went: the key is in grace now.
            self.set_graced(h as usize, true);
            self.graced_keys += 1;
            self.log_enter_grace(h, Kind::Hash, NIL);
        }
        1
    }

    /// Removes everything, logging fields before their hashes. O(live
    /// entries): it visits the keys through the eviction queues and the
    /// wheel (a cache that never evicts queues only the keys the wheel does
    /// not hold: see `park`), and the fields through their hashes, never
    /// the slots once used and freed. Slots reserved by the host stay
    /// reserved.
    pub fn clear(&mut self) {
        // Key by key, as `remove` does, off the queues, then off the wheel
        // (a field stands for its hash). No sort: the order of "cleared"
        // removals is unspecified, and a sort costs wasm. No list of the
        // keys either: at 1M keys its 4 MB would raise wasm memory's
        // high-water mark, which never comes down. A call stopped early
        // (`step_ok`) is made again and goes on with the keys still held.
        while let Some(k) = self.policy.any().or_else(|| self.wheel.any()) {
            let k = if self.kind(k) == Kind::Field { self.family[k as usize] } else { k };
            if !self.step_ok() {
                return;
            }
            self.remove(k, Reason::Cleared);
            if self.cut {
                return;
            }
        }
        debug_assert_eq!(self.wheel.len(), 0, "every scheduled slot was live");
        let cur = self.tick_of(self.now());
        self.wheel.reset_cursor(cur);
    }
}
