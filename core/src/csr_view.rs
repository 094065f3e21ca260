//! Borrowed CSR matrices: the caller's arrays, read in place.
//!
//! A [`CsrView`] is to [`CsrMatrix`] what `&[T]` is to `Vec<T>` (faer's
//! `SparseRowMatRef`, sprs's `CsMatView`): the same three arrays and the
//! same invariants, borrowed. Every product takes views, so a matrix held
//! by another library (`sprs`, `faer`, `nalgebra-sparse`, NumPy arrays in
//! the Python package) is multiplied without copying its arrays first; a
//! `&CsrMatrix<T>` converts to a view for free.

use crate::csr::{check_structure, too_many_columns, CsrMatrix};
use crate::error::{try_with_capacity, try_zeroed, Error, Result};
use crate::scalar::Scalar;
use rayon::prelude::*;

/// A borrowed sparse matrix in compressed sparse row format, with the
/// invariants of [`CsrMatrix`]: row `i` owns the entries
/// `row_offsets[i]..row_offsets[i + 1]` of `col_indices` and `values`.
#[derive(Debug, PartialEq)]
pub struct CsrView<'a, T> {
    nrows: usize,
    ncols: usize,
    row_offsets: &'a [usize],
    col_indices: &'a [u32],
    values: &'a [T],
}

impl<T> Clone for CsrView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for CsrView<'_, T> {}

impl<'a, T: Scalar> CsrView<'a, T> {
    /// Borrows the arrays of an `nrows × ncols` matrix, checking every
    /// structural invariant of [`CsrMatrix::new`] (all but sortedness).
    ///
    /// Shapes: `row_offsets.len() == nrows + 1`, `col_indices.len() ==
    /// values.len() == row_offsets[nrows]`.
    ///
    /// # Errors
    /// As [`CsrMatrix::new`].
    pub fn new(
        nrows: usize,
        ncols: usize,
        row_offsets: &'a [usize],
        col_indices: &'a [u32],
        values: &'a [T],
    ) -> Result<Self> {
        check_structure(nrows, ncols, row_offsets, col_indices)?;
        if values.len() != col_indices.len() {
            return Err(Error::ValuesLength {
                columns: col_indices.len(),
                values: values.len(),
            });
        }
        Ok(Self {
            nrows,
            ncols,
            row_offsets,
            col_indices,
            values,
        })
    }

    /// Borrows the arrays without any check.
    ///
    /// # Safety
    /// The caller guarantees every invariant that [`CsrView::new`] checks:
    /// backends index device and host memory with these offsets and columns
    /// without bounds checks.
    pub unsafe fn new_unchecked(
        nrows: usize,
        ncols: usize,
        row_offsets: &'a [usize],
        col_indices: &'a [u32],
        values: &'a [T],
    ) -> Self {
        debug_assert!(check_structure(nrows, ncols, row_offsets, col_indices).is_ok());
        Self::trusted(nrows, ncols, row_offsets, col_indices, values)
    }

    /// A view of arrays known to hold the invariants (a matrix's own, or
    /// arrays checked before): no check, not even in debug builds, since
    /// views are made on every row access of a [`CsrMatrix`].
    pub(crate) fn trusted(
        nrows: usize,
        ncols: usize,
        row_offsets: &'a [usize],
        col_indices: &'a [u32],
        values: &'a [T],
    ) -> Self {
        Self {
            nrows,
            ncols,
            row_offsets,
            col_indices,
            values,
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
    pub fn row_offsets(&self) -> &'a [usize] {
        self.row_offsets
    }
    /// Column indices, length `nnz`.
    pub fn col_indices(&self) -> &'a [u32] {
        self.col_indices
    }
    /// The structure (shape, row offsets, column indices), without values.
    pub fn structure(&self) -> crate::structure::Structure<'a> {
        crate::structure::Structure {
            nrows: self.nrows,
            ncols: self.ncols,
            row_offsets: self.row_offsets,
            col_indices: self.col_indices,
        }
    }
    /// Values, length `nnz`.
    pub fn values(&self) -> &'a [T] {
        self.values
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
    pub fn row(&self, i: usize) -> (&'a [u32], &'a [T]) {
        let r = self.row_offsets[i]..self.row_offsets[i + 1];
        (&self.col_indices[r.clone()], &self.values[r])
    }
    /// Largest number of entries in any row (0 for a matrix without rows).
    pub fn max_row_nnz(&self) -> usize {
        // On all cores, in blocks of rows: a hypersparse matrix has far
        // more rows than entries, and a block's loop is a plain one.
        const BLOCK: usize = 1 << 14;
        let off = self.row_offsets;
        (0..self.nrows.div_ceil(BLOCK))
            .into_par_iter()
            .map(|k| {
                let rows = k * BLOCK..((k + 1) * BLOCK).min(self.nrows);
                off[rows.start..=rows.end]
                    .windows(2)
                    .map(|w| w[1] - w[0])
                    .max()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0)
    }

    /// Returns `Ok` when every row is sorted without duplicates.
    ///
    /// # Errors
    /// [`Error::UnsortedRow`] for the first row that is not.
    pub fn check_sorted(&self) -> Result<()> {
        let unsorted = |i: usize| {
            let (cols, _) = self.row(i);
            cols.windows(2)
                .find(|w| w[0] >= w[1])
                .map(|w| (i, w[0], w[1]))
        };
        // Rows in blocks, each scanned on one core: rayon's search then
        // synchronizes per block rather than per row (a 1 M-row matrix was
        // checked in 8-12 ms on 2 cores row by row).
        const ROWS: usize = 4096;
        let block = |b: usize| (b * ROWS..((b + 1) * ROWS).min(self.nrows)).find_map(unsorted);
        match (0..self.nrows.div_ceil(ROWS))
            .into_par_iter()
            .find_map_first(block)
        {
            Some((row, prev, col)) => Err(Error::UnsortedRow { row, prev, col }),
            None => Ok(()),
        }
    }

    /// Whether every row is sorted without duplicates.
    pub fn is_sorted(&self) -> bool {
        self.check_sorted().is_ok()
    }

    /// Whether `other` has exactly the same shape, row offsets and column
    /// indices.
    pub fn same_structure<U: Scalar>(&self, other: &CsrView<'_, U>) -> bool {
        self.shape() == other.shape()
            && self.row_offsets == other.row_offsets
            && self.col_indices == other.col_indices
    }

    /// Whether `other` borrows the very same arrays (so that `A·A` is
    /// recognised without comparing entries).
    pub fn same_arrays(&self, other: &CsrView<'_, T>) -> bool {
        self.shape() == other.shape()
            && std::ptr::eq(self.row_offsets, other.row_offsets)
            && std::ptr::eq(self.col_indices, other.col_indices)
            && std::ptr::eq(self.values, other.values)
    }

    /// An owned copy of the arrays.
    ///
    /// # Errors
    /// [`Error::HostOutOfMemory`].
    pub fn to_matrix(&self) -> Result<CsrMatrix<T>> {
        let offsets = copied(self.row_offsets, "row offsets")?;
        let cols = copied(self.col_indices, "column indices")?;
        let vals = copied(self.values, "values")?;
        // SAFETY: the view's invariants are the matrix's.
        Ok(unsafe { CsrMatrix::new_unchecked(self.nrows, self.ncols, offsets, cols, vals) })
    }

    /// The transpose (`ncols × nrows`), with sorted rows.
    ///
    /// # Errors
    /// [`Error::TooLarge`] if `nrows` exceeds [`crate::csr::MAX_COLUMNS`],
    /// [`Error::HostOutOfMemory`].
    pub fn transpose(&self) -> Result<CsrMatrix<T>> {
        if self.nrows > crate::csr::MAX_COLUMNS {
            return Err(too_many_columns(self.nrows));
        }
        // A counting sort by column over blocks of rows, each block counted
        // and scattered by one task: block b's entries of a column land
        // after those of the blocks before it, so every row of the
        // transpose comes out sorted (stable, as the sequential sort).
        // Blocks cost a count per column each: at most four columns' worth
        // per entry.
        let (nnz, ncols) = (self.nnz(), self.ncols);
        let blocks = rayon::current_num_threads()
            .min(1 + 4 * nnz / (ncols + 1))
            .min(self.nrows.max(1));
        let bounds: Vec<usize> = (0..=blocks)
            .map(|b| {
                let target = b * nnz / blocks;
                match b {
                    _ if b == blocks => self.nrows,
                    _ => self
                        .row_offsets
                        .partition_point(|&o| o < target)
                        .min(self.nrows),
                }
            })
            .collect();
        let mut counts = (0..blocks)
            .map(|_| try_zeroed(ncols, "column counts"))
            .collect::<Result<Vec<_>>>()?;
        counts.par_iter_mut().enumerate().for_each(|(b, count)| {
            let entries = self.row_offsets[bounds[b]]..self.row_offsets[bounds[b + 1]];
            for &c in &self.col_indices[entries] {
                count[c as usize] += 1;
            }
        });
        // Per column: each block's start within it, and the column's size.
        const COLUMNS: usize = 4096;
        let mut offsets = try_zeroed(ncols + 1, "row offsets")?;
        let mut pieces: Vec<Vec<&mut [usize]>> = (0..ncols.div_ceil(COLUMNS))
            .map(|_| Vec::with_capacity(blocks))
            .collect();
        for count in counts.iter_mut() {
            for (k, piece) in count.chunks_mut(COLUMNS).enumerate() {
                pieces[k].push(piece);
            }
        }
        pieces
            .into_par_iter()
            .zip(offsets[1..].par_chunks_mut(COLUMNS))
            .for_each(|(mut piece, sizes)| {
                for (j, size) in sizes.iter_mut().enumerate() {
                    let mut before = 0;
                    for block in piece.iter_mut() {
                        let n = block[j];
                        block[j] = before;
                        before += n;
                    }
                    *size = before;
                }
            });
        for j in 0..ncols {
            offsets[j + 1] += offsets[j];
        }
        let mut ci: Vec<u32> = try_zeroed(nnz, "column indices")?;
        let mut cv: Vec<T> = try_zeroed(nnz, "values")?;
        let out = Scatter(ci.as_mut_ptr(), cv.as_mut_ptr());
        counts.par_iter_mut().enumerate().for_each(|(b, next)| {
            let out = &out;
            for i in bounds[b]..bounds[b + 1] {
                let (cols, vals) = self.row(i);
                for (&c, &v) in cols.iter().zip(vals) {
                    let p = offsets[c as usize] + next[c as usize];
                    next[c as usize] += 1;
                    // SAFETY: p < nnz, and each position is written by one
                    // block only: the blocks' ranges within a column are
                    // disjoint (their starts are the counts before them).
                    unsafe {
                        *out.0.add(p) = i as u32;
                        *out.1.add(p) = v;
                    }
                }
            }
        });
        // SAFETY: a counting sort by column of a valid matrix.
        Ok(unsafe { CsrMatrix::new_unchecked(self.ncols, self.nrows, offsets, ci, cv) })
    }
}

/// C's column and value arrays, written at disjoint positions by the
/// blocks of [`CsrView::transpose`].
struct Scatter<T>(*mut u32, *mut T);
// SAFETY: the blocks write disjoint positions (see the scatter).
unsafe impl<T: Send> Sync for Scatter<T> {}

impl<'a, T: Scalar> From<&CsrView<'a, T>> for CsrView<'a, T> {
    fn from(m: &CsrView<'a, T>) -> Self {
        *m
    }
}

/// A copy of `s`, or [`Error::HostOutOfMemory`] naming `what`.
fn copied<E: Copy>(s: &[E], what: &'static str) -> Result<Vec<E>> {
    let mut v = try_with_capacity(s.len(), what)?;
    v.extend_from_slice(s);
    Ok(v)
}

impl<'a, T: Scalar> From<&'a CsrMatrix<T>> for CsrView<'a, T> {
    fn from(m: &'a CsrMatrix<T>) -> Self {
        m.view()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_by_blocks_is_the_stable_counting_sort() {
        // Unsorted rows with a repeated column, empty rows, a wide and a
        // tall shape; seven blocks and one.
        let m: CsrMatrix<f64> = crate::generate::uniform(3000, 500, 9, 7).unwrap();
        let (_, _, o, mut c, mut v) = m.into_parts();
        for i in 0..3000 {
            c[o[i]..o[i + 1]].reverse();
            v[o[i]..o[i + 1]].reverse();
        }
        c[o[5] + 1] = c[o[5]];
        for (rows, cols) in [(3000, 500), (3000, 100_000)] {
            let view = CsrView::new(rows, cols, &o, &c, &v).unwrap();
            // The oracle: entries by (column, row), rows in stored order.
            let mut entries: Vec<(u32, usize, usize)> = (0..rows)
                .flat_map(|i| (o[i]..o[i + 1]).map(move |p| (i, p)))
                .map(|(i, p)| (c[p], i, p))
                .collect();
            entries.sort();
            for threads in [7, 1] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let t = pool.install(|| view.transpose()).unwrap();
                assert_eq!(t.shape(), (cols, rows));
                let got: Vec<(u32, usize, f64)> = (0..cols)
                    .flat_map(|j| {
                        let (r, x) = t.row(j);
                        r.iter()
                            .zip(x)
                            .map(move |(&i, &x)| (j as u32, i as usize, x))
                    })
                    .collect();
                let want: Vec<(u32, usize, f64)> =
                    entries.iter().map(|&(j, i, p)| (j, i, v[p])).collect();
                assert_eq!(got, want, "{cols} columns, {threads} threads");
            }
        }
    }

    #[test]
    fn a_view_checks_what_a_matrix_checks_and_copies_back_equal() {
        let (o, c, v) = (vec![0, 2, 3], vec![0u32, 2, 1], vec![1.0f64, 2.0, 3.0]);
        let view = CsrView::new(2, 3, &o, &c, &v).unwrap();
        assert_eq!(
            view.to_matrix().unwrap(),
            CsrMatrix::new(2, 3, o.clone(), c.clone(), v.clone()).unwrap()
        );
        assert!(view.same_arrays(&view) && view.is_sorted());
        assert!(matches!(
            CsrView::new(2, 2, &o, &c, &v),
            Err(Error::ColumnOutOfRange {
                row: 0,
                col: 2,
                ncols: 2
            })
        ));
        assert!(matches!(
            CsrView::new(2, 3, &o, &c, &v[..2]),
            Err(Error::ValuesLength {
                columns: 3,
                values: 2
            })
        ));
        let copy = c.clone();
        let other = CsrView::new(2, 3, &o, &copy, &v).unwrap();
        assert!(view.same_structure(&other) && !view.same_arrays(&other));
    }
}
