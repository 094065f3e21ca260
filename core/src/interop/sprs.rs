//! `sprs` (feature `sprs`): [`sprs::CsMatI`] with `u32` column indices and
//! `usize` row offsets has our arrays, so it converts without copying and
//! its views are read in place; [`sprs::CsMat`] (`usize` indices) converts
//! its column indices.

use super::indices_as_u32;
use crate::csr_view::CsrView;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::CsrMatrix;
use sprs::{CsMat, CsMatI, CsMatViewI};

/// `sprs` matrices with our index types.
type Ours<T> = CsMatI<T, u32, usize>;

/// The error of a `sprs` constructor, as ours: sprs takes only sorted
/// rows, so the likely cause is named by checking.
fn refused<T: Scalar>(m: CsrView<'_, T>, e: sprs::errors::StructureError) -> Error {
    match m.check_sorted() {
        Err(unsorted) => unsorted,
        Ok(()) => Error::StructureMismatch(format!("sprs refused the matrix: {e}")),
    }
}

/// CSR borrowed from a CSR `sprs` view: `sprs` slices whose offsets do not
/// start at 0 and CSC matrices are refused.
///
/// # Errors
/// [`Error::StructureMismatch`] for a CSC matrix; the errors of
/// [`CsrView::new`] (a sliced view's offsets do not start at 0).
impl<'a, T: Scalar> TryFrom<CsMatViewI<'a, T, u32, usize>> for CsrView<'a, T> {
    type Error = Error;
    fn try_from(m: CsMatViewI<'a, T, u32, usize>) -> Result<Self> {
        if !m.is_csr() {
            return Err(Error::StructureMismatch(
                "a CSC sprs matrix cannot be read as CSR in place (convert it with to_csr())"
                    .into(),
            ));
        }
        let (rows, cols) = (m.rows(), m.cols());
        let (offsets, indices, values) = m.into_raw_storage();
        CsrView::new(rows, cols, offsets, indices, values)
    }
}

/// CSR borrowed from a CSR `sprs` matrix with `u32` column indices.
///
/// # Errors
/// As the conversion from [`CsMatViewI`].
impl<'a, T: Scalar> TryFrom<&'a Ours<T>> for CsrView<'a, T> {
    type Error = Error;
    fn try_from(m: &'a Ours<T>) -> Result<Self> {
        CsrView::try_from(m.view())
    }
}

/// The arrays moved into a `sprs` matrix (no copy).
///
/// # Errors
/// [`Error::UnsortedRow`]: `sprs` takes only sorted rows without
/// duplicates (see [`CsrMatrix::sort_and_sum_duplicates`]).
impl<T: Scalar> TryFrom<CsrMatrix<T>> for Ours<T> {
    type Error = Error;
    fn try_from(m: CsrMatrix<T>) -> Result<Self> {
        m.check_sorted()?;
        let (nrows, ncols, offsets, cols, vals) = m.into_parts();
        CsMatI::try_new((nrows, ncols), offsets, cols, vals).map_err(|(o, c, v, e)| {
            // SAFETY: these are the parts of a valid matrix, unchanged.
            let back = unsafe { CsrMatrix::new_unchecked(nrows, ncols, o, c, v) };
            refused(back.view(), e)
        })
    }
}

/// A `sprs` matrix with `usize` column indices (copied, widened).
///
/// # Errors
/// [`Error::UnsortedRow`], [`Error::HostOutOfMemory`].
impl<T: Scalar> TryFrom<&CsrMatrix<T>> for CsMat<T> {
    type Error = Error;
    fn try_from(m: &CsrMatrix<T>) -> Result<Self> {
        m.check_sorted()?;
        let cols =
            super::indices_to::<usize, u32>(m.col_indices(), "column index", usize::MAX as u128)?;
        CsMat::try_new(
            m.shape(),
            m.row_offsets().to_vec(),
            cols,
            m.values().to_vec(),
        )
        .map_err(|(_, _, _, e)| refused(m.view(), e))
    }
}

/// The arrays moved out of a `sprs` matrix with our index types; a CSC
/// matrix is converted to CSR first.
///
/// # Errors
/// The errors of [`CsrMatrix::new`] (none for a valid `sprs` matrix).
impl<T: Scalar> TryFrom<Ours<T>> for CsrMatrix<T> {
    type Error = Error;
    fn try_from(m: Ours<T>) -> Result<Self> {
        let m = if m.is_csr() { m } else { m.to_csr() };
        let (rows, cols) = (m.rows(), m.cols());
        let (offsets, indices, values) = m.into_raw_storage();
        CsrMatrix::new(rows, cols, offsets, indices, values)
    }
}

/// A `sprs` matrix with `usize` column indices, narrowed to `u32`; a CSC
/// matrix is converted to CSR first.
///
/// # Errors
/// [`Error::TooLarge`] beyond `u32::MAX` columns; the errors of
/// [`CsrMatrix::new`].
impl<T: Scalar> TryFrom<CsMat<T>> for CsrMatrix<T> {
    type Error = Error;
    fn try_from(m: CsMat<T>) -> Result<Self> {
        let m = if m.is_csr() { m } else { m.to_csr() };
        let (rows, cols) = (m.rows(), m.cols());
        let (offsets, indices, values) = m.into_raw_storage();
        let indices = indices_as_u32(&indices)?;
        CsrMatrix::new(rows, cols, offsets, indices, values)
    }
}
