//! Products whose rows all have few products, in one pass over A.
//!
//! When no row of C has more than [`SHORT_ROW`] products (hypersparse
//! matrices, road networks, meshes of low degree), every row is either
//! empty, one row of B scaled, or a few products sorted and merged in a
//! small buffer (`short_rows`). The two-phase product reads each of A's
//! entries' rows of B twice from anywhere in memory, once to count the
//! row and once to fill it; here each chunk of rows computes its rows once
//! into a buffer of its own (as long as the chunk's products: an upper
//! bound of its entries of C), C's row offsets are the prefix sum of the
//! rows' lengths, and the chunks' buffers are copied into C in parallel:
//! one sequential copy of C in place of a second pass of scattered reads
//! (the one-phase method with a per-thread buffer and a final copy of
//! Nagasaka, Matsuoka, Azad and Buluç, "Performance optimization, modeling
//! and analysis of sparse matrix-matrix products on multi-core and
//! many-core processors", Parallel Computing 90, 2019, §4.2).

use crate::accumulator::Ops;
use crate::short_rows::{self, SHORT_ROW};
use crate::{prefetch, rows, Shortcuts};
use rayon::prelude::*;
use spgemm_core::csr::split_rows_mut;
use spgemm_core::error::try_with_capacity;
use spgemm_core::{CsrMatrix, CsrView, Result, Scalar};
use std::ops::Range;

/// Whether every row of the product has at most [`SHORT_ROW`] products
/// (`max_nprod`: the most products of any row).
pub(crate) fn applies(max_nprod: u64) -> bool {
    max_nprod <= SHORT_ROW as u64
}

/// One chunk's rows of C, back to back.
struct Part<T> {
    cols: Vec<u32>,
    vals: Vec<T>,
}

/// `C = A ⊕.⊗ B` for a product whose rows all [`applies`], rows split
/// into `chunks` (`nprod`: products per row of A).
///
/// # Errors
/// [`spgemm_core::Error::HostOutOfMemory`] for a chunk's buffer or C.
pub(crate) fn multiply<T: Scalar, O: Ops<T>>(
    ops: O,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    nprod: &[u64],
    chunks: &[Range<usize>],
    shortcuts: &Shortcuts,
) -> Result<CsrMatrix<T>> {
    let mut offsets = rows::zeros(a.nrows() + 1, "C row offsets")?;
    let mut slices = Vec::with_capacity(chunks.len());
    let mut rest = &mut offsets[1..];
    for r in chunks {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(r.len());
        slices.push(head);
        rest = tail;
    }
    let parts: Vec<Part<T>> = chunks
        .par_iter()
        .zip(slices)
        .map(|(r, lengths)| part(ops, a, b, r.clone(), nprod, lengths, shortcuts))
        .collect::<Result<_>>()?;
    rows::prefix_sum(&mut offsets);
    let nnz = *offsets.last().unwrap_or(&0);
    let mut cols: Vec<u32> = try_with_capacity(nnz, "C column indices")?;
    let mut vals: Vec<T> = try_with_capacity(nnz, "C values")?;
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(chunks.iter().map(|r| offsets[r.end]))
        .collect();
    split_rows_mut(
        &bounds,
        &mut cols.spare_capacity_mut()[..nnz],
        &mut vals.spare_capacity_mut()[..nnz],
    )
    .into_par_iter()
    .zip(parts)
    .for_each(|((c, v), p)| {
        // Each chunk's lengths sum to its part's length (both counted
        // from the same rows below).
        for (d, &s) in c.iter_mut().zip(&p.cols) {
            d.write(s);
        }
        for (d, &s) in v.iter_mut().zip(&p.vals) {
            d.write(s);
        }
    });
    // SAFETY: the chunks' ranges of C cover `0..nnz` and each was written
    // in full: a chunk's range is the sum of its rows' lengths, which is
    // its part's length.
    unsafe {
        cols.set_len(nnz);
        vals.set_len(nnz);
    }
    // SAFETY: offsets are the prefix sum of each row's length, the rows
    // are sorted without repeats (`short_rows`, or one sorted row of B),
    // and every column comes from B's checked column indices.
    Ok(unsafe { CsrMatrix::new_unchecked(a.nrows(), b.ncols(), offsets, cols, vals) })
}

/// The rows `rows` of C into a buffer of their own, each row's length
/// into `lengths`.
fn part<T: Scalar, O: Ops<T>>(
    ops: O,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    rows: Range<usize>,
    nprod: &[u64],
    lengths: &mut [usize],
    shortcuts: &Shortcuts,
) -> Result<Part<T>> {
    let room: u64 = nprod[rows.clone()].iter().sum();
    let room = room as usize;
    let mut cols: Vec<u32> = try_with_capacity(room, "a chunk of C's column indices")?;
    let mut vals: Vec<T> = try_with_capacity(room, "a chunk of C's values")?;
    let aoff = a.row_offsets();
    let end = aoff[rows.end];
    let mut len = 0;
    for (i, out) in rows.zip(lengths) {
        let entries = aoff[i]..aoff[i + 1];
        if entries.is_empty() {
            *out = 0;
            continue;
        }
        if shortcuts.prefetch {
            prefetch::rows_ahead(&a, &b, entries, end, true);
        }
        let (ac, av) = a.row(i);
        let (c, v) = (
            &mut cols.spare_capacity_mut()[len..],
            &mut vals.spare_capacity_mut()[len..],
        );
        let n = if ac.len() == 1 && shortcuts.b_sorted {
            let (bc, bv) = b.row(ac[0] as usize);
            for ((&j, &x), (cj, vj)) in bc.iter().zip(bv).zip(c.iter_mut().zip(v.iter_mut())) {
                cj.write(j);
                vj.write(ops.times(av[0], x));
            }
            bc.len()
        } else {
            short_rows::fill(ops, ac, av, &b, c, v)
        };
        *out = n;
        len += n;
    }
    // SAFETY: rows were written back to back into the spare capacity,
    // `len` entries in all (at most the chunk's products, the capacity).
    unsafe {
        cols.set_len(len);
        vals.set_len(len);
    }
    Ok(Part { cols, vals })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CpuBackend;
    use spgemm_core::semiring::{ProductSpec, Semiring};

    /// A hypersparse `n × n` matrix of about `n / 2` entries in random
    /// places (an LCG from `seed`), row 7 repeating a column when
    /// `repeats`, rows in decreasing order when `unsorted`.
    fn hypersparse(n: usize, seed: u64, repeats: bool, unsorted: bool) -> CsrMatrix<f64> {
        let mut x = seed;
        let mut next = |m: usize| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (x >> 33) as usize % m
        };
        let mut rows: Vec<Vec<u32>> = vec![Vec::new(); n];
        for _ in 0..n / 2 {
            rows[next(n)].push(next(n) as u32);
        }
        if repeats {
            rows[7] = vec![3, 3, 9];
        }
        for r in &mut rows {
            if unsorted {
                r.sort_unstable_by(|p, q| q.cmp(p));
            } else {
                r.sort_unstable();
            }
        }
        let offsets = std::iter::once(0)
            .chain(rows.iter().scan(0, |s, r| {
                *s += r.len();
                Some(*s)
            }))
            .collect();
        let cols: Vec<u32> = rows.concat();
        let vals = (0..cols.len()).map(|k| 0.5 + (k % 13) as f64).collect();
        CsrMatrix::new(n, n, offsets, cols, vals).unwrap()
    }

    #[test]
    fn short_rows_in_one_pass_equal_both_phases_bit_for_bit() {
        for unsorted in [false, true] {
            // Wide enough that B's rows are prefetched.
            let a = hypersparse(1 << 19, 1, true, unsorted);
            let b = hypersparse(1 << 19, 2, unsorted, unsorted);
            let setup = crate::Setup::of(a.view(), b.view()).unwrap();
            assert!(applies(setup.max_nprod) && setup.shortcuts.prefetch);
            assert_eq!(setup.shortcuts.b_sorted, !unsorted);
            for threads in [1, 3] {
                let cpu = CpuBackend::with_threads(threads).unwrap();
                let c = cpu.multiply(&a, &b).unwrap();
                let two_phases = cpu.numeric(&cpu.symbolic(&a, &b).unwrap(), &a, &b).unwrap();
                assert_eq!(c.row_offsets(), two_phases.row_offsets());
                assert_eq!(c.col_indices(), two_phases.col_indices());
                let bits = |m: &CsrMatrix<f64>| -> Vec<u64> {
                    m.values().iter().map(|v| v.to_bits()).collect()
                };
                assert_eq!(bits(&c), bits(&two_phases));
                spgemm_core::verify::check_product(&a, &b, &c)
                    .unwrap()
                    .unwrap();
                let spec = ProductSpec::new().semiring(Semiring::MinPlus);
                let m = cpu.multiply_spec(&a, &b, &spec).unwrap();
                let want =
                    spgemm_core::reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
                assert_eq!(m.row_offsets(), want.row_offsets());
                assert_eq!(m.col_indices(), want.col_indices());
                assert_eq!(m.values(), want.values());
            }
        }
    }

    #[test]
    fn a_row_past_the_short_rows_takes_both_phases() {
        let a = hypersparse(20_000, 1, true, false);
        let b = hypersparse(20_000, 2, false, false);
        let setup = crate::Setup::of(a.view(), b.view()).unwrap();
        let longest = setup.max_nprod;
        // One row of A selecting rows of B until it has SHORT_ROW + 1
        // products or more.
        let (mut selected, mut products) = (Vec::new(), 0);
        for k in 0..b.nrows() {
            if products > SHORT_ROW {
                break;
            }
            products += b.row(k).0.len();
            selected.push(k as u32);
        }
        let long = CsrMatrix::new(
            1,
            b.nrows(),
            vec![0, selected.len()],
            selected.clone(),
            vec![1.0; selected.len()],
        )
        .unwrap();
        let setup = crate::Setup::of(long.view(), b.view()).unwrap();
        assert!(longest <= SHORT_ROW as u64 && !applies(setup.max_nprod));
        let c = CpuBackend::new().multiply(&long, &b).unwrap();
        spgemm_core::verify::check_product(&long, &b, &c)
            .unwrap()
            .unwrap();
    }
}
