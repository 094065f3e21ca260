//! Borrowed CSR matrices: the caller's arrays, read in place.
//!
//! A [`CsrView`] is to [`CsrMatrix`] what `&[T]` is to `Vec<T>` (faer's
//! `SparseRowMatRef`, sprs's `CsMatView`): the same three arrays and the
//! same invariants, borrowed. Every product takes views, so a matrix held
//! by another library (`sprs`, `faer`, `nalgebra-sparse`, NumPy arrays in
//! the Python package) is multiplied without copying its arrays first; a
//! `&CsrMatrix<T>` converts to a view for free.

use crate::csr::{check_structure, too_many_columns, CsrMatrix};
use crate::error::{try_filled, try_with_capacity, Error, Result};
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
        // On all cores: a hypersparse matrix has far more rows than entries.
        self.row_offsets
            .par_windows(2)
            .with_min_len(1 << 14)
            .map(|w| w[1] - w[0])
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
        let mut offsets = try_filled(self.ncols + 1, 0usize, "row offsets")?;
        for &c in self.col_indices {
            offsets[c as usize + 1] += 1;
        }
        for j in 0..self.ncols {
            offsets[j + 1] += offsets[j];
        }
        let mut next = offsets.clone();
        let mut ci = try_filled(self.nnz(), 0u32, "column indices")?;
        let mut cv = try_filled(self.nnz(), T::ZERO, "values")?;
        for i in 0..self.nrows {
            let (cols, vals) = self.row(i);
            for (&c, &v) in cols.iter().zip(vals) {
                let p = next[c as usize];
                ci[p] = i as u32;
                cv[p] = v;
                next[c as usize] += 1;
            }
        }
        // SAFETY: a counting sort by column of a valid matrix.
        Ok(unsafe { CsrMatrix::new_unchecked(self.ncols, self.nrows, offsets, ci, cv) })
    }
}

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
