//! Products in one pass over A, where a second pass would cost more than
//! it saves: every row short, or A hypersparse.
//!
//! When no row of C has more than [`SHORT_ROW`] products (road networks,
//! meshes of low degree), every row is empty, one row of B scaled, or a
//! few products sorted and merged in a small buffer (`short_rows`); when
//! A has fewer entries than rows (hypersparse matrices), most rows are
//! empty or one entry. The two-phase product reads each of A's entries'
//! rows of B twice from anywhere in memory, once to count the row and
//! once to fill it; here each chunk of rows computes its rows once into a
//! buffer of its own (grown as its rows need; a rare long row through the
//! accumulators), and the chunks' buffers are copied into C in parallel,
//! each chunk's row lengths turned into C's row offsets on the way: one
//! sequential copy of C in place of a second pass of scattered reads (the
//! one-phase method with a per-thread buffer and a final copy of
//! Nagasaka, Matsuoka, Azad and Buluç, "Performance optimization, modeling
//! and analysis of sparse matrix-matrix products on multi-core and
//! many-core processors", Parallel Computing 90, 2019, §4.2). A
//! hypersparse A's rows are split by their entries, so its products per
//! row (one more scattered pass) are never counted.

use crate::accumulator::{Accumulator, Ops};
use crate::prefetch;
use crate::short_rows::{self, SHORT_ROW};
use crate::{Accumulators, Either};
use rayon::prelude::*;
use spgemm_core::csr::split_rows_mut;
use spgemm_core::error::try_with_capacity;
use spgemm_core::{CsrMatrix, CsrView, Error, Result, Scalar};
use std::mem::MaybeUninit;
use std::ops::Range;

/// Whether every row of the product has at most [`SHORT_ROW`] products
/// (`max_nprod`: the most products of any row).
pub(crate) fn short(max_nprod: u64) -> bool {
    max_nprod <= SHORT_ROW as u64
}

/// Whether A has fewer entries than rows: most of its rows are empty or
/// one entry, and its rows are split by [`by_entries`] without counting
/// their products.
pub(crate) fn hypersparse<T: Scalar>(a: &CsrView<'_, T>) -> bool {
    a.nnz() < a.nrows()
}

/// A's rows split into at most `parts` contiguous ranges of about equal
/// rows plus entries (a binary search of A's row offsets per range).
pub(crate) fn by_entries<T: Scalar>(a: &CsrView<'_, T>, parts: usize) -> Vec<Range<usize>> {
    let (n, off) = (a.nrows(), a.row_offsets());
    let work = |i: usize| i + off[i];
    let parts = parts.max(1);
    let total = work(n);
    let mut ends: Vec<usize> = (1..parts)
        .map(|p| {
            let target = (total as u128 * p as u128 / parts as u128) as usize;
            // The first row whose work reaches `target`.
            let (mut lo, mut hi) = (0, n);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if work(mid) < target {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        })
        .collect();
    ends.push(n);
    ends.dedup();
    if n > 0 {
        ends.retain(|&e| e > 0);
    }
    let mut start = 0;
    ends.into_iter()
        .map(|end| {
            let r = start..end;
            start = end;
            r
        })
        .collect()
}

/// One chunk's rows of C, back to back.
struct Part<T> {
    cols: Vec<u32>,
    vals: Vec<T>,
}

/// `C = A ⊕.⊗ B` in one pass, A's rows split into `chunks`; rows past
/// [`SHORT_ROW`] products accumulated by `accumulators`, B's rows
/// prefetched when `prefetch`.
///
/// # Errors
/// [`Error::HostOutOfMemory`] for a chunk's buffer or C.
pub(crate) fn multiply<T: Scalar, O: Ops<T>>(
    ops: O,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    chunks: &[Range<usize>],
    accumulators: &Accumulators<T>,
    prefetch: bool,
) -> Result<CsrMatrix<T>> {
    let n = a.nrows();
    // Written once each, never zeroed: row 0's offset here, every other
    // by the chunk holding its row.
    let mut offsets: Vec<usize> = try_with_capacity(n + 1, "C row offsets")?;
    crate::advise_huge_pages(&mut offsets);
    let (first, rest) = offsets.spare_capacity_mut()[..n + 1].split_at_mut(1);
    first[0].write(0);
    let mut slices = Vec::with_capacity(chunks.len());
    let mut rest = rest;
    for r in chunks {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(r.len());
        slices.push(head);
        rest = tail;
    }
    // Every offset is written only if the chunks cover every row.
    assert!(rest.is_empty(), "internal error: chunks miss rows of A");
    let parts: Vec<Part<T>> = chunks
        .par_iter()
        .zip(&mut slices)
        .map(|(r, lengths)| part(ops, accumulators, a, b, r.clone(), lengths, prefetch))
        .collect::<Result<_>>()?;
    let mut bounds = Vec::with_capacity(parts.len() + 1);
    bounds.push(0);
    for p in &parts {
        bounds.push(bounds[bounds.len() - 1] + p.cols.len());
    }
    let nnz = bounds[parts.len()];
    let mut cols: Vec<u32> = try_with_capacity(nnz, "C column indices")?;
    let mut vals: Vec<T> = try_with_capacity(nnz, "C values")?;
    crate::advise_huge_pages(&mut cols);
    crate::advise_huge_pages(&mut vals);
    split_rows_mut(
        &bounds,
        &mut cols.spare_capacity_mut()[..nnz],
        &mut vals.spare_capacity_mut()[..nnz],
    )
    .into_par_iter()
    .zip(parts)
    .zip(slices)
    .zip(bounds.par_iter())
    .for_each(|((((c, v), p), lengths), &base)| {
        // The chunk's rows' lengths become their offsets ...
        let mut end = base;
        for l in lengths {
            // SAFETY: `part` wrote every row's length.
            end += unsafe { l.assume_init() };
            l.write(end);
        }
        // ... and its part is copied to its place (as long as the sum of
        // those lengths).
        for (d, &s) in c.iter_mut().zip(&p.cols) {
            d.write(s);
        }
        for (d, &s) in v.iter_mut().zip(&p.vals) {
            d.write(s);
        }
    });
    // SAFETY: every offset was written (row 0's above, the others by the
    // chunks, which cover every row), and so was every entry of C: the
    // chunks' ranges cover `0..nnz`, each as long as its part.
    unsafe {
        offsets.set_len(n + 1);
        cols.set_len(nnz);
        vals.set_len(nnz);
    }
    // SAFETY: offsets are the prefix sum of each row's length, the rows
    // are sorted without repeats (`short_rows`, or one sorted row of B),
    // and every column comes from B's checked column indices.
    Ok(unsafe { CsrMatrix::new_unchecked(n, b.ncols(), offsets, cols, vals) })
}

/// The rows `rows` of C into a buffer of their own, each row's length
/// into `lengths`.
fn part<T: Scalar, O: Ops<T>>(
    ops: O,
    accumulators: &Accumulators<T>,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    rows: Range<usize>,
    lengths: &mut [MaybeUninit<usize>],
    prefetch: bool,
) -> Result<Part<T>> {
    let aoff = a.row_offsets();
    let room = aoff[rows.end] - aoff[rows.start];
    let mut cols: Vec<u32> = try_with_capacity(room, "a chunk of C's column indices")?;
    let mut vals: Vec<T> = try_with_capacity(room, "a chunk of C's values")?;
    let end = aoff[rows.end];
    for (i, out) in rows.zip(lengths) {
        let entries = aoff[i]..aoff[i + 1];
        if entries.is_empty() {
            out.write(0);
            continue;
        }
        if prefetch {
            prefetch::rows_ahead(&a, &b, entries, end, true);
        }
        let (ac, av) = a.row(i);
        let p = crate::accumulator::row_products(ac, &b);
        grow(&mut cols, p, "a chunk of C's column indices")?;
        grow(&mut vals, p, "a chunk of C's values")?;
        let (c, v) = (cols.spare_capacity_mut(), vals.spare_capacity_mut());
        let n = match ac {
            // One entry selecting a row of B sorted without repeats (checked
            // here, where the row is being read anyway): that row, scaled.
            &[k] if b.row(k as usize).0.windows(2).all(|w| w[0] < w[1]) => {
                let (bc, bv) = b.row(k as usize);
                for ((&j, &x), (cj, vj)) in bc.iter().zip(bv).zip(c.iter_mut().zip(v.iter_mut())) {
                    cj.write(j);
                    vj.write(ops.times(av[0], x));
                }
                bc.len()
            }
            _ if p <= SHORT_ROW => short_rows::fill(ops, ac, av, &b, c, v),
            _ => accumulators.with(|acc| match acc {
                Either::Dense(acc) => acc.fill(ops, ac, av, &b, c, v),
                Either::Mixed(acc) => acc.fill(ops, ac, av, &b, c, v),
                Either::Hash(acc) => acc.fill(ops, ac, av, &b, c, v),
            }),
        };
        out.write(n);
        // SAFETY: the row's `n` entries (at most its `p` products, for
        // which there was room) were just written after the others.
        unsafe {
            cols.set_len(cols.len() + n);
            vals.set_len(vals.len() + n);
        }
    }
    Ok(Part { cols, vals })
}

/// Room for `more` entries past `v`'s length: none made when there is,
/// otherwise at least double the capacity.
#[inline]
fn grow<T>(v: &mut Vec<T>, more: usize, what: &'static str) -> Result<()> {
    if v.capacity() - v.len() >= more {
        return Ok(());
    }
    v.try_reserve(more).map_err(|_| Error::HostOutOfMemory {
        what,
        bytes: (v.len() + more) as u128 * std::mem::size_of::<T>() as u128,
    })
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

    /// `C = A·B` and, for rows short or hypersparse, min-plus: one pass
    /// (on 1 and 3 threads) against both phases bit for bit and against
    /// the reference.
    fn one_pass_equals_both_phases(a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) {
        for threads in [1, 3] {
            let cpu = CpuBackend::with_threads(threads).unwrap();
            let c = cpu.multiply(a, b).unwrap();
            let two_phases = cpu.numeric(&cpu.symbolic(a, b).unwrap(), a, b).unwrap();
            assert_eq!(c.row_offsets(), two_phases.row_offsets());
            assert_eq!(c.col_indices(), two_phases.col_indices());
            let bits = |m: &CsrMatrix<f64>| -> Vec<u64> {
                m.values().iter().map(|v| v.to_bits()).collect()
            };
            assert_eq!(bits(&c), bits(&two_phases));
            spgemm_core::verify::check_product(a, b, &c)
                .unwrap()
                .unwrap();
            let spec = ProductSpec::new().semiring(Semiring::MinPlus);
            let m = cpu.multiply_spec(a, b, &spec).unwrap();
            let want = spgemm_core::reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
            assert_eq!(m.row_offsets(), want.row_offsets());
            assert_eq!(m.col_indices(), want.col_indices());
            assert_eq!(m.values(), want.values());
        }
    }

    #[test]
    fn hypersparse_products_in_one_pass_equal_both_phases_bit_for_bit() {
        for unsorted in [false, true] {
            // Wide enough that B's rows are prefetched.
            let a = hypersparse(1 << 19, 1, true, unsorted);
            let b = hypersparse(1 << 19, 2, unsorted, unsorted);
            assert!(hypersparse_matrix(&a) && prefetch::worth_it(&a.view()));
            one_pass_equals_both_phases(&a, &b);
        }
    }

    #[test]
    fn long_rows_of_a_hypersparse_product_go_through_the_accumulators() {
        let n = 20_000;
        let mut a = hypersparse(n, 3, true, false);
        let mut b = hypersparse(n, 4, false, false);
        // Row 11 of A: 300 entries; row 5 of B: 2,000 (a hub every entry
        // of A in column 5 reaches).
        let hub = |m: &CsrMatrix<f64>, i: usize, cols: Vec<u32>| {
            let (mut r, mut c, mut v) = (Vec::new(), Vec::new(), Vec::new());
            for k in 0..m.nrows() {
                let (kc, kv) = if k == i {
                    (&cols[..], &[][..])
                } else {
                    m.row(k)
                };
                r.extend(std::iter::repeat_n(k, kc.len()));
                c.extend_from_slice(kc);
                if k == i {
                    v.extend((0..kc.len()).map(|x| 1.0 + x as f64));
                } else {
                    v.extend_from_slice(kv);
                }
            }
            CsrMatrix::from_triplets(m.nrows(), m.ncols(), &r, &c, &v).unwrap()
        };
        a = hub(&a, 11, (0..300).map(|k| k * 61 % n as u32).collect());
        b = hub(&b, 5, (0..2000).map(|k| k * 7 % n as u32).collect());
        assert!(hypersparse_matrix(&a));
        one_pass_equals_both_phases(&a, &b);
        // Its shapes are checked as the two phases check them.
        let wrong = hypersparse(n + 1, 4, false, false);
        assert!(matches!(
            CpuBackend::new().multiply(&a, &wrong),
            Err(Error::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn short_rows_in_one_pass_equal_both_phases_bit_for_bit() {
        // About two entries a row: not hypersparse, every row short.
        let n = 1 << 16;
        let a = spgemm_core::generate::erdos_renyi::<f64>(n, 2, 5).unwrap();
        let setup = crate::Setup::of(a.view(), a.view()).unwrap();
        assert!(!hypersparse_matrix(&a) && short(setup.max_nprod));
        one_pass_equals_both_phases(&a, &a);
    }

    #[test]
    fn a_row_past_the_short_rows_takes_both_phases() {
        let b = spgemm_core::generate::erdos_renyi::<f64>(1 << 12, 2, 6).unwrap();
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
        assert!(!hypersparse_matrix(&long) && !short(setup.max_nprod));
        let c = CpuBackend::new().multiply(&long, &b).unwrap();
        spgemm_core::verify::check_product(&long, &b, &c)
            .unwrap()
            .unwrap();
    }

    #[test]
    fn rows_split_by_entries_cover_every_row_once() {
        let a = hypersparse(10_000, 5, true, false);
        let hub = CsrMatrix::new(
            4,
            4,
            vec![0, 0, 1000, 1000, 1000],
            vec![0; 1000],
            vec![1.0; 1000],
        )
        .unwrap();
        let empty = CsrMatrix::<f64>::new(0, 3, vec![0], vec![], vec![]).unwrap();
        for (m, parts) in [(&a, 1), (&a, 7), (&a, 64), (&hub, 8), (&empty, 4)] {
            let chunks = by_entries(&m.view(), parts);
            assert!(chunks.len() <= parts.max(1), "{} chunks", chunks.len());
            assert_eq!(chunks.first().map(|r| r.start), Some(0));
            assert_eq!(chunks.last().map(|r| r.end), Some(m.nrows()));
            assert!(chunks.windows(2).all(|w| w[0].end == w[1].start));
            assert!(m.nrows() == 0 || chunks.iter().all(|r| !r.is_empty()));
        }
        // Equal work: rows plus entries of each of 7 ranges within a row's
        // work of a seventh of the whole.
        let work = |r: &Range<usize>| r.len() + a.row_offsets()[r.end] - a.row_offsets()[r.start];
        let seventh = (a.nrows() + a.nnz()) / 7;
        for r in by_entries(&a.view(), 7) {
            assert!(work(&r).abs_diff(seventh) <= 2 + a.max_row_nnz(), "{r:?}");
        }
    }

    fn hypersparse_matrix(m: &CsrMatrix<f64>) -> bool {
        super::hypersparse(&m.view())
    }
}
