//! The allocator of the npm package's wasm: segregated free lists over a
//! bump pointer. dlmalloc (std's default on wasm32) was 8 KB of an 70 KB
//! module; this is about 1 KB.
//!
//! Block sizes are size classes, two per octave (8, 16, 24, 32, 48, 64, 96,
//! 128, ...), so a `Vec` of 24-byte items doubling its capacity fits its
//! class exactly, and no request wastes more than a third. A freed block goes
//! on its class's list and is handed out again for that class; no headers
//! (`dealloc` gets the size back in its `Layout`). The block at the top of
//! the heap grows in place, which is how the engine's columns grow. Memory
//! the module cannot grow becomes a null return, never a trap.
//!
//! Blocks are 8-aligned; the rare request for more alignment is served from
//! the bump pointer and never reused (nothing in this crate asks for one).

/// The memory a heap carves up: where it starts, and how to get more.
pub(crate) trait Memory {
    /// The first free byte and the end of the memory, at first use.
    fn init(&mut self) -> (usize, usize);
    /// Adds at least `bytes` bytes of memory; returns where the new region
    /// starts and ends, or `None` when the memory cannot grow.
    fn grow(&mut self, bytes: usize) -> Option<(usize, usize)>;
}

/// Classes up to 2^(usize::BITS - 2) bytes, two per power of two.
const CLASSES: usize = 2 * usize::BITS as usize;
const ALIGN: usize = 8;

pub(crate) struct Heap<M> {
    mem: M,
    /// The next free byte; 0 until the first allocation.
    top: usize,
    end: usize,
    /// Heads of the free lists (0: empty); a free block's first word links
    /// the next.
    free: [usize; CLASSES],
}

/// The class of a request: its index and its block size, or `None` when no
/// block could be that big.
fn class(size: usize) -> Option<(usize, usize)> {
    let s = size.max(ALIGN);
    if s > 1 << (usize::BITS - 2) {
        return None;
    }
    let bits = (usize::BITS - (s - 1).leading_zeros()) as usize;
    let pow = 1 << bits;
    // 3/4 of a power of two stays a multiple of 8 from 32 on.
    if pow >= 32 && s <= 3 * (pow >> 2) {
        Some((2 * bits - 1, 3 * (pow >> 2)))
    } else {
        Some((2 * bits, pow))
    }
}

impl<M: Memory> Heap<M> {
    pub(crate) const fn new(mem: M) -> Self {
        Heap { mem, top: 0, end: 0, free: [0; CLASSES] }
    }

    /// Moves the top up to `to`, growing the memory if needed.
    fn reach(&mut self, to: usize) -> bool {
        if to <= self.end {
            return true;
        }
        match self.mem.grow(to - self.end) {
            // Contiguous: the usual case.
            Some((start, end)) if start == self.end => {
                self.end = end;
                true
            }
            // Someone else grew the memory in between: the gap is lost, and
            // the block must come from the new region.
            Some(_) | None => false,
        }
    }

    /// Takes `size` bytes from the top, aligned to `align`.
    fn bump(&mut self, size: usize, align: usize) -> *mut u8 {
        if self.top == 0 {
            (self.top, self.end) = self.mem.init();
        }
        let at = (self.top + align - 1) & !(align - 1);
        match at.checked_add(size) {
            Some(to) if self.reach(to) => {
                self.top = to;
                at as *mut u8
            }
            _ => {
                // Not contiguous (or no memory): try a fresh region once.
                match self.mem.grow(size + align) {
                    Some((start, end)) => {
                        let at = (start + align - 1) & !(align - 1);
                        self.top = at + size;
                        self.end = end;
                        at as *mut u8
                    }
                    None => core::ptr::null_mut(),
                }
            }
        }
    }

    pub(crate) fn alloc(&mut self, size: usize, align: usize) -> *mut u8 {
        if align > ALIGN {
            return self.bump(size, align);
        }
        let Some((i, bytes)) = class(size) else { return core::ptr::null_mut() };
        let head = self.free[i];
        if head != 0 {
            // SAFETY: `head` is a free block of this class (see `dealloc`),
            // at least 8 bytes, 8-aligned: its first word is the link.
            self.free[i] = unsafe { *(head as *const usize) };
            return head as *mut u8;
        }
        self.bump(bytes, ALIGN)
    }

    /// # Safety
    /// `p` came from `alloc` (or `realloc`) of this heap with this `size`
    /// and `align`, and is not used again.
    pub(crate) unsafe fn dealloc(&mut self, p: *mut u8, size: usize, align: usize) {
        if align > ALIGN {
            return;
        }
        if let Some((i, _)) = class(size) {
            // SAFETY: the block is ours, 8-aligned and at least 8 bytes.
            unsafe { *(p as *mut usize) = self.free[i] };
            self.free[i] = p as usize;
        }
    }

    /// # Safety
    /// As `dealloc`; on success the old block is gone, on null it is intact.
    pub(crate) unsafe fn realloc(&mut self, p: *mut u8, size: usize, align: usize, new: usize) -> *mut u8 {
        if align <= ALIGN {
            if let (Some((i, old)), Some((j, bytes))) = (class(size), class(new)) {
                if i == j {
                    return p;
                }
                // The last block grows (or shrinks) where it is.
                if p as usize + old == self.top && self.reach(p as usize + bytes) {
                    self.top = p as usize + bytes;
                    return p;
                }
            }
        }
        let q = self.alloc(new, align);
        if !q.is_null() {
            // SAFETY: distinct live blocks, each at least `min` bytes.
            unsafe {
                core::ptr::copy_nonoverlapping(p, q, size.min(new));
                self.dealloc(p, size, align);
            }
        }
        q
    }
}

#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
pub(crate) use wasm::Global;

#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
mod wasm {
    use super::{Heap, Memory};
    use core::alloc::{GlobalAlloc, Layout};
    use core::arch::wasm32::{memory_grow, memory_size};
    use core::cell::UnsafeCell;

    const PAGE: usize = 65536;

    pub(crate) struct Wasm;

    extern "C" {
        /// Where the linker put the end of static data and stack.
        static __heap_base: u8;
    }

    impl Memory for Wasm {
        fn init(&mut self) -> (usize, usize) {
            (core::ptr::addr_of!(__heap_base) as usize, memory_size(0) * PAGE)
        }

        fn grow(&mut self, bytes: usize) -> Option<(usize, usize)> {
            let pages = bytes.div_ceil(PAGE);
            let old = memory_grow(0, pages);
            (old != usize::MAX).then(|| (old * PAGE, (old + pages) * PAGE))
        }
    }

    /// The global allocator: one heap, no locking (the module has one
    /// thread; an allocator is never re-entered).
    pub(crate) struct Global(UnsafeCell<Heap<Wasm>>);

    // SAFETY: wasm32 without the atomics feature has one thread.
    #[cfg(not(target_feature = "atomics"))]
    unsafe impl Sync for Global {}

    impl Global {
        pub(crate) const fn new() -> Self {
            Global(UnsafeCell::new(Heap::new(Wasm)))
        }
    }

    unsafe impl GlobalAlloc for Global {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            // SAFETY: one thread, and no call below re-enters the allocator.
            unsafe { (*self.0.get()).alloc(l.size(), l.align()) }
        }

        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            unsafe { (*self.0.get()).dealloc(p, l.size(), l.align()) }
        }

        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            unsafe { (*self.0.get()).realloc(p, l.size(), l.align(), new) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A memory of `limit` bytes in 64 KB pages, inside one buffer.
    struct Arena {
        buf: Vec<u64>,
        used: usize,
        limit: usize,
    }

    impl Arena {
        fn base(&self) -> usize {
            self.buf.as_ptr() as usize
        }
    }

    impl Memory for Arena {
        fn init(&mut self) -> (usize, usize) {
            // Start unaligned, as `__heap_base` may be.
            self.used = 65536;
            (self.base() + 4, self.base() + self.used)
        }

        fn grow(&mut self, bytes: usize) -> Option<(usize, usize)> {
            let pages = bytes.div_ceil(65536);
            if self.used + pages * 65536 > self.limit {
                return None;
            }
            let start = self.base() + self.used;
            self.used += pages * 65536;
            Some((start, self.base() + self.used))
        }
    }

    fn heap(limit: usize) -> Heap<Arena> {
        Heap::new(Arena { buf: vec![0; limit / 8], used: 0, limit })
    }

    #[test]
    fn classes_are_two_per_octave_and_fit() {
        let sizes: Vec<usize> = [1, 8, 9, 16, 17, 24, 25, 32, 33, 48, 49, 64, 96, 97, 3 << 20, (3 << 20) + 1]
            .iter()
            .map(|&s| class(s).unwrap().1)
            .collect();
        assert_eq!(sizes, [8, 8, 16, 16, 24, 24, 32, 32, 48, 48, 64, 64, 96, 128, 3 << 20, 4 << 20]);
        for s in 1..5000 {
            let (i, b) = class(s).unwrap();
            assert!(b >= s && b % 8 == 0 && b < s.max(8) * 3 / 2 + 8, "size {s}: block {b}");
            assert_eq!(class(b).unwrap(), (i, b), "a block's own size is its class");
        }
        assert_eq!(class(usize::MAX), None);
    }

    #[test]
    fn blocks_never_overlap_and_keep_their_bytes() {
        let mut h = heap(8 << 20);
        let mut live: Vec<(*mut u8, usize, u8)> = vec![];
        let mut seed = 7u32;
        for n in 0..4000u32 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let size = 1 + (seed >> 8) as usize % if n % 50 == 0 { 40_000 } else { 300 };
            if seed % 3 == 0 && !live.is_empty() {
                let (p, s, tag) = live.swap_remove(seed as usize % live.len());
                assert!((0..s).all(|k| unsafe { *p.add(k) } == tag), "block kept its bytes");
                unsafe { h.dealloc(p, s, 1) };
            } else if seed % 3 == 1 && !live.is_empty() {
                let k = seed as usize % live.len();
                let (p, s, tag) = live[k];
                let q = unsafe { h.realloc(p, s, 1, size) };
                assert!(!q.is_null());
                assert!((0..s.min(size)).all(|k| unsafe { *q.add(k) } == tag), "realloc kept the bytes");
                unsafe { q.write_bytes(tag, size) };
                live[k] = (q, size, tag);
            } else {
                let p = h.alloc(size, 1);
                assert!(!p.is_null() && p as usize % 8 == 0);
                let tag = n as u8;
                unsafe { p.write_bytes(tag, size) };
                live.push((p, size, tag));
            }
            for &(p, s, tag) in &live {
                assert_eq!(unsafe { *p }, tag, "no other block wrote over this one");
                assert_eq!(unsafe { *p.add(s - 1) }, tag);
            }
        }
    }

    #[test]
    fn freed_blocks_are_reused_and_the_top_block_grows_in_place() {
        let mut h = heap(1 << 20);
        let a = h.alloc(100, 8);
        let b = h.alloc(100, 8);
        unsafe { h.dealloc(a, 100, 8) };
        assert_eq!(h.alloc(120, 4), a, "same class (128): the freed block comes back");
        // `b` is the top block: doubling it stays in place.
        let b2 = unsafe { h.realloc(b, 100, 8, 300) };
        assert_eq!(b2, b);
        assert_eq!(h.top, b as usize + 384);
        // Not the top block: moves, and its old block is reused.
        let c = h.alloc(8, 8);
        let b3 = unsafe { h.realloc(b2, 300, 8, 1000) };
        assert_ne!(b3, b2);
        assert_eq!(h.alloc(300, 8), b2);
        assert!(c < b3);
    }

    #[test]
    fn out_of_memory_is_null_and_leaves_blocks_intact() {
        let mut h = heap(256 << 10);
        let a = h.alloc(1000, 8);
        unsafe { a.write_bytes(9, 1000) };
        assert!(h.alloc(300 << 10, 8).is_null());
        assert!(unsafe { h.realloc(a, 1000, 8, 300 << 10) }.is_null());
        assert!((0..1000).all(|k| unsafe { *a.add(k) } == 9));
        assert!(h.alloc(usize::MAX - 64, 8).is_null());
        assert!(h.alloc(1000, 8) != a, "the heap still works");
        let big = h.alloc(24, 64);
        assert!(!big.is_null() && big as usize % 64 == 0);
    }
}
