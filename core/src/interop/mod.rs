//! Conversions with the Rust sparse ecosystem, each behind a feature of
//! its name: [`sprs`](https://docs.rs/sprs) (`sprs`), [`faer`](https://docs.rs/faer)
//! (`faer`) and [`nalgebra-sparse`](https://docs.rs/nalgebra-sparse)
//! (`nalgebra-sparse`).
//!
//! Owned matrices convert both ways with `TryFrom` (arrays moved where the
//! index types agree, converted where they do not); borrowed matrices
//! convert to a [`CsrView`] when their arrays have our
//! types (`usize` row offsets, `u32` column indices), or to a
//! [`CsrCow`] that borrows what it can and converts the rest, so that a
//! product reads the caller's arrays. Every index that does not fit the
//! target type is an [`Error::IndexOutOfRange`] or [`Error::TooLarge`],
//! never a truncation; the other libraries' sorted-only types refuse our
//! unsorted rows with [`Error::UnsortedRow`].

#[cfg(feature = "faer")]
mod faer;
#[cfg(feature = "nalgebra-sparse")]
mod nalgebra;
#[cfg(feature = "sprs")]
mod sprs;

use crate::csr::MAX_COLUMNS;
use crate::csr_view::CsrView;
use crate::error::{try_zeroed, Error, Result};
use crate::scalar::Scalar;
use crate::CsrMatrix;
use rayon::prelude::*;
use std::borrow::Cow;

/// A CSR matrix whose arrays are borrowed where their types are ours and
/// converted (owned) where they are not: another library's `u32` row
/// offsets or `usize` column indices, NumPy's `int32` / `int64` arrays.
/// Checked like [`CsrMatrix::new`]; [`CsrCow::view`] is what products take.
#[derive(Clone, Debug)]
pub struct CsrCow<'a, T: Clone> {
    nrows: usize,
    ncols: usize,
    row_offsets: Cow<'a, [usize]>,
    col_indices: Cow<'a, [u32]>,
    values: Cow<'a, [T]>,
}

impl<'a, T: Scalar> CsrCow<'a, T> {
    /// Checks the arrays as [`CsrView::new`] does.
    ///
    /// Shapes: `row_offsets.len() == nrows + 1`, `col_indices.len() ==
    /// values.len() == row_offsets[nrows]`.
    ///
    /// # Errors
    /// As [`CsrMatrix::new`].
    pub fn new(
        nrows: usize,
        ncols: usize,
        row_offsets: Cow<'a, [usize]>,
        col_indices: Cow<'a, [u32]>,
        values: Cow<'a, [T]>,
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

    /// Whether no array had to be converted (the product reads the
    /// caller's arrays only).
    pub fn is_borrowed(&self) -> bool {
        matches!(
            (&self.row_offsets, &self.col_indices, &self.values),
            (Cow::Borrowed(_), Cow::Borrowed(_), Cow::Borrowed(_))
        )
    }

    /// The matrix as a [`CsrView`].
    pub fn view(&self) -> CsrView<'_, T> {
        // Checked in `new`, and the arrays are not changed after.
        CsrView::trusted(
            self.nrows,
            self.ncols,
            &self.row_offsets,
            &self.col_indices,
            &self.values,
        )
    }

    /// An owned matrix (arrays that were borrowed are copied).
    pub fn into_matrix(self) -> CsrMatrix<T> {
        let (o, c, v) = (
            self.row_offsets.into_owned(),
            self.col_indices.into_owned(),
            self.values.into_owned(),
        );
        // SAFETY: checked in `new`.
        unsafe { CsrMatrix::new_unchecked(self.nrows, self.ncols, o, c, v) }
    }
}

impl<'b, T: Scalar> From<&'b CsrCow<'_, T>> for CsrView<'b, T> {
    fn from(m: &'b CsrCow<'_, T>) -> Self {
        m.view()
    }
}

/// `s` converted element by element to `U` on all cores, in blocks of
/// 64 Ki (rayon's search over single elements took about 8 ns an element
/// on two cores: 1.8 ms for the row offsets of a road network's two
/// operands, a third of its triangle count from Python); the first value
/// that does not fit is an [`Error::IndexOutOfRange`] naming `what`, its
/// position and `limit` (the largest value of `U`).
fn convert_indices<I, U>(s: &[I], what: &'static str, limit: u128) -> Result<Vec<U>>
where
    I: Copy + TryInto<U> + std::fmt::Display + Sync,
    U: bytemuck::Zeroable + Send,
{
    const BLOCK: usize = 1 << 16;
    let misfit = |x: &I| (*x).try_into().is_err();
    let bad = |b: &[I]| b.iter().fold(false, |bad, x| bad | misfit(x));
    if let Some(block) = s.par_chunks(BLOCK).position_first(bad) {
        let at = s[block * BLOCK..].iter().position(misfit).unwrap_or(0);
        let position = block * BLOCK + at;
        return Err(Error::IndexOutOfRange {
            what,
            position,
            value: s[position].to_string(),
            limit,
        });
    }
    let mut out: Vec<U> = try_zeroed(s.len(), what)?;
    out.par_chunks_mut(BLOCK)
        .zip(s.par_chunks(BLOCK))
        .for_each(|(out, s)| {
            for (d, &x) in out.iter_mut().zip(s) {
                if let Ok(v) = x.try_into() {
                    *d = v;
                }
            }
        });
    Ok(out)
}

/// Row offsets of any integer type as `usize` (a negative one is an
/// [`Error::IndexOutOfRange`]).
///
/// # Errors
/// [`Error::IndexOutOfRange`], [`Error::HostOutOfMemory`].
pub fn offsets_as_usize<I>(s: &[I]) -> Result<Vec<usize>>
where
    I: Copy + TryInto<usize> + std::fmt::Display + Sync,
{
    convert_indices(s, "row offset", usize::MAX as u128)
}

/// Column indices of any integer type as `u32` (a negative one, or one
/// past `u32::MAX`, is an [`Error::IndexOutOfRange`]).
///
/// # Errors
/// [`Error::IndexOutOfRange`], [`Error::HostOutOfMemory`].
pub fn indices_as_u32<I>(s: &[I]) -> Result<Vec<u32>>
where
    I: Copy + TryInto<u32> + std::fmt::Display + Sync,
{
    convert_indices(s, "column index", MAX_COLUMNS as u128)
}

/// `ours` converted to another library's index type `I` (`u32`, `i32`,
/// `usize`…), naming `what` when a value does not fit.
///
/// # Errors
/// [`Error::IndexOutOfRange`], [`Error::HostOutOfMemory`].
pub fn indices_to<I, U>(ours: &[U], what: &'static str, limit: u128) -> Result<Vec<I>>
where
    U: Copy + TryInto<I> + std::fmt::Display + Sync,
    I: bytemuck::Zeroable + Send,
{
    convert_indices(ours, what, limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_that_do_not_fit_are_errors_naming_their_position() {
        let e = indices_as_u32(&[0i64, 3, -1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "column index at position 2 is -1, outside 0..=4294967295"
        );
        assert!(matches!(
            indices_as_u32(&[1u64 << 32]),
            Err(Error::IndexOutOfRange { position: 0, .. })
        ));
        assert!(matches!(
            offsets_as_usize(&[0i32, -5]),
            Err(Error::IndexOutOfRange {
                what: "row offset",
                position: 1,
                ..
            })
        ));
        assert_eq!(indices_as_u32(&[0i32, 7]).unwrap(), vec![0u32, 7]);
    }

    #[test]
    fn a_cow_borrows_what_it_can_and_is_checked() {
        let (o, c, v) = (vec![0usize, 1, 2], vec![1i32, 0], vec![2.0f64, 3.0]);
        let m = CsrCow::new(
            2,
            2,
            Cow::Borrowed(&o[..]),
            Cow::Owned(indices_as_u32(&c).unwrap()),
            Cow::Borrowed(&v[..]),
        )
        .unwrap();
        assert!(!m.is_borrowed());
        assert_eq!(offsets_as_usize(&[0u32, 1, 2]).unwrap(), o);
        assert_eq!(m.view().col_indices(), &[1, 0]);
        assert_eq!(m.into_matrix().values(), &[2.0, 3.0]);
        let bad = CsrCow::new(
            2,
            1,
            Cow::Borrowed(&o[..]),
            Cow::Owned(vec![1, 0]),
            Cow::Borrowed(&v[..]),
        );
        assert!(matches!(
            bad,
            Err(Error::ColumnOutOfRange {
                row: 0,
                col: 1,
                ncols: 1
            })
        ));
    }
}
