//! The engine's invariant checker (tests and fuzzers).

use super::*;
use alloc::format;

impl Engine {
    /// Checks every count and link the engine keeps against a recount from
    /// scratch: entries, keys and bytes; the free list; each hash's field
    /// list and weight; the eviction queues (exactly the keys; in a cache
    /// that never evicts, counted, with every key the wheel does not hold
    /// linked); the wheel
    /// (every live slot with a finite deadline, nothing else); grace (the
    /// slots in grace have expired, are counted per hash and as keys, and a
    /// hash is in grace exactly when all its fields are). O(slots): for
    /// tests and fuzzing, after every step.
    #[cfg(any(debug_assertions, feature = "invariants"))]
    pub fn check_invariants(&self) -> core::result::Result<(), alloc::string::String> {
        let n = self.capacity();
        if self.times.len() != n {
            return Err("the clocks column's length disagrees".into());
        }
        // Narrow clocks hold the clock too (a host stores `now` as it is).
        if !self.times.fits(self.now()) {
            return Err(format!("narrow clocks from {} cannot hold the clock at {}", self.times.base, self.now()));
        }
        // The lazy columns are off (empty) or as long as the others.
        let lazy_ok = |len: usize| len == 0 || len == n;
        if self.policy.bits.len() != n
            || !lazy_ok(self.idles.len())
            || !lazy_ok(self.weight.len())
            || !lazy_ok(self.family.len())
            || self.high as usize > n
        {
            return Err("column lengths disagree".into());
        }
        if self.family.is_empty() && (0..n as u32).any(|s| matches!(self.kind(s), Kind::Hash | Kind::Field)) {
            return Err("a hash or field, yet no family column".into());
        }
        let mut free = alloc::vec![false; n];
        let (mut s, mut free_len) = (self.free, 0u32);
        while s != NIL {
            let i = s as usize;
            if s >= self.high || self.kind(s) != Kind::Free || core::mem::replace(&mut free[i], true) {
                return Err(format!("free list holds slot {s} ({:?})", (i < n).then(|| self.kind(s))));
            }
            free_len += 1;
            s = self.wheel.next_spare(s);
        }
        if free_len != self.free_len {
            return Err(format!("free list holds {free_len} slots, counted {}", self.free_len));
        }
        if self.grace_on {
            if self.grace_ms.len() != n || self.hash_graced.len() < self.hashes.len() {
                return Err("grace columns are shorter than the slots or field lists".into());
            }
        } else if self.graced_keys != 0 || !self.grace_ms.is_empty() {
            return Err("grace is off, yet slots are in grace".into());
        }
        let mut hid_used = alloc::vec![false; self.hashes.len()];
        let (mut plain, mut hashes, mut fields, mut bytes, mut scheduled) = (0u64, 0u64, 0u64, 0u64, 0usize);
        let mut graced_keys = 0u64;
        #[allow(clippy::needless_range_loop)] // one index into six columns
        for i in 0..n {
            let s = i as u32;
            let k = self.kind(i as u32);
            let in_wheel = self.wheel.is_scheduled(s);
            scheduled += usize::from(in_wheel);
            match k {
                Kind::Free | Kind::Reserved if self.graced(i) => {
                    return Err(format!("{k:?} slot {s} is in grace"));
                }
                Kind::Free => {
                    if s < self.high && !free[i] {
                        return Err(format!("free slot {s} is not in the free list"));
                    }
                    if in_wheel || self.wt(i) != 0 || self.parent(s) != NIL || self.times.get(s) != Clocks::EMPTY {
                        return Err(format!(
                            "free slot {s} keeps state: wheel {in_wheel}, weight {}, {:?}",
                            self.wt(i),
                            self.times.get(s)
                        ));
                    }
                    continue;
                }
                Kind::Reserved => {
                    // Blank, as `commit_reserved` takes it to be.
                    if in_wheel || self.wt(i) != 0 || self.parent(s) != NIL {
                        return Err(format!("reserved slot {s} is in the wheel or keeps state"));
                    }
                    continue;
                }
                Kind::Plain => {
                    if self.parent(s) != NIL {
                        return Err(format!("plain slot {s} names a hash family"));
                    }
                    plain += 1;
                    bytes += u64::from(self.wt(i));
                    graced_keys += u64::from(self.graced(i));
                }
                Kind::Field => {
                    fields += 1;
                    bytes += u64::from(self.wt(i));
                    let h = self.family[i] as usize;
                    if h >= n || self.kind(h as u32) != Kind::Hash {
                        return Err(format!("field {s} has no hash"));
                    }
                }
                Kind::Hash => {
                    hashes += 1;
                    let hid = self.family[i] as usize;
                    if hid >= self.hashes.len() || core::mem::replace(&mut hid_used[hid], true) {
                        return Err(format!("hash {s} has a bad or shared field list {hid}"));
                    }
                    let list = self.hashes[hid];
                    let (mut f, mut count, mut w, mut prev) = (list.head, 0u32, 0u64, NIL);
                    let mut graced_fields = 0u32;
                    while f != NIL {
                        let j = f as usize;
                        if self.kind(j as u32) != Kind::Field
                            || self.family[j] != s
                            || self.policy.links().prev(f) != prev
                        {
                            return Err(format!("hash {s} lists slot {f}, not its field"));
                        }
                        count += 1;
                        if count > list.len {
                            return Err(format!("hash {s}: field list longer than {}", list.len));
                        }
                        w += u64::from(self.wt(j));
                        graced_fields += u32::from(self.graced(j));
                        prev = f;
                        f = self.policy.links().next(f);
                    }
                    if count != list.len || list.tail != prev || count == 0 {
                        return Err(format!("hash {s}: {count} fields linked, length {}", list.len));
                    }
                    if w != u64::from(self.wt(i)) {
                        return Err(format!("hash {s}: weight {} but fields weigh {w}", self.wt(i)));
                    }
                    if self.grace_on
                        && (graced_fields != self.hash_graced[hid] || self.graced(i) != (graced_fields == count))
                    {
                        return Err(format!(
                            "hash {s}: {graced_fields} of {count} fields in grace, counted {}, hash in grace: {}",
                            self.hash_graced[hid],
                            self.graced(i)
                        ));
                    }
                    graced_keys += u64::from(self.graced(i));
                }
            }
            if k != Kind::Hash && self.graced(i) && self.deadline_of(i as u32) > self.now() {
                return Err(format!("{k:?} slot {s} is in grace before its deadline"));
            }
            // A slot in grace waits in the wheel for its grace to end, if ever.
            let due = match k {
                Kind::Plain | Kind::Field if self.graced(i) => self.deadline_of(i as u32) + self.grace_ms[i].abs(),
                _ => self.deadline_of(i as u32),
            };
            if due != NEVER && !in_wheel {
                return Err(format!("{k:?} slot {s} is due at {due} but is not in the wheel"));
            }
            if self.deadline_of(i as u32) == NEVER && in_wheel {
                return Err(format!("{k:?} slot {s} has no deadline but is in the wheel"));
            }
        }
        let fields_listed: u64 =
            self.hashes.iter().enumerate().filter(|(h, _)| hid_used[*h]).map(|(_, l)| u64::from(l.len)).sum();
        if fields_listed != fields {
            return Err(format!("{fields} field slots, {fields_listed} listed by hashes"));
        }
        for &hid in &self.hash_free {
            let h = hid as usize;
            if h >= self.hashes.len() || hid_used[h] || !self.hashes[h].is_empty() {
                return Err(format!("free field list {hid} is in use"));
            }
        }
        if (self.entries, self.keys, self.bytes) != (plain + fields, plain + hashes, bytes) {
            return Err(format!(
                "counts (entries, keys, bytes) = {:?}, recounted {:?}",
                (self.entries, self.keys, self.bytes),
                (plain + fields, plain + hashes, bytes)
            ));
        }
        if graced_keys != self.graced_keys {
            return Err(format!("{} keys counted in grace, recounted {graced_keys}", self.graced_keys));
        }
        if self.wheel.len() != scheduled {
            return Err(format!("wheel length {} but {scheduled} slots scheduled", self.wheel.len()));
        }
        let linked = self.wheel.check(n)?;
        if let Some(s) = (0..n).find(|&s| linked[s] != self.wheel.is_scheduled(s as u32)) {
            return Err(format!("slot {s}: scheduled {}, linked {}", self.wheel.is_scheduled(s as u32), linked[s]));
        }
        if !self.policy.evicts && (self.max_entries != u64::MAX || self.max_bytes != u64::MAX) {
            return Err("the policy's bound disagrees with the engine's".into());
        }
        let (queued, mut linked) = self.policy.check()?;
        linked.sort_unstable();
        let mut keyed: Vec<u32> = (0..n as u32).filter(|&s| matches!(self.kind(s), Kind::Plain | Kind::Hash)).collect();
        keyed.sort_unstable();
        if queued != keyed {
            return Err(format!("eviction queues hold {queued:?}, keys are {keyed:?}"));
        }
        // Each key the wheel does not hold is linked in a queue (without a
        // bound, only those are: `Policy::park`), so that `clear` finds it.
        if let Some(s) = keyed.iter().find(|&&s| !self.wheel.is_scheduled(s) && linked.binary_search(&s).is_err()) {
            return Err(format!("key {s} is neither scheduled nor linked in a queue"));
        }
        if self.entries > self.max_entries || self.bytes > self.max_bytes {
            return Err(format!("over the bounds: {} entries, {} bytes", self.entries, self.bytes));
        }
        Ok(())
    }
}
