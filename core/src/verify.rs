//! Checking a computed product against the reference.
//!
//! Structure must match exactly (same row offsets and columns). Values may
//! differ by rounding: summation order differs between backends, so entry
//! `(i,j)` passes when `|c - ĉ| ≤ 4·ε·(nnz(A(i,:)) + 1)·(|A|·|B|)(i,j)`,
//! twice the classical bound `γ_n·|A||B|` on a dot product's error.

use crate::csr::CsrMatrix;
use crate::error::Result;
use crate::reference;
use crate::scalar::Scalar;

/// The first difference found between a computed product and the reference.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Mismatch {
    /// Shapes differ.
    #[error("shape is {got:?}, expected {expected:?}")]
    Shape {
        /// Reference shape.
        expected: (usize, usize),
        /// Computed shape.
        got: (usize, usize),
    },
    /// Row `row` has a different number of entries.
    #[error("row {row} has {got} entries, expected {expected}")]
    RowLength {
        /// Row.
        row: usize,
        /// Reference count.
        expected: usize,
        /// Computed count.
        got: usize,
    },
    /// A column differs (wrong or unsorted structure).
    #[error("row {row}, position {position}: column {got}, expected {expected}")]
    Column {
        /// Row.
        row: usize,
        /// Position within the row.
        position: usize,
        /// Reference column.
        expected: u32,
        /// Computed column.
        got: u32,
    },
    /// A value is outside the rounding tolerance.
    #[error("entry ({row}, {col}): value {got}, expected {expected} (tolerance {tolerance:e})")]
    Value {
        /// Row.
        row: usize,
        /// Column.
        col: u32,
        /// Reference value.
        expected: f64,
        /// Computed value.
        got: f64,
        /// Allowed difference.
        tolerance: f64,
    },
}

/// Checks `c` against the reference product `A·B`.
///
/// # Errors
/// The outer `Result` fails for dimension mismatch or host memory; the inner
/// one names the first [`Mismatch`].
pub fn check_product<T: Scalar>(
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    c: &CsrMatrix<T>,
) -> Result<Result<(), Mismatch>> {
    let expected = reference::multiply(a, b)?;
    let scale = reference::multiply_abs(a, b)?;
    Ok(compare(&expected, &scale, c, a.max_row_nnz()))
}

/// Compares `c` with `expected`, allowing per entry `4·ε·(k+1)·scale(i,j)`
/// where `k` bounds the length of the dot products (see module docs).
pub fn compare<T: Scalar>(
    expected: &CsrMatrix<T>,
    scale: &CsrMatrix<T>,
    c: &CsrMatrix<T>,
    k: usize,
) -> Result<(), Mismatch> {
    if expected.shape() != c.shape() {
        return Err(Mismatch::Shape {
            expected: expected.shape(),
            got: c.shape(),
        });
    }
    let rel = 4.0 * T::EPSILON.to_f64() * (k as f64 + 1.0);
    for i in 0..expected.nrows() {
        let (ec, ev) = expected.row(i);
        let (cc, cv) = c.row(i);
        let (_, sv) = scale.row(i);
        if ec.len() != cc.len() {
            return Err(Mismatch::RowLength {
                row: i,
                expected: ec.len(),
                got: cc.len(),
            });
        }
        for p in 0..ec.len() {
            if ec[p] != cc[p] {
                return Err(Mismatch::Column {
                    row: i,
                    position: p,
                    expected: ec[p],
                    got: cc[p],
                });
            }
            let (e, g) = (ev[p].to_f64(), cv[p].to_f64());
            let tolerance = rel * sv[p].to_f64() + f64::from(f32::MIN_POSITIVE);
            let ok = (e - g).abs() <= tolerance || (e.is_nan() && g.is_nan()) || e == g;
            if !ok {
                return Err(Mismatch::Value {
                    row: i,
                    col: ec[p],
                    expected: e,
                    got: g,
                    tolerance,
                });
            }
        }
    }
    Ok(())
}
