//! Compressed sparse row (CSR) matrices.
//!
//! A [`CsrMatrix`] holds `nrows + 1` row offsets (`usize`, so 64-bit on every
//! supported platform: C of a real product can pass 2^31 entries), `nnz`
//! column indices (`u32`, so at most `u32::MAX` columns) and `nnz` values.
//!
//! Invariants are split as in faer and sprs:
//! - always checked by [`CsrMatrix::new`]: lengths agree, offsets start at 0,
//!   never decrease and end at `nnz`, every column index is below `ncols`;
//! - checked on request by [`CsrMatrix::new_sorted`] or
//!   [`CsrMatrix::check_sorted`]: columns strictly increase within each row
//!   (sorted, no duplicates). SpGEMM accepts unsorted rows with duplicates
//!   (each stored entry contributes), and always produces sorted rows.

use crate::csr_view::CsrView;
use crate::error::{try_filled, Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;

/// Largest number of columns a matrix may have (column indices are `u32`).
pub const MAX_COLUMNS: usize = u32::MAX as usize;

/// A sparse matrix in compressed sparse row format.
///
/// Row `i` owns the entries `row_offsets[i]..row_offsets[i + 1]` of
/// `col_indices` and `values`.
#[derive(Clone, Debug, PartialEq)]
pub struct CsrMatrix<T> {
    nrows: usize,
    ncols: usize,
    row_offsets: Vec<usize>,
    col_indices: Vec<u32>,
    values: Vec<T>,
}

impl<T: Scalar> CsrMatrix<T> {
    /// Builds a matrix from its parts, checking every structural invariant
    /// except sortedness (see the module docs).
    ///
    /// Shapes: `row_offsets.len() == nrows + 1`, `col_indices.len() ==
    /// values.len() == row_offsets[nrows]`.
    ///
    /// # Errors
    /// [`Error::RowOffsetsLength`], [`Error::RowOffsetsStart`],
    /// [`Error::RowOffsetsDecrease`], [`Error::RowOffsetsEnd`],
    /// [`Error::ValuesLength`], [`Error::ColumnOutOfRange`] naming the first
    /// fault, or [`Error::TooLarge`] when `ncols` exceeds [`MAX_COLUMNS`].
    pub fn new(
        nrows: usize,
        ncols: usize,
        row_offsets: Vec<usize>,
        col_indices: Vec<u32>,
        values: Vec<T>,
    ) -> Result<Self> {
        CsrView::new(nrows, ncols, &row_offsets, &col_indices, &values)?;
        Ok(Self {
            nrows,
            ncols,
            row_offsets,
            col_indices,
            values,
        })
    }

    /// Like [`CsrMatrix::new`], and also requires every row to be sorted
    /// without duplicates.
    ///
    /// # Errors
    /// Those of [`CsrMatrix::new`], and [`Error::UnsortedRow`].
    pub fn new_sorted(
        nrows: usize,
        ncols: usize,
        row_offsets: Vec<usize>,
        col_indices: Vec<u32>,
        values: Vec<T>,
    ) -> Result<Self> {
        let m = Self::new(nrows, ncols, row_offsets, col_indices, values)?;
        m.check_sorted()?;
        Ok(m)
    }

    /// Builds a matrix without any check.
    ///
    /// # Safety
    /// The caller guarantees every invariant that [`CsrMatrix::new`] checks.
    /// Backends index device and host memory with these offsets and columns
    /// without bounds checks, so a violation is undefined behaviour.
    pub unsafe fn new_unchecked(
        nrows: usize,
        ncols: usize,
        row_offsets: Vec<usize>,
        col_indices: Vec<u32>,
        values: Vec<T>,
    ) -> Self {
        debug_assert!(check_structure(nrows, ncols, &row_offsets, &col_indices).is_ok());
        Self {
            nrows,
            ncols,
            row_offsets,
            col_indices,
            values,
        }
    }

    /// An `nrows × ncols` matrix with no entries.
    ///
    /// # Errors
    /// [`Error::TooLarge`] when `ncols` exceeds [`MAX_COLUMNS`], or
    /// [`Error::HostOutOfMemory`].
    pub fn zeros(nrows: usize, ncols: usize) -> Result<Self> {
        let offsets = try_filled(nrows + 1, 0usize, "row offsets")?;
        Self::new(nrows, ncols, offsets, Vec::new(), Vec::new())
    }

    /// Builds a sorted matrix from coordinate triplets `(rows[e], cols[e],
    /// vals[e])` (0-based) in any order. Duplicates are summed; an entry
    /// whose sum is zero is kept as an explicit zero.
    ///
    /// # Errors
    /// [`Error::ValuesLength`] if the three slices differ in length,
    /// [`Error::Parse`]-free range errors as [`Error::ColumnOutOfRange`] or
    /// [`Error::TooLarge`] (row index out of range is reported as
    /// `TooLarge { what: "row index" }`), [`Error::HostOutOfMemory`].
    pub fn from_triplets(
        nrows: usize,
        ncols: usize,
        rows: &[usize],
        cols: &[u32],
        vals: &[T],
    ) -> Result<Self> {
        if rows.len() != cols.len() || cols.len() != vals.len() {
            return Err(Error::ValuesLength {
                columns: cols.len(),
                values: vals.len().min(rows.len()),
            });
        }
        if ncols > MAX_COLUMNS {
            return Err(too_many_columns(ncols));
        }
        let mut counts = try_filled(nrows + 1, 0usize, "row offsets")?;
        for (&r, &c) in rows.iter().zip(cols) {
            if r >= nrows {
                return Err(Error::TooLarge {
                    what: "row index",
                    value: r as u128,
                    limit: nrows.saturating_sub(1) as u128,
                });
            }
            if c as usize >= ncols {
                return Err(Error::ColumnOutOfRange {
                    row: r,
                    col: c as u64,
                    ncols,
                });
            }
            counts[r + 1] += 1;
        }
        for i in 0..nrows {
            counts[i + 1] += counts[i];
        }
        let nnz = counts[nrows];
        let mut next = counts.clone();
        let mut ci = try_filled(nnz, 0u32, "column indices")?;
        let mut cv = try_filled(nnz, T::ZERO, "values")?;
        for ((&r, &c), &v) in rows.iter().zip(cols).zip(vals) {
            let p = next[r];
            ci[p] = c;
            cv[p] = v;
            next[r] += 1;
        }
        drop(next);
        // SAFETY: offsets are a prefix sum of per-row counts and every column
        // was checked against `ncols` above.
        let m = unsafe { Self::new_unchecked(nrows, ncols, counts, ci, cv) };
        Ok(m.sort_and_sum_duplicates())
    }

    /// Sorts every row by column and sums duplicate columns (keeping sums
    /// that are zero as explicit zeros). Runs in parallel over rows.
    pub fn sort_and_sum_duplicates(mut self) -> Self {
        if self.is_sorted() {
            return self;
        }
        let nrows = self.nrows;
        // Sort each row in place and record how many distinct columns it has.
        let mut kept = vec![0usize; nrows];
        {
            let rows = split_rows_mut(&self.row_offsets, &mut self.col_indices, &mut self.values);
            rows.into_par_iter()
                .zip(kept.par_iter_mut())
                .for_each(|((cols, vals), k)| *k = sort_row(cols, vals));
        }
        if kept
            .iter()
            .enumerate()
            .all(|(i, &k)| k == self.row_offsets[i + 1] - self.row_offsets[i])
        {
            return self;
        }
        // Compact rows that lost duplicates.
        let mut write = 0usize;
        for (i, &k) in kept.iter().enumerate() {
            let start = self.row_offsets[i];
            self.col_indices.copy_within(start..start + k, write);
            self.values.copy_within(start..start + k, write);
            self.row_offsets[i] = write;
            write += k;
        }
        self.row_offsets[nrows] = write;
        self.col_indices.truncate(write);
        self.values.truncate(write);
        self.col_indices.shrink_to_fit();
        self.values.shrink_to_fit();
        self
    }

    /// Returns `Ok` when every row is sorted without duplicates.
    ///
    /// # Errors
    /// [`Error::UnsortedRow`] for the first row that is not.
    pub fn check_sorted(&self) -> Result<()> {
        self.view().check_sorted()
    }

    /// Whether every row is sorted without duplicates.
    pub fn is_sorted(&self) -> bool {
        self.view().is_sorted()
    }

    /// Removes stored entries whose value is exactly zero (explicit zeros,
    /// including those produced by cancellation in a product).
    pub fn drop_explicit_zeros(self) -> Self {
        self.retain(|_, _, v| v != T::ZERO)
    }

    /// Keeps the entries for which `keep(row, col, value)` is true.
    pub fn retain(mut self, mut keep: impl FnMut(usize, u32, T) -> bool) -> Self {
        let mut write = 0usize;
        let mut start = 0usize;
        for i in 0..self.nrows {
            let end = self.row_offsets[i + 1];
            for p in start..end {
                let (c, v) = (self.col_indices[p], self.values[p]);
                if keep(i, c, v) {
                    self.col_indices[write] = c;
                    self.values[write] = v;
                    write += 1;
                }
            }
            start = end;
            self.row_offsets[i + 1] = write;
        }
        self.col_indices.truncate(write);
        self.values.truncate(write);
        self
    }

    /// The transpose (`ncols × nrows`), with sorted rows.
    ///
    /// # Errors
    /// [`Error::TooLarge`] if `nrows` exceeds [`MAX_COLUMNS`],
    /// [`Error::HostOutOfMemory`].
    pub fn transpose(&self) -> Result<Self> {
        self.view().transpose()
    }

    /// The same structure with every value converted by `f`.
    pub fn map<U: Scalar>(&self, f: impl Fn(T) -> U + Sync) -> CsrMatrix<U> {
        CsrMatrix {
            nrows: self.nrows,
            ncols: self.ncols,
            row_offsets: self.row_offsets.clone(),
            col_indices: self.col_indices.clone(),
            values: self.values.par_iter().map(|&v| f(v)).collect(),
        }
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// `(nrows, ncols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.nrows, self.ncols)
    }
    /// Number of stored entries (explicit zeros included).
    pub fn nnz(&self) -> usize {
        self.col_indices.len()
    }
    /// Row offsets, length `nrows + 1`.
    pub fn row_offsets(&self) -> &[usize] {
        &self.row_offsets
    }
    /// Column indices, length `nnz`.
    pub fn col_indices(&self) -> &[u32] {
        &self.col_indices
    }
    /// Values, length `nnz`.
    pub fn values(&self) -> &[T] {
        &self.values
    }
    /// Mutable values (the structure stays fixed), length `nnz`.
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }
    /// Number of entries stored in row `i`.
    ///
    /// # Panics
    /// If `i >= nrows`.
    pub fn row_nnz(&self, i: usize) -> usize {
        self.row_offsets[i + 1] - self.row_offsets[i]
    }
    /// Column indices and values of row `i`.
    ///
    /// # Panics
    /// If `i >= nrows`.
    pub fn row(&self, i: usize) -> (&[u32], &[T]) {
        self.view().row(i)
    }
    /// Largest number of entries in any row (0 for a matrix without rows).
    pub fn max_row_nnz(&self) -> usize {
        self.view().max_row_nnz()
    }
    /// The matrix borrowed as a [`CsrView`], which every product takes.
    pub fn view(&self) -> CsrView<'_, T> {
        CsrView::trusted(
            self.nrows,
            self.ncols,
            &self.row_offsets,
            &self.col_indices,
            &self.values,
        )
    }
    /// Whether `other` has exactly the same shape, row offsets and column indices.
    pub fn same_structure<U>(&self, other: &CsrMatrix<U>) -> bool {
        self.nrows == other.nrows
            && self.ncols == other.ncols
            && self.row_offsets == other.row_offsets
            && self.col_indices == other.col_indices
    }
    /// Splits into `(nrows, ncols, row_offsets, col_indices, values)`.
    pub fn into_parts(self) -> (usize, usize, Vec<usize>, Vec<u32>, Vec<T>) {
        (
            self.nrows,
            self.ncols,
            self.row_offsets,
            self.col_indices,
            self.values,
        )
    }
}

pub(crate) fn too_many_columns(n: usize) -> Error {
    Error::TooLarge {
        what: "number of columns",
        value: n as u128,
        limit: MAX_COLUMNS as u128,
    }
}

/// Position of the first column index `>= ncols`, on all cores: the
/// largest index of each block of 64 Ki first (a loop the compiler
/// vectorizes), then the position inside the first block past the limit.
/// Rayon's `position_first` over single elements ran at 2.7 GB/s on 16
/// cores for C's 185 M columns, slower than downloading them.
fn first_out_of_range(cols: &[u32], ncols: usize) -> Option<usize> {
    const BLOCK: usize = 1 << 16;
    let past = |b: &[u32]| b.iter().fold(0u32, |m, &c| m.max(c)) as usize >= ncols;
    let block = cols.par_chunks(BLOCK).position_first(past)?;
    let at = cols[block * BLOCK..]
        .iter()
        .position(|&c| c as usize >= ncols)?;
    Some(block * BLOCK + at)
}

/// Row offsets where a row's offset exceeds the next one's, the first
/// such row, on all cores in blocks of 64 Ki (a 1 M-row C's offsets took
/// 1-2 ms to scan on one core of an H100 host, after its download).
fn first_decrease(offsets: &[usize]) -> Option<usize> {
    const BLOCK: usize = 1 << 16;
    let rows = offsets.len().saturating_sub(1);
    (0..rows.div_ceil(BLOCK))
        .into_par_iter()
        .find_map_first(|b| {
            let end = ((b + 1) * BLOCK + 1).min(offsets.len());
            offsets[b * BLOCK..end]
                .windows(2)
                .position(|w| w[0] > w[1])
                .map(|i| b * BLOCK + i)
        })
}

pub(crate) fn check_structure(
    nrows: usize,
    ncols: usize,
    offsets: &[usize],
    cols: &[u32],
) -> Result<()> {
    if ncols > MAX_COLUMNS {
        return Err(too_many_columns(ncols));
    }
    check_offsets(nrows, offsets, cols.len())?;
    check_columns(offsets, cols, 0, ncols)
}

/// Checks `nrows + 1` row offsets from 0 to `nnz`, never decreasing.
///
/// # Errors
/// [`Error::RowOffsetsLength`], [`Error::RowOffsetsStart`],
/// [`Error::RowOffsetsDecrease`] or [`Error::RowOffsetsEnd`].
pub(crate) fn check_offsets(nrows: usize, offsets: &[usize], nnz: usize) -> Result<()> {
    if offsets.len() != nrows.wrapping_add(1) || nrows == usize::MAX {
        return Err(Error::RowOffsetsLength {
            expected: nrows.wrapping_add(1),
            got: offsets.len(),
        });
    }
    if offsets[0] != 0 {
        return Err(Error::RowOffsetsStart(offsets[0]));
    }
    if let Some(row) = first_decrease(offsets) {
        return Err(Error::RowOffsetsDecrease {
            row,
            start: offsets[row],
            end: offsets[row + 1],
        });
    }
    if offsets[nrows] != nnz {
        return Err(Error::RowOffsetsEnd {
            last: offsets[nrows],
            nnz,
        });
    }
    Ok(())
}

/// Checks that the column indices `cols`, the entries from position
/// `start` of a matrix with (checked) row offsets `offsets`, are below
/// `ncols`.
///
/// # Errors
/// [`Error::ColumnOutOfRange`] naming the first one that is not, and its
/// row.
pub(crate) fn check_columns(
    offsets: &[usize],
    cols: &[u32],
    start: usize,
    ncols: usize,
) -> Result<()> {
    if let Some(p) = first_out_of_range(cols, ncols) {
        let row = offsets.partition_point(|&o| o <= start + p) - 1;
        return Err(Error::ColumnOutOfRange {
            row,
            col: cols[p] as u64,
            ncols,
        });
    }
    Ok(())
}

/// Splits column and value arrays (initialised or not) into one mutable
/// `(cols, vals)` pair per row, or per group of rows when `offsets` holds
/// group boundaries.
///
/// # Panics
/// If `offsets` is not non-decreasing or ends past either slice.
#[doc(hidden)]
pub fn split_rows_mut<'a, C, V>(
    offsets: &[usize],
    mut cols: &'a mut [C],
    mut vals: &'a mut [V],
) -> Vec<(&'a mut [C], &'a mut [V])> {
    let mut out = Vec::with_capacity(offsets.len().saturating_sub(1));
    for w in offsets.windows(2) {
        let n = w[1] - w[0];
        let (c, rest_c) = std::mem::take(&mut cols).split_at_mut(n);
        let (v, rest_v) = std::mem::take(&mut vals).split_at_mut(n);
        out.push((c, v));
        cols = rest_c;
        vals = rest_v;
    }
    out
}

/// Sorts one row by column, sums duplicates into the front of the slices and
/// returns the number of distinct columns.
fn sort_row<T: Scalar>(cols: &mut [u32], vals: &mut [T]) -> usize {
    if cols.windows(2).all(|w| w[0] < w[1]) {
        return cols.len();
    }
    let mut pairs: Vec<(u32, T)> = cols.iter().copied().zip(vals.iter().copied()).collect();
    pairs.sort_by_key(|p| p.0);
    let mut k = 0usize;
    for (c, v) in pairs {
        if k > 0 && cols[k - 1] == c {
            vals[k - 1] += v;
        } else {
            cols[k] = c;
            vals[k] = v;
            k += 1;
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_reports_each_structural_fault() {
        let e = CsrMatrix::<f64>::new(2, 2, vec![0, 1], vec![0], vec![1.0]).unwrap_err();
        assert!(matches!(
            e,
            Error::RowOffsetsLength {
                expected: 3,
                got: 2
            }
        ));
        let e = CsrMatrix::<f64>::new(1, 2, vec![1, 1], vec![0], vec![1.0]).unwrap_err();
        assert!(matches!(e, Error::RowOffsetsStart(1)));
        let e = CsrMatrix::<f64>::new(2, 2, vec![0, 2, 1], vec![0], vec![1.0]).unwrap_err();
        assert!(matches!(
            e,
            Error::RowOffsetsDecrease {
                row: 1,
                start: 2,
                end: 1
            }
        ));
        let e = CsrMatrix::<f64>::new(1, 2, vec![0, 2], vec![0], vec![1.0]).unwrap_err();
        assert!(matches!(e, Error::RowOffsetsEnd { last: 2, nnz: 1 }));
        let e = CsrMatrix::<f64>::new(1, 2, vec![0, 1], vec![0], vec![]).unwrap_err();
        assert!(matches!(
            e,
            Error::ValuesLength {
                columns: 1,
                values: 0
            }
        ));
        let e = CsrMatrix::<f64>::new(2, 2, vec![0, 1, 2], vec![0, 2], vec![1.0, 2.0]).unwrap_err();
        assert!(matches!(
            e,
            Error::ColumnOutOfRange {
                row: 1,
                col: 2,
                ncols: 2
            }
        ));
    }

    #[test]
    fn the_first_decreasing_row_is_named_across_blocks() {
        // 300,000 rows of one entry (several blocks of the offsets' check):
        // a decrease at the first block's last row, at the first row of a
        // block and inside one, each with a later one.
        let n = 300_000;
        for (bad, first) in [
            (vec![65_535usize], 65_535usize),
            (vec![250_001, 131_072], 131_072),
            (vec![200_000, 70_000], 70_000),
        ] {
            let mut offsets: Vec<usize> = (0..=n).collect();
            for &r in &bad {
                offsets[r] = offsets[r + 1] + 1;
            }
            let e = CsrMatrix::new(n, 10, offsets, vec![0u32; n], vec![1.0f64; n]).unwrap_err();
            assert!(
                matches!(e, Error::RowOffsetsDecrease { row, .. } if row == first),
                "{e}"
            );
        }
    }

    #[test]
    fn the_first_column_out_of_range_is_named_across_blocks() {
        // One entry per row, 300,000 rows (several blocks of the check):
        // bad columns in a late block and in an earlier one.
        let n = 300_000;
        let mut cols: Vec<u32> = (0..n as u32).map(|i| i % 1000).collect();
        cols[250_001] = 5000;
        cols[140_007] = 1000;
        cols[140_100] = 7000;
        let e = CsrMatrix::new(n, 1000, (0..=n).collect(), cols, vec![1.0f64; n]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::ColumnOutOfRange {
                    row: 140_007,
                    col: 1000,
                    ncols: 1000
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn new_sorted_rejects_duplicates_and_disorder() {
        let e = CsrMatrix::new_sorted(1, 3, vec![0, 2], vec![1, 1], vec![1.0f64, 2.0]).unwrap_err();
        assert!(matches!(
            e,
            Error::UnsortedRow {
                row: 0,
                prev: 1,
                col: 1
            }
        ));
        let e = CsrMatrix::new_sorted(1, 3, vec![0, 2], vec![2, 0], vec![1.0f64, 2.0]).unwrap_err();
        assert!(matches!(
            e,
            Error::UnsortedRow {
                row: 0,
                prev: 2,
                col: 0
            }
        ));
        // Unsorted is still a valid matrix for `new`.
        assert!(CsrMatrix::new(1, 3, vec![0, 2], vec![2, 0], vec![1.0f64, 2.0]).is_ok());
    }

    #[test]
    fn triplets_sum_duplicates_and_sort() {
        let m = CsrMatrix::from_triplets(
            2,
            3,
            &[1, 0, 1, 1, 0],
            &[2, 1, 0, 2, 1],
            &[1.0f64, 2.0, 3.0, -1.0, 4.0],
        )
        .unwrap();
        assert_eq!(m.row_offsets(), &[0, 1, 3]);
        assert_eq!(m.col_indices(), &[1, 0, 2]);
        assert_eq!(m.values(), &[6.0, 3.0, 0.0]); // 1 + (-1) stays an explicit zero
        assert_eq!(m.drop_explicit_zeros().nnz(), 2);
    }

    #[test]
    fn transpose_of_rectangular() {
        let m =
            CsrMatrix::from_triplets(2, 3, &[0, 0, 1], &[0, 2, 1], &[1.0f64, 2.0, 3.0]).unwrap();
        let t = m.transpose().unwrap();
        assert_eq!(t.shape(), (3, 2));
        assert_eq!(t.row_offsets(), &[0, 1, 2, 3]);
        assert_eq!(t.col_indices(), &[0, 1, 0]);
        assert_eq!(t.values(), &[1.0, 3.0, 2.0]);
        assert_eq!(t.transpose().unwrap(), m);
    }

    #[test]
    fn too_many_columns_is_an_error() {
        let e = CsrMatrix::<f32>::zeros(1, MAX_COLUMNS + 1).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }));
    }
}
