//! `nalgebra-sparse` (feature `nalgebra-sparse`):
//! [`nalgebra_sparse::CsrMatrix`] holds `usize` row offsets (read in place)
//! and `usize` column indices (narrowed to `u32`); its rows are sorted
//! without duplicates, which it requires of ours too.

use super::{indices_as_u32, indices_to, CsrCow};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::CsrMatrix;
use nalgebra_sparse::CsrMatrix as NalgebraCsr;
use std::borrow::Cow;

/// Row offsets and values read in place, column indices narrowed.
///
/// # Errors
/// [`Error::TooLarge`] beyond `u32::MAX` columns; [`Error::HostOutOfMemory`].
impl<'a, T: Scalar + nalgebra_sparse::na::Scalar> TryFrom<&'a NalgebraCsr<T>> for CsrCow<'a, T> {
    type Error = Error;
    fn try_from(m: &'a NalgebraCsr<T>) -> Result<Self> {
        let (offsets, cols, vals) = m.csr_data();
        CsrCow::new(
            m.nrows(),
            m.ncols(),
            Cow::Borrowed(offsets),
            Cow::Owned(indices_as_u32(cols)?),
            Cow::Borrowed(vals),
        )
    }
}

/// Row offsets and values moved, column indices narrowed.
///
/// # Errors
/// [`Error::TooLarge`] beyond `u32::MAX` columns; [`Error::HostOutOfMemory`].
impl<T: Scalar + nalgebra_sparse::na::Scalar> TryFrom<NalgebraCsr<T>> for CsrMatrix<T> {
    type Error = Error;
    fn try_from(m: NalgebraCsr<T>) -> Result<Self> {
        let (nrows, ncols) = (m.nrows(), m.ncols());
        let (offsets, cols, vals) = m.disassemble();
        CsrMatrix::new(nrows, ncols, offsets, indices_as_u32(&cols)?, vals)
    }
}

/// Row offsets and values moved, column indices widened.
///
/// # Errors
/// [`Error::UnsortedRow`]: nalgebra-sparse takes only sorted rows without
/// duplicates (see [`CsrMatrix::sort_and_sum_duplicates`]);
/// [`Error::HostOutOfMemory`].
impl<T: Scalar + nalgebra_sparse::na::Scalar> TryFrom<CsrMatrix<T>> for NalgebraCsr<T> {
    type Error = Error;
    fn try_from(m: CsrMatrix<T>) -> Result<Self> {
        m.check_sorted()?;
        let (nrows, ncols, offsets, cols, vals) = m.into_parts();
        let cols = indices_to::<usize, u32>(&cols, "column index", usize::MAX as u128)?;
        NalgebraCsr::try_from_csr_data(nrows, ncols, offsets, cols, vals).map_err(|e| {
            Error::StructureMismatch(format!("nalgebra-sparse refused the matrix: {e}"))
        })
    }
}
