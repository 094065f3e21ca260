//! `faer` (feature `faer`): [`faer::sparse::SparseRowMat`] and its views
//! with `u32` or `usize` indices. faer keeps one index type for row
//! offsets and column indices, so one of the two is converted: with `u32`
//! the column indices and values are read in place and the row offsets
//! (`nrows + 1` of them) widened; with `usize` the offsets and values are
//! read in place and the column indices narrowed. faer's indices must not
//! pass its signed type's maximum (`i32::MAX` for `u32`).

use super::{indices_as_u32, indices_to, offsets_as_usize, CsrCow};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::CsrMatrix;
use faer::sparse::{SparseRowMat, SparseRowMatRef, SymbolicSparseRowMat};
use std::borrow::Cow;

/// Checks that `m`'s sizes fit faer's index type, whose signed maximum is
/// `limit`.
fn fits(m: &CsrMatrix<impl Scalar>, limit: usize) -> Result<()> {
    for (what, value) in [
        ("rows for faer's index type", m.nrows()),
        ("columns for faer's index type", m.ncols()),
        ("entries for faer's index type", m.nnz()),
    ] {
        if value > limit {
            return Err(Error::TooLarge {
                what,
                value: value as u128,
                limit: limit as u128,
            });
        }
    }
    Ok(())
}

/// The entries of a faer matrix whose rows are not stored back to back
/// (`row_nnz` given, or offsets not starting at 0): copied row by row.
fn compacted<'a, I, T>(m: SparseRowMatRef<'a, I, T>) -> Result<CsrCow<'a, T>>
where
    I: faer::Index + TryInto<usize> + TryInto<u32> + std::fmt::Display,
    T: Scalar,
{
    let (nrows, ncols, row_ptr, row_nnz, col_idx) = m.symbolic().parts();
    let ptr = offsets_as_usize(row_ptr)?;
    let nnz = offsets_as_usize(row_nnz.unwrap_or(&[]))?;
    let mut offsets = Vec::with_capacity(nrows + 1);
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    offsets.push(0);
    for i in 0..nrows {
        let start = ptr[i];
        let end = nnz.get(i).map_or(ptr[i + 1], |n| start + n);
        cols.extend(indices_as_u32(&col_idx[start..end])?);
        vals.extend_from_slice(&m.val()[start..end]);
        offsets.push(cols.len());
    }
    CsrCow::new(
        nrows,
        ncols,
        Cow::Owned(offsets),
        Cow::Owned(cols),
        Cow::Owned(vals),
    )
}

/// Whether the rows of `m` are stored back to back from position 0.
fn compact<I: faer::Index, T>(m: &SparseRowMatRef<'_, I, T>) -> bool {
    let (nrows, _, row_ptr, row_nnz, col_idx) = m.symbolic().parts();
    row_nnz.is_none() && row_ptr[0].zx() == 0 && row_ptr[nrows].zx() == col_idx.len()
}

/// Column indices and values read in place, row offsets widened.
///
/// # Errors
/// [`Error::HostOutOfMemory`] (none other for a valid faer matrix).
impl<'a, T: Scalar> TryFrom<SparseRowMatRef<'a, u32, T>> for CsrCow<'a, T> {
    type Error = Error;
    fn try_from(m: SparseRowMatRef<'a, u32, T>) -> Result<Self> {
        if !compact(&m) {
            return compacted(m);
        }
        let (nrows, ncols, row_ptr, _, col_idx) = m.symbolic().parts();
        let offsets = offsets_as_usize(row_ptr)?;
        CsrCow::new(
            nrows,
            ncols,
            Cow::Owned(offsets),
            Cow::Borrowed(col_idx),
            Cow::Borrowed(m.val()),
        )
    }
}

/// Row offsets and values read in place, column indices narrowed.
///
/// # Errors
/// [`Error::TooLarge`] beyond `u32::MAX` columns; [`Error::HostOutOfMemory`].
impl<'a, T: Scalar> TryFrom<SparseRowMatRef<'a, usize, T>> for CsrCow<'a, T> {
    type Error = Error;
    fn try_from(m: SparseRowMatRef<'a, usize, T>) -> Result<Self> {
        if !compact(&m) {
            return compacted(m);
        }
        let (nrows, ncols, row_ptr, _, col_idx) = m.symbolic().parts();
        let cols = indices_as_u32(col_idx)?;
        CsrCow::new(
            nrows,
            ncols,
            Cow::Borrowed(row_ptr),
            Cow::Owned(cols),
            Cow::Borrowed(m.val()),
        )
    }
}

/// Column indices and values moved, row offsets narrowed to `u32`.
///
/// # Errors
/// [`Error::TooLarge`] when rows, columns or entries pass `i32::MAX`.
impl<T: Scalar> TryFrom<CsrMatrix<T>> for SparseRowMat<u32, T> {
    type Error = Error;
    fn try_from(m: CsrMatrix<T>) -> Result<Self> {
        fits(&m, i32::MAX as usize)?;
        let (nrows, ncols, offsets, cols, vals) = m.into_parts();
        let offsets = indices_to::<u32, usize>(&offsets, "row offset", i32::MAX as u128)?;
        // Our invariants are faer's (unsorted rows allowed): checked again
        // by faer, which cannot fail here.
        let sym = SymbolicSparseRowMat::new_unsorted_checked(nrows, ncols, offsets, None, cols);
        Ok(SparseRowMat::new(sym, vals))
    }
}

/// Row offsets and values moved, column indices widened to `usize`.
///
/// # Errors
/// [`Error::HostOutOfMemory`].
impl<T: Scalar> TryFrom<CsrMatrix<T>> for SparseRowMat<usize, T> {
    type Error = Error;
    fn try_from(m: CsrMatrix<T>) -> Result<Self> {
        fits(&m, isize::MAX as usize)?;
        let (nrows, ncols, offsets, cols, vals) = m.into_parts();
        let cols = indices_to::<usize, u32>(&cols, "column index", usize::MAX as u128)?;
        let sym = SymbolicSparseRowMat::new_unsorted_checked(nrows, ncols, offsets, None, cols);
        Ok(SparseRowMat::new(sym, vals))
    }
}

/// An owned matrix from a faer one (column indices and values moved when
/// its rows are stored back to back).
///
/// # Errors
/// [`Error::HostOutOfMemory`].
impl<T: Scalar> TryFrom<SparseRowMat<u32, T>> for CsrMatrix<T> {
    type Error = Error;
    fn try_from(m: SparseRowMat<u32, T>) -> Result<Self> {
        if !compact(&m.as_ref()) {
            return Ok(compacted(m.as_ref())?.into_matrix());
        }
        let (sym, vals) = m.into_parts();
        let (nrows, ncols, row_ptr, _, col_idx) = sym.into_parts();
        CsrMatrix::new(nrows, ncols, offsets_as_usize(&row_ptr)?, col_idx, vals)
    }
}

/// An owned matrix from a faer one with `usize` indices.
///
/// # Errors
/// [`Error::TooLarge`] beyond `u32::MAX` columns; [`Error::HostOutOfMemory`].
impl<T: Scalar> TryFrom<SparseRowMat<usize, T>> for CsrMatrix<T> {
    type Error = Error;
    fn try_from(m: SparseRowMat<usize, T>) -> Result<Self> {
        if !compact(&m.as_ref()) {
            return Ok(compacted(m.as_ref())?.into_matrix());
        }
        let (sym, vals) = m.into_parts();
        let (nrows, ncols, row_ptr, _, col_idx) = sym.into_parts();
        CsrMatrix::new(nrows, ncols, row_ptr, indices_as_u32(&col_idx)?, vals)
    }
}
