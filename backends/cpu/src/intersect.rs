//! The columns two sorted rows without repeats have in common: their
//! number, for dot products that read no values (`plus_pair`, `any_pair`:
//! triangle counting), or their positions in both rows, in increasing
//! column order, for the others. On x86-64, blocks of four columns of each
//! row are compared all against all with SSE2 (part of every x86-64
//! processor), and the block with the smaller last column moves on: the
//! "shuffling" intersection of Schlegel, Willhalm and Lehner, "Fast
//! Sorted-Set Intersection using SIMD Instructions" (ADMS 2011), §3. What
//! is left after the last whole blocks, and every row elsewhere, is merged
//! one column at a time.

/// How many columns sorted `a` and `b` (each without repeats) share.
pub(crate) fn common(a: &[u32], b: &[u32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        let mut n = 0;
        let (i, j) = blocks::<false>(a, b, |_, _, hits| n += hits.count_ones() as usize);
        n + merged(&a[i..], &b[j..])
    }
    #[cfg(not(target_arch = "x86_64"))]
    merged(a, b)
}

/// `f(p, q)` for each column `a[p] == b[q]` of sorted `a` and `b` (each
/// without repeats), in increasing column order.
pub(crate) fn each_common(a: &[u32], b: &[u32], mut f: impl FnMut(usize, usize)) {
    #[cfg(target_arch = "x86_64")]
    let (i, j) = blocks::<true>(a, b, |i, j, hits| {
        // Bit 4r + l: a's lane l met b's lane (l + r) mod 4. A column of a
        // meets at most one of b's, so each lane has one bit at most.
        let mut lanes = (hits | hits >> 4 | hits >> 8 | hits >> 12) & 0xf;
        while lanes != 0 {
            let l = lanes.trailing_zeros();
            let r = (0..4).find(|r| hits >> (4 * r + l) & 1 == 1).unwrap_or(0);
            f(i + l as usize, j + ((l + r) % 4) as usize);
            lanes &= lanes - 1;
        }
    });
    #[cfg(not(target_arch = "x86_64"))]
    let (i, j) = (0, 0);
    let (mut p, mut q) = (i, j);
    while p < a.len() && q < b.len() {
        let (x, y) = (a[p], b[q]);
        if x == y {
            f(p, q);
        }
        p += usize::from(x <= y);
        q += usize::from(y <= x);
    }
}

/// Compares whole blocks of four of `a` and `b` from their starts, calling
/// `found(i, j, hits)` for each pair of blocks compared (at `a[i..]`,
/// `b[j..]`), in increasing column order; returns where each row's blocks
/// stopped. With `POSITIONS`, bit `4r + l` of `hits` says lane `l` of `a`'s
/// block equals lane `(l + r) mod 4` of `b`'s; without, bit `l` says lane
/// `l` of `a`'s block equals one of `b`'s (one mask, not four).
#[cfg(target_arch = "x86_64")]
fn blocks<const POSITIONS: bool>(
    a: &[u32],
    b: &[u32],
    mut found: impl FnMut(usize, usize, u32),
) -> (usize, usize) {
    use std::arch::x86_64::{
        __m128i, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128, _mm_movemask_ps, _mm_or_si128,
        _mm_shuffle_epi32,
    };
    let (mut i, mut j) = (0usize, 0usize);
    while i + 4 <= a.len() && j + 4 <= b.len() {
        // SAFETY: SSE2 is part of x86-64; both loads read four u32 inside
        // their slices (checked above) and need no alignment.
        let hits = unsafe {
            let va = _mm_loadu_si128(a.as_ptr().add(i).cast::<__m128i>());
            let vb = _mm_loadu_si128(b.as_ptr().add(j).cast::<__m128i>());
            // b's block rotated by one, two and three lanes.
            let r1 = _mm_shuffle_epi32::<0b00_11_10_01>(vb);
            let r2 = _mm_shuffle_epi32::<0b01_00_11_10>(vb);
            let r3 = _mm_shuffle_epi32::<0b10_01_00_11>(vb);
            let (e0, e1) = (_mm_cmpeq_epi32(va, vb), _mm_cmpeq_epi32(va, r1));
            let (e2, e3) = (_mm_cmpeq_epi32(va, r2), _mm_cmpeq_epi32(va, r3));
            let m = |e| _mm_movemask_ps(_mm_castsi128_ps(e)) as u32;
            if POSITIONS {
                m(e0) | m(e1) << 4 | m(e2) << 8 | m(e3) << 12
            } else {
                m(_mm_or_si128(_mm_or_si128(e0, e1), _mm_or_si128(e2, e3)))
            }
        };
        // Called for every pair, matches or not: counting stays free of
        // branches on the data.
        found(i, j, hits);
        let (last_a, last_b) = (a[i + 3], b[j + 3]);
        i += 4 * usize::from(last_a <= last_b);
        j += 4 * usize::from(last_b <= last_a);
    }
    (i, j)
}

/// How many columns sorted `a` and `b` share, one column at a time.
fn merged(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        n += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_count_what_a_merge_counts() {
        let mut state = 7u64;
        let mut next = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % k) as u32
        };
        for trial in 0..2000 {
            let range = [8, 40, 300, 5000][trial % 4];
            let mut a: Vec<u32> = (0..next(60)).map(|_| next(range)).collect();
            let mut b: Vec<u32> = (0..next(60)).map(|_| next(range)).collect();
            a.sort_unstable();
            a.dedup();
            b.sort_unstable();
            b.dedup();
            let want = a.iter().filter(|x| b.binary_search(x).is_ok()).count();
            assert_eq!(common(&a, &b), want, "{a:?} {b:?}");
            assert_eq!(merged(&a, &b), want);
            let mut pairs = Vec::new();
            each_common(&a, &b, |p, q| pairs.push((p, q)));
            let expected: Vec<(usize, usize)> = a
                .iter()
                .enumerate()
                .filter_map(|(p, x)| b.binary_search(x).ok().map(|q| (p, q)))
                .collect();
            assert_eq!(pairs, expected, "{a:?} {b:?}");
        }
        // Equal blocks, a block ending where the other starts, empty rows.
        let a: Vec<u32> = (0..16).collect();
        assert_eq!(common(&a, &a), 16);
        assert_eq!(common(&a[..4], &a[3..8]), 1);
        assert_eq!(common(&[], &a), 0);
    }
}
