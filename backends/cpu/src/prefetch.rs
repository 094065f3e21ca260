//! Software prefetches of the rows of B that A's next entries select.
//!
//! On products whose rows of B are scattered (random graphs), each row of
//! A reads rows of B from anywhere in memory: two dependent misses per
//! entry (B's row offset, then its columns and values) that the core's
//! own prefetchers cannot foresee. Walking A's entries a fixed distance
//! ahead, the offsets are asked for `2·AHEAD` entries before they are
//! needed and the rows `AHEAD` entries before, so that the misses of many
//! entries overlap (the two-stage prefetch of Ainsworth and Jones,
//! "Software prefetching for indirect memory accesses", CGO 2017, §3).

use spgemm_core::prefetch::read as prefetch;
use spgemm_core::structure::Structure;
use spgemm_core::{CsrView, Scalar};
use std::ops::Range;

/// Entries of A between a row of B's prefetch and its use.
const AHEAD: usize = 16;

/// Rows of A sampled by [`worth_it`].
const SAMPLE_ROWS: usize = 4096;
/// Mean distance (rows of B) from A's entries to its diagonal past which
/// the rows of B are prefetched.
const SCATTERED_ROWS: f64 = 65_536.0;

/// Whether prefetching pays for `a`'s product: when A's entries lie on
/// average more than [`SCATTERED_ROWS`] rows of B from its diagonal
/// (measured on [`SAMPLE_ROWS`] rows spread over A). Near the diagonal
/// (stencils, FEM, banded matrices) neighbouring rows of A read the same
/// rows of B, which stay cached, and the prefetches only cost time
/// (about 5% on the 27-point stencil 64³ on 2 cores); far from it
/// (random graphs) they halve the product's time (Erdős–Rényi 2²⁰ × 8 on
/// 2 cores: 3.3 s without, 1.6–1.8 s with).
pub(crate) fn worth_it<T: Scalar>(a: &CsrView<'_, T>) -> bool {
    scattered(&a.structure())
}

/// [`worth_it`] for a structure whose columns select rows (A's, or a
/// mask's whose entries select rows of Bᵀ).
pub(crate) fn scattered(a: &Structure<'_>) -> bool {
    let (m, k) = (a.nrows, a.ncols);
    if m == 0 || a.col_indices.is_empty() {
        return false;
    }
    let step = m.div_ceil(SAMPLE_ROWS);
    let slope = k as f64 / m as f64;
    let (mut sum, mut n) = (0.0, 0usize);
    for i in (0..m).step_by(step) {
        let diagonal = i as f64 * slope;
        for &c in &a.col_indices[a.row_offsets[i]..a.row_offsets[i + 1]] {
            sum += (c as f64 - diagonal).abs();
            n += 1;
        }
    }
    n > 0 && sum / n as f64 > SCATTERED_ROWS
}

/// Prefetches for A's entries `entries` (of the rows being worked on,
/// whose entries end at `end`): the offsets of the rows of B that the
/// entries `2·AHEAD` later select, and the first columns (and values,
/// with `values`) of those `AHEAD` later.
#[inline]
pub(crate) fn rows_ahead<T: Scalar>(
    a: &CsrView<'_, T>,
    b: &CsrView<'_, T>,
    entries: Range<usize>,
    end: usize,
    values: bool,
) {
    selected_ahead(a.col_indices(), b, entries, end, values);
}

/// [`rows_ahead`] for the rows of `b` that `selectors` name (A's column
/// indices, or a mask's).
#[inline]
pub(crate) fn selected_ahead<T: Scalar>(
    selectors: &[u32],
    b: &CsrView<'_, T>,
    entries: Range<usize>,
    end: usize,
    values: bool,
) {
    let (acol, boff) = (selectors, b.row_offsets());
    let (bcol, bval) = (b.col_indices(), b.values());
    let far = (entries.start + 2 * AHEAD).min(end)..(entries.end + 2 * AHEAD).min(end);
    for &k in &acol[far] {
        prefetch(&boff[k as usize]);
    }
    let near = (entries.start + AHEAD).min(end)..(entries.end + AHEAD).min(end);
    for &k in &acol[near] {
        let (o, e) = (boff[k as usize], boff[k as usize + 1]);
        if o < e {
            prefetch(&bcol[o]);
            prefetch(&bcol[e - 1]);
            if values {
                prefetch(&bval[o]);
                prefetch(&bval[e - 1]);
            }
        }
    }
}
