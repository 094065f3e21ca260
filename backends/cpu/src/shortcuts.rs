//! Rows of C that need no accumulator, and the loops over a chunk's rows
//! in both phases that take them before any accumulator.

use crate::accumulator::{self, Ops};
use crate::{prefetch, short_rows};
use rayon::prelude::*;
use spgemm_core::{CsrView, Scalar};
use std::mem::MaybeUninit;
use std::ops::Range;

/// Rows of C computed without an accumulator: rows with no products are
/// empty and cost nothing past the row's offsets, and a row of A with one
/// entry selects one row of B, which (when B's rows are sorted without
/// repeats) is the row of C scaled, so it is counted from its products and
/// copied, not hashed. On hypersparse inputs, where most rows of A are
/// empty or single entries, this makes the work proportional to nnz
/// rather than to the row count times an accumulator's set-up.
#[derive(Clone, Debug)]
pub(crate) struct Shortcuts {
    /// Every row of B is strictly increasing (one parallel pass over B).
    pub(crate) b_sorted: bool,
    /// The rows of B are prefetched ahead ([`prefetch::worth_it`]).
    pub(crate) prefetch: bool,
    /// ... in the symbolic phase too: only when A's rows have two entries
    /// or more on average. Counting a row of one entry reads nothing of B
    /// (its count is its products), so on hypersparse matrices, whose rows
    /// mostly have one entry or none, prefetching there loads B's row
    /// offsets and rows for nothing.
    pub(crate) prefetch_counts: bool,
}

impl Shortcuts {
    pub(crate) fn of<T: Scalar>(a: &CsrView<'_, T>, b: &CsrView<'_, T>) -> Self {
        let b_sorted = (0..b.nrows())
            .into_par_iter()
            .with_min_len(4096)
            .all(|k| b.row(k).0.windows(2).all(|w| w[0] < w[1]));
        let prefetch = prefetch::worth_it(a);
        Self {
            b_sorted,
            prefetch,
            prefetch_counts: prefetch && a.nnz() >= 2 * a.nrows(),
        }
    }

    /// C's row counts of `rows`: rows without products or of one entry
    /// from their products, short rows by sorting, the others by `count`
    /// (A's columns and the row's products); B's rows fetched ahead when
    /// `prefetch`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn count_rows<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        rows: Range<usize>,
        nprod: &[u64],
        out: &mut [usize],
        prefetch: bool,
        mut count: impl FnMut(&[u32], usize) -> usize,
    ) {
        let aoff = a.row_offsets();
        let end = aoff[rows.end];
        for (i, o) in rows.zip(out) {
            if prefetch {
                prefetch::rows_ahead(&a, &b, aoff[i]..aoff[i + 1], end, false);
            }
            let acols = a.row(i).0;
            let p = nprod[i] as usize;
            *o = if p == 0 || (acols.len() == 1 && self.b_sorted) {
                p
            } else if p <= short_rows::SHORT_ROW {
                short_rows::count(acols, &b)
            } else {
                count(acols, p)
            };
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fill_rows<T: Scalar, O: Ops<T>>(
        &self,
        ops: O,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        rows: Range<usize>,
        offsets: &[usize],
        cols: &mut [MaybeUninit<u32>],
        vals: &mut [MaybeUninit<T>],
        mut fill: impl FnMut(&[u32], &[T], &mut [MaybeUninit<u32>], &mut [MaybeUninit<T>]) -> usize,
    ) -> usize {
        let base = offsets[rows.start];
        let mut written = 0;
        let aoff = a.row_offsets();
        let end = aoff[rows.end];
        for i in rows {
            if self.prefetch {
                prefetch::rows_ahead(&a, &b, aoff[i]..aoff[i + 1], end, true);
            }
            let r = offsets[i] - base..offsets[i + 1] - base;
            if r.is_empty() {
                continue;
            }
            let (ac, av) = a.row(i);
            let (c, v) = (&mut cols[r.clone()], &mut vals[r.clone()]);
            let n = if ac.len() == 1 && self.b_sorted {
                let (bc, bv) = b.row(ac[0] as usize);
                for ((&j, &x), (cj, vj)) in bc.iter().zip(bv).zip(c.iter_mut().zip(v.iter_mut())) {
                    cj.write(j);
                    vj.write(ops.times(av[0], x));
                }
                bc.len()
            } else if r.len() <= short_rows::SHORT_ROW
                && accumulator::row_products(ac, &b) <= short_rows::SHORT_ROW
            {
                short_rows::fill(ops, ac, av, &b, c, v)
            } else {
                fill(ac, av, c, v)
            };
            written += n.min(r.len());
        }
        written
    }
}
