//! Content checks the encoder and the decoder share.

use super::*;

/// A property name JS orders first: an array index, the canonical decimal
/// form of an integer below 2^32 - 1.
pub(super) fn array_index(u: &[u16]) -> Option<u32> {
    if u.is_empty() || u.len() > 10 || (u.len() > 1 && u[0] == u16::from(b'0')) {
        return None;
    }
    let mut v = 0u64;
    for &c in u {
        let d = c.wrapping_sub(u16::from(b'0'));
        if d > 9 {
            return None;
        }
        v = v * 10 + u64::from(d);
    }
    (v < u64::from(u32::MAX)).then_some(v as u32)
}

/// Whether two of `items` are equal. Sorts (heapsort: O(n log n) whatever
/// the input, so crafted keys cannot slow it down the way they can a hash
/// table; and, while the package's wasm linked this decoder, a few hundred
/// bytes of wasm where `sort_unstable` cost 20 KB).
pub(super) fn has_dup(mut v: Vec<&[u16]>) -> bool {
    fn sift(v: &mut [&[u16]], mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && less(v[child], v[child + 1]) {
                child += 1;
            }
            if !less(v[root], v[child]) {
                return;
            }
            v.swap(root, child);
            root = child;
        }
    }
    let n = v.len();
    for i in (0..n / 2).rev() {
        sift(&mut v, i, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift(&mut v, 0, end);
    }
    // Sorted ascending: two neighbours are equal unless the first is less.
    v.windows(2).any(|w| !less(w[0], w[1]))
}

/// One out-of-line comparison for the three the sort and the scan make
/// (each inlined its own lexicographic loop).
#[inline(never)]
fn less(a: &[u16], b: &[u16]) -> bool {
    a < b
}

/// Whether the code-unit ranges `r` of `units` hold two equal strings.
pub(super) fn dup_ranges(units: &[u16], r: &[(usize, usize)]) -> bool {
    // A loop, not `collect`: `push` is already linked, `collect`'s
    // specialization would be one more copy of the growth code.
    let mut v = Vec::with_capacity(r.len());
    for &(a, b) in r {
        v.push(&units[a..b]);
    }
    has_dup(v)
}
