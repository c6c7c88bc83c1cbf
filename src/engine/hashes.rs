//! A hash's fields: iteration, tidying, counting.

use super::*;

#[cfg(test)]
std::thread_local! {
    /// Steps of [`Engine::fields`] on this thread: unit tests count walks
    /// over a hash's fields with it instead of timing them.
    pub(crate) static FIELD_STEPS: core::cell::Cell<u64> = const { core::cell::Cell::new(0) };
}

impl Engine {
    /// A hash's live-or-not fields, in no particular order.
    pub fn fields(&self, h: u32) -> impl Iterator<Item = u32> + '_ {
        let hid = self.family[h as usize] as usize;
        let mut s = self.hashes[hid].head;
        core::iter::from_fn(move || {
            if s == NIL {
                return None;
            }
            #[cfg(test)]
            FIELD_STEPS.with(|n| n.set(n.get() + 1));
            let cur = s;
            s = self.policy.links().next(s);
            Some(cur)
        })
    }

    /// Removes the expired fields at the head of a live hash's field list,
    /// up to its first live one. `is_live` stops at the first live field, so
    /// after this every liveness check of the hash is O(1) until that field
    /// expires; the fields passed over are removed, so the scan is paid for
    /// by removals, never repeated (issue 13: 10k `hget`s on a hash with
    /// unswept dead fields cost O(fields) each).
    pub fn tidy_hash(&mut self, h: u32) {
        debug_assert_eq!(self.kind(h), Kind::Hash);
        if self.is_live(h) {
            self.drop_dead_fields(h, true);
        }
    }

    /// Removes a live hash's expired fields, from the head: all of them, or
    /// (`leading`) up to the first live one. The hash keeps a live field.
    #[inline(never)] // two callers; `remove` inlined in each cost wasm size
    pub(super) fn drop_dead_fields(&mut self, h: u32, leading: bool) {
        let hid = self.family[h as usize] as usize;
        let mut f = self.hashes[hid].head;
        while f != NIL && self.step_ok() {
            let next = self.policy.links().next(f);
            if self.deadline_of(f) > self.now() {
                if leading {
                    return;
                }
            } else {
                debug_assert!(self.hashes[hid].len > 1, "a live hash keeps a live field");
                self.remove(f, Reason::Expired);
            }
            f = next;
        }
    }

    pub fn field_count(&self, h: u32) -> u32 {
        self.hashes[self.family[h as usize] as usize].len
    }
}
