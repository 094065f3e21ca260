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

/// Checks only rows `rows` of `c` against the reference (for products too
/// large for the full sequential reference): those rows of A times B.
///
/// # Errors
/// As [`check_product`]; row numbers in the [`Mismatch`] are rows of C.
pub fn check_rows<T: Scalar>(
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    c: &CsrMatrix<T>,
    rows: &[usize],
) -> Result<Result<(), Mismatch>> {
    if c.shape() != (a.nrows(), b.ncols()) {
        return Ok(Err(Mismatch::Shape {
            expected: (a.nrows(), b.ncols()),
            got: c.shape(),
        }));
    }
    let pick = |m: &CsrMatrix<T>| -> Result<CsrMatrix<T>> {
        let mut offsets = vec![0usize];
        let (mut cols, mut vals) = (Vec::new(), Vec::new());
        for &i in rows {
            let (rc, rv) = m.row(i);
            cols.extend_from_slice(rc);
            vals.extend_from_slice(rv);
            offsets.push(cols.len());
        }
        CsrMatrix::new(rows.len(), m.ncols(), offsets, cols, vals)
    };
    let result = check_product(&pick(a)?, b, &pick(c)?)?;
    Ok(result.map_err(|m| match m {
        Mismatch::RowLength { row, expected, got } => Mismatch::RowLength {
            row: rows[row],
            expected,
            got,
        },
        Mismatch::Column {
            row,
            position,
            expected,
            got,
        } => Mismatch::Column {
            row: rows[row],
            position,
            expected,
            got,
        },
        Mismatch::Value {
            row,
            col,
            expected,
            got,
            tolerance,
        } => Mismatch::Value {
            row: rows[row],
            col,
            expected,
            got,
            tolerance,
        },
        other => other,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_rows_find_a_planted_error() {
        let a = crate::generate::uniform::<f64>(200, 200, 8, 1).unwrap();
        let c = crate::reference::multiply(&a, &a).unwrap();
        assert_eq!(check_rows(&a, &a, &c, &[0, 17, 199]).unwrap(), Ok(()));
        let mut bad = c.clone();
        let p = bad.row_offsets()[17];
        bad.values_mut()[p] += 1.0;
        let e = check_rows(&a, &a, &bad, &[0, 17, 199])
            .unwrap()
            .unwrap_err();
        assert!(matches!(e, Mismatch::Value { row: 17, .. }), "{e}");
    }
}
