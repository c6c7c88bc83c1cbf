//! Sweeping: the bounded batches `tick`, `purge` and each write remove,
//! and keeping the expiry wheel in step with each slot's deadline.

use super::*;

impl Engine {
    /// Removes up to `n` expired entries (none when the sweep budget is 0):
    /// what writes pay, a few each, so that a cache that is never ticked
    /// does not fill with dead entries. Not capped at the budget, which
    /// bounds a `tick`: a stream of writes faster than the budget per clock
    /// step would outrun it (a probe: `sweep_budget` 1 with 2 writes a ms
    /// held 10.5 times the live entries). The hosts pay in batches small
    /// enough to be a write's (the JS host's every 256 inserts at most).
    pub fn reclaim(&mut self, n: u64) -> u64 {
        if self.budget == 0 || self.wheel.len() == 0 {
            return 0;
        }
        self.sweep(n, None)
    }

    /// Moves the clock and sweeps one budget's worth of expired entries.
    pub fn tick(&mut self, now: f64) -> Result<u64> {
        self.advance(now)?;
        self.counters.ticks += 1;
        Ok(self.sweep(self.budget, None))
    }

    /// Removes every expired entry.
    pub fn purge(&mut self) -> u64 {
        self.sweep(u64::MAX, None)
    }

    /// Removes up to `n` expired entries (whatever the sweep budget), so a
    /// caller can replay the removal log between batches.
    pub fn purge_some(&mut self, n: u64) -> u64 {
        self.sweep(n, None)
    }

    /// Pops due wheel slots, removing expired ones, until `budget` entries are
    /// gone, nothing more is due, or (with `fit`) the cache has room for
    /// `fit = (entries, bytes)` more. Work beyond removals (cascades and lazy
    /// idle reschedules) is capped at a multiple of the budget so that one
    /// tick's pause stays bounded; the wheel resumes where it stopped. At 2x
    /// the budget a tick that only cascades pauses about as long as one that
    /// removes a full budget (measured: 4x let cascades dominate p99). A
    /// removal counts twice against that cap (its pop and itself: with the
    /// host's replay it costs about three cascades), so a tick that cascades
    /// removes less instead of pausing up to half as long again (at 1M
    /// entries, a tenth of the ticks and the slowest kind).
    pub(super) fn sweep(&mut self, budget: u64, fit: Option<(u64, u64)>) -> u64 {
        let limit = self.tick_of(self.now());
        let work_cap = budget.saturating_mul(2).saturating_add(64);
        let (mut removed, mut work) = (0u64, 0u64);
        let mut same_tick: Vec<u32> = Vec::new();
        while removed < budget && work + removed < work_cap && self.step_ok() {
            if let Some((e, b)) = fit {
                if !self.over(e, b) {
                    break;
                }
            }
            work += 1;
            let Some(popped) = self.wheel.pop(limit) else {
                break;
            };
            // Every `WAYS` pops, the lines of the slots the next ones hand
            // out, loaded together: their misses overlap (a wasm load holds
            // retirement, so loads issued one per pop would not).
            if work % WAYS as u64 == 1 {
                for &h in self.wheel.heads() {
                    self.warm(h);
                }
            }
            match popped {
                // A slot already expired leaves its coarse bucket as a due
                // one: moved down to the cursor's bucket first, it cost a
                // pop and a reschedule more, and a tick after a long pause
                // (a host that ticks rarely) spent its whole work cap on
                // such moves and returned 0 with thousands expired.
                Pop::Cascade(s) if self.deadline_of(s) > self.now() => {
                    self.counters.cascaded += 1;
                    self.schedule(s);
                }
                Pop::Cascade(s) | Pop::Due(s) => {
                    let d = self.deadline_of(s);
                    if d > self.now() {
                        self.counters.rescheduled += 1;
                        let t = self.tick_of(d);
                        if t <= limit {
                            // Not expired, yet on the clock's own tick (a
                            // fraction of a millisecond ahead, or a far clock
                            // whose sums round): back in the wheel only after
                            // this sweep, so it is handed out once per sweep,
                            // and every later sweep still checks it.
                            // Fallibly: nothing inside a call may abort
                            // on a failed allocation (a trap in wasm). Out
                            // of memory, the sweep ends here.
                            if same_tick.try_reserve(1).is_err() {
                                self.wheel.schedule(s, limit);
                                break;
                            }
                            same_tick.push(s);
                        } else {
                            self.wheel.schedule(s, t);
                        }
                    } else if self.kind(s) == Kind::Hash {
                        removed += self.expire_hash_fields(s, budget - removed);
                    } else if !self.hold_in_grace(s) {
                        removed += self.remove(s, Reason::Expired);
                    } else if self.wheel.is_scheduled(s) && self.tick_of(self.stale_until(s)) <= limit {
                        // Its grace ends later in the clock's own tick (a
                        // fractional deadline): back only after this sweep,
                        // as a live slot due this tick. `purge` popped it
                        // again and again, for good (a probe: a ttl of 0.5
                        // and a grace of 10, purged at 10).
                        self.wheel.cancel(s);
                        if same_tick.try_reserve(1).is_err() {
                            self.wheel.schedule(s, limit);
                            break;
                        }
                        same_tick.push(s);
                    }
                }
            }
        }
        for s in same_tick {
            // Its hash may have expired whole since it was parked.
            if !matches!(self.kind(s), Kind::Free | Kind::Reserved) {
                self.wheel.schedule_back(s, limit);
            }
        }
        self.counters.swept += removed;
        removed
    }

    /// Starts loading the lines slot `s` (`NIL`: none) will need, while
    /// this one is handled: a sweep's slots are scattered, each a cache miss
    /// per column, and handled one after another the misses do not overlap.
    fn warm(&self, s: u32) {
        if s != NIL {
            self.wheel.warm(s);
            self.times.warm(s);
            self.policy.warm(s, !self.family.is_empty());
        }
    }

    /// Removes up to `room` fields of an expired hash; the last one takes the
    /// key with it. A hash with more fields than the budget is finished over
    /// the next ticks (reads already treat all of it as gone).
    fn expire_hash_fields(&mut self, h: u32, room: u64) -> u64 {
        let hid = self.family[h as usize] as usize;
        let mut n = 0;
        while n < room && self.step_ok() {
            let f = self.hashes[hid].tail; // oldest first, as `remove`
            let last = self.hashes[hid].len == 1;
            n += self.remove(f, Reason::Expired);
            if last {
                return n;
            }
        }
        // At its own (past) deadline's tick, which the wheel clamps to its
        // cursor: `next_expiry` must not report later than that deadline.
        let d = self.deadline_of(h);
        let due = self.tick_of(d).min(self.tick_of(self.now()));
        self.wheel.schedule(h, due);
        n
    }

    /// Puts an unscheduled slot in the wheel at its current deadline. A key
    /// with none, in a cache that never evicts, goes in the queues instead.
    pub(super) fn schedule(&mut self, s: u32) {
        let d = self.deadline_of(s);
        if d != NEVER {
            let t = self.tick_of(d);
            self.wheel.schedule(s, t);
        } else {
            self.policy.park(s);
        }
    }

    pub(super) fn reschedule(&mut self, s: u32) {
        self.wheel.cancel(s);
        self.schedule(s);
    }
}
