//! Passes over every row done on all cores: the split of rows into chunks
//! of about equal work, C's row counts and their prefix sum. A hypersparse
//! matrix has far more rows than entries, so a serial pass over its rows
//! would bound the whole product on many cores.

use rayon::prelude::*;
use spgemm_core::error::try_with_capacity;
use spgemm_core::Result;
use std::ops::Range;

/// Rows a block of the parallel passes takes.
const BLOCK: usize = 1 << 14;

/// Splits rows into at most `parts` contiguous ranges of about equal work,
/// where a row's work is its products plus one (so empty rows count too):
/// row `i` ends a range where the running work first reaches a multiple of
/// `⌈total / parts⌉`, and the last row ends the last range.
pub(crate) fn split_by_work(nprod: &[u64], parts: usize) -> Vec<Range<usize>> {
    let n = nprod.len();
    let work = |b: &[u64]| b.iter().map(|&p| p + 1).sum::<u64>();
    let sums: Vec<u64> = nprod.par_chunks(BLOCK).map(work).collect();
    let total: u64 = sums.iter().sum();
    let step = total.div_ceil(parts.max(1) as u64).max(1);
    let mut before = Vec::with_capacity(sums.len());
    let mut acc = 0u64;
    for s in &sums {
        before.push(acc);
        acc += s;
    }
    let ends: Vec<Vec<usize>> = nprod
        .par_chunks(BLOCK)
        .zip(before)
        .enumerate()
        .map(|(k, (block, mut acc))| {
            let mut ends = Vec::new();
            // The next multiple of `step` past `acc`: a comparison per row,
            // a division per range.
            let mut bound = (acc / step + 1) * step;
            for (j, &p) in block.iter().enumerate() {
                acc += p + 1;
                let i = k * BLOCK + j;
                if acc >= bound || i + 1 == n {
                    ends.push(i + 1);
                    bound = (acc / step + 1) * step;
                }
            }
            ends
        })
        .collect();
    let mut start = 0;
    ends.into_iter()
        .flatten()
        .map(|end| {
            let r = start..end;
            start = end;
            r
        })
        .collect()
}

/// A vector of `len` zeros written on all cores, or
/// [`spgemm_core::Error::HostOutOfMemory`].
pub(crate) fn zeros(len: usize, what: &'static str) -> Result<Vec<usize>> {
    let mut v = try_with_capacity(len, what)?;
    v.par_extend(rayon::iter::repeat_n(0usize, len));
    Ok(v)
}

/// The inclusive prefix sum of `v` in place, on all cores: blocks are
/// summed in parallel, their totals scanned, then each block adds its
/// offset while it scans.
pub(crate) fn prefix_sum(v: &mut [usize]) {
    let sums: Vec<usize> = v.par_chunks(BLOCK).map(|b| b.iter().sum()).collect();
    let mut before = Vec::with_capacity(sums.len());
    let mut acc = 0usize;
    for s in &sums {
        before.push(acc);
        acc += s;
    }
    v.par_chunks_mut(BLOCK)
        .zip(before)
        .for_each(|(block, mut acc)| {
            for x in block {
                acc += *x;
                *x = acc;
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serial rule `split_by_work` follows, as the oracle.
    fn serial_split(nprod: &[u64], parts: usize) -> Vec<Range<usize>> {
        let n = nprod.len();
        let total: u64 = nprod.iter().sum::<u64>() + n as u64;
        let step = total.div_ceil(parts.max(1) as u64).max(1);
        let (mut out, mut start, mut acc) = (Vec::new(), 0, 0u64);
        for (i, &p) in nprod.iter().enumerate() {
            let next = acc + p + 1;
            if next / step > acc / step || i + 1 == n {
                out.push(start..i + 1);
                start = i + 1;
            }
            acc = next;
        }
        out
    }

    #[test]
    fn split_covers_all_rows_by_work() {
        let r = split_by_work(&[100, 0, 0, 0, 100, 0], 2);
        assert_eq!(r, vec![0..3, 3..6]); // work 103 + 103 of 206
        assert!(split_by_work(&[], 4).is_empty());
        let r = split_by_work(&[1; 10], 3);
        assert_eq!(r.first().unwrap().start, 0);
        assert_eq!(r.last().unwrap().end, 10);
        assert!(r.windows(2).all(|w| w[0].end == w[1].start));
    }

    #[test]
    fn parallel_passes_equal_serial_ones_across_blocks() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |k: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % k
        };
        for n in [1, 7, BLOCK - 1, BLOCK, BLOCK + 1, 3 * BLOCK + 5] {
            // Mostly empty rows, some heavy ones.
            let nprod: Vec<u64> = (0..n)
                .map(|_| if next(4) == 0 { next(10_000) } else { 0 })
                .collect();
            for parts in [1, 2, 3, 64, 10_000] {
                assert_eq!(split_by_work(&nprod, parts), serial_split(&nprod, parts));
            }
            let mut v: Vec<usize> = nprod.iter().map(|&p| p as usize).collect();
            let want: Vec<usize> = v
                .iter()
                .scan(0, |s, &x| {
                    *s += x;
                    Some(*s)
                })
                .collect();
            prefix_sum(&mut v);
            assert_eq!(v, want);
            assert_eq!(zeros(n, "test").unwrap(), vec![0; n]);
        }
    }
}
