//! Splitting the rows of A: into chunks that fit a device-memory budget
//! (hybrid CPU-GPU pipelining, Wu 2015, §3.3) or into parts of equal work
//! for several devices; and joining the row blocks of C again.

use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::error::{try_with_capacity, try_zeroed, Error, Result};
use crate::scalar::Scalar;
use std::ops::Range;

/// Device bytes a row of A costs in a chunk: its entries of A, an upper
/// bound on its entries of C (`min(nprod, ncols)`), its row offsets in A
/// and C and its slots of binning metadata.
pub(super) fn row_bytes(a_nnz: usize, nprod: u64, ncols: usize, value_bytes: usize) -> u128 {
    let entry = 4 + value_bytes as u128;
    a_nnz as u128 * entry + nprod.min(ncols as u64) as u128 * entry + 8 * 4
}

/// Device bytes of a whole matrix: `nrows + 1` 64-bit offsets and `nnz`
/// entries.
pub(super) fn matrix_bytes<T: Scalar>(m: CsrView<'_, T>) -> u128 {
    (m.nrows() as u128 + 1) * 8 + m.nnz() as u128 * (4 + std::mem::size_of::<T>() as u128)
}

/// The device bytes of `budget` left beside B, which stays on the device
/// while A's rows go through in chunks.
///
/// # Errors
/// [`Error::TooLarge`] when B takes more than half the budget.
pub(super) fn beside_b<T: Scalar>(b: CsrView<'_, T>, budget: usize) -> Result<u128> {
    let b_bytes = matrix_bytes(b);
    if 2 * b_bytes > budget as u128 {
        return Err(Error::TooLarge {
            what: "device bytes of B (at most half the memory budget)",
            value: b_bytes,
            limit: budget as u128 / 2,
        });
    }
    Ok(budget as u128 - b_bytes)
}

/// Splits rows into contiguous chunks of at most `per_chunk` device bytes
/// each (see `row_bytes`).
///
/// # Errors
/// [`Error::TooLarge`] naming the row when a single row does not fit.
pub fn split_rows(
    a_row_nnz: &[usize],
    nprod: &[u64],
    ncols: usize,
    value_bytes: usize,
    per_chunk: u128,
) -> Result<Vec<Range<usize>>> {
    let mut chunks = Vec::new();
    let (mut start, mut used) = (0usize, 0u128);
    for (i, (&nz, &np)) in a_row_nnz.iter().zip(nprod).enumerate() {
        let cost = row_bytes(nz, np, ncols, value_bytes);
        if cost > per_chunk {
            return Err(Error::TooLarge {
                what: "device bytes of one row of the product (row of A in the chunk budget)",
                value: cost,
                limit: per_chunk,
            });
        }
        if used + cost > per_chunk {
            chunks.push(start..i);
            start = i;
            used = 0;
        }
        used += cost;
    }
    if start < a_row_nnz.len() {
        chunks.push(start..a_row_nnz.len());
    }
    Ok(chunks)
}

/// Splits `nprod.len()` rows into `parts` contiguous ranges of about equal
/// work (products plus one per row), for several devices. Every range is
/// returned, some possibly empty.
pub fn split_balanced(nprod: &[u64], parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    let total: u128 = nprod.iter().map(|&p| p as u128 + 1).sum();
    let mut ranges = Vec::with_capacity(parts);
    let (mut start, mut done) = (0usize, 0u128);
    for (i, &p) in nprod.iter().enumerate() {
        // Close the current part once the work so far reaches its share.
        let target = total * (ranges.len() as u128 + 1) / parts as u128;
        if ranges.len() + 1 < parts && done >= target {
            ranges.push(start..i);
            start = i;
        }
        done += p as u128 + 1;
    }
    ranges.push(start..nprod.len());
    while ranges.len() < parts {
        ranges.push(nprod.len()..nprod.len());
    }
    ranges
}

/// Rows `r` of `a` as a matrix of their own.
pub(super) fn rows_of<T: Scalar>(a: CsrView<'_, T>, r: Range<usize>) -> Result<CsrMatrix<T>> {
    let off = a.row_offsets();
    let (p0, p1) = (off[r.start], off[r.end]);
    let mut offsets = try_with_capacity(r.len() + 1, "row offsets of a chunk of A")?;
    offsets.extend(off[r.start..=r.end].iter().map(|&o| o - p0));
    let mut cols = try_with_capacity(p1 - p0, "column indices of a chunk of A")?;
    cols.extend_from_slice(&a.col_indices()[p0..p1]);
    let mut vals = try_with_capacity(p1 - p0, "values of a chunk of A")?;
    vals.extend_from_slice(&a.values()[p0..p1]);
    CsrMatrix::new(r.len(), a.ncols(), offsets, cols, vals)
}

/// The row blocks `parts` (in order, all with `ncols` columns) stacked into
/// one matrix, in host memory.
///
/// # Errors
/// [`Error::HostOutOfMemory`] naming the array that did not fit.
pub(super) fn stack_rows<T: Scalar>(
    parts: Vec<CsrMatrix<T>>,
    ncols: usize,
) -> Result<CsrMatrix<T>> {
    use rayon::prelude::*;
    let nrows: usize = parts.iter().map(|p| p.nrows()).sum();
    let nnz: usize = parts.iter().map(|p| p.nnz()).sum();
    let mut offsets: Vec<usize> = try_zeroed(nrows + 1, "C row offsets")?;
    let mut cols: Vec<u32> = try_zeroed(nnz, "C column indices")?;
    let mut vals: Vec<T> = try_zeroed(nnz, "C values")?;
    // Each part's rows, entries and values go to their own ranges, copied
    // on all cores.
    let (mut o, mut c, mut v) = (&mut offsets[1..], &mut cols[..], &mut vals[..]);
    let mut jobs = Vec::with_capacity(parts.len());
    let mut base = 0usize;
    for p in &parts {
        let (po, ro) = std::mem::take(&mut o).split_at_mut(p.nrows());
        let (pc, rc) = std::mem::take(&mut c).split_at_mut(p.nnz());
        let (pv, rv) = std::mem::take(&mut v).split_at_mut(p.nnz());
        jobs.push((p, base, po, pc, pv));
        (o, c, v) = (ro, rc, rv);
        base += p.nnz();
    }
    jobs.into_par_iter().for_each(|(p, base, po, pc, pv)| {
        po.par_iter_mut()
            .zip(&p.row_offsets()[1..])
            .for_each(|(d, &s)| *d = s + base);
        super::staging::par_copy(
            bytemuck::cast_slice(p.col_indices()),
            super::staging::bytes_of(pc),
        );
        super::staging::par_copy(
            bytemuck::cast_slice(p.values()),
            super::staging::bytes_of(pv),
        );
    });
    CsrMatrix::new(nrows, ncols, offsets, cols, vals)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_all_rows_within_budget() {
        let nnz = [3usize, 0, 5, 2, 2, 7, 1];
        let nprod = [30u64, 0, 50, 20, 20, 70, 10];
        let per = row_bytes(7, 70, 1000, 8) + row_bytes(1, 10, 1000, 8);
        let chunks = split_rows(&nnz, &nprod, 1000, 8, per).unwrap();
        assert_eq!(chunks.first().unwrap().start, 0);
        assert_eq!(chunks.last().unwrap().end, 7);
        assert!(chunks.windows(2).all(|w| w[0].end == w[1].start));
        for c in &chunks {
            let used: u128 = c
                .clone()
                .map(|i| row_bytes(nnz[i], nprod[i], 1000, 8))
                .sum();
            assert!(used <= per, "{c:?}");
        }
        assert!(chunks.len() >= 3);
    }

    #[test]
    fn a_row_larger_than_a_chunk_is_an_error_naming_it() {
        let e = split_rows(&[1, 100], &[5, 100_000], 1 << 20, 8, 10_000).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("row"), "{e}");
    }

    #[test]
    fn balanced_parts_cover_rows_with_similar_work() {
        let nprod: Vec<u64> = (0..1000u64).map(|i| (i * 7919) % 100).collect();
        for parts in 1..5 {
            let r = split_balanced(&nprod, parts);
            assert_eq!(r.len(), parts);
            assert_eq!(r[0].start, 0);
            assert_eq!(r.last().unwrap().end, 1000);
            assert!(r.windows(2).all(|w| w[0].end == w[1].start));
            let work: Vec<u64> = r
                .iter()
                .map(|x| x.clone().map(|i| nprod[i] + 1).sum())
                .collect();
            let (lo, hi) = (work.iter().min().unwrap(), work.iter().max().unwrap());
            assert!(hi - lo <= 2 * 101, "{parts} parts: {work:?}");
        }
    }

    #[test]
    fn balanced_parts_of_few_rows_may_be_empty() {
        let r = split_balanced(&[5, 5], 4);
        assert_eq!(r.len(), 4);
        assert_eq!(r.iter().map(|x| x.len()).sum::<usize>(), 2);
        assert_eq!(split_balanced(&[], 2), vec![0..0, 0..0]);
    }

    #[test]
    fn room_beside_b_is_the_budget_less_b_and_b_past_half_is_refused() {
        let b = crate::generate::uniform::<f64>(10, 8, 3, 1).unwrap();
        let bytes = matrix_bytes(b.view());
        assert_eq!(bytes, 11 * 8 + b.nnz() as u128 * 12);
        assert_eq!(beside_b(b.view(), 1000).unwrap(), 1000 - bytes);
        let err = beside_b(b.view(), 2 * bytes as usize - 1).unwrap_err();
        assert!(
            err.to_string().contains("at most half the memory budget"),
            "{err}"
        );
    }

    #[test]
    fn rows_of_then_stack_rows_is_the_identity() {
        let a = crate::generate::uniform::<f64>(10, 8, 3, 1).unwrap();
        let r = rows_of(a.view(), 3..7).unwrap();
        assert_eq!(r.nrows(), 4);
        for i in 0..4 {
            assert_eq!(r.row(i), a.row(i + 3));
        }
        let parts = [0..3, 3..3, 3..10]
            .into_iter()
            .map(|x| rows_of(a.view(), x).unwrap())
            .collect();
        let s = stack_rows(parts, 8).unwrap();
        assert_eq!(s.row_offsets(), a.row_offsets());
        assert_eq!(s.col_indices(), a.col_indices());
        assert_eq!(s.values(), a.values());
    }
}
