//! The sequential reference SpGEMM every backend is tested against.
//!
//! Deliberately simple: for each row of A, list every product
//! `A(i,k)·B(k,j)` as a `(j, value)` pair, stable-sort the list by `j` and
//! add up equal columns in the order they were produced. Every structurally
//! produced entry is kept, even when its values cancel to zero.

use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::semiring::ProductSpec;

/// Checks that `A·B` is defined for A of shape `a` and B of shape `b`
/// (`(rows, columns)`).
///
/// # Errors
/// [`Error::DimensionMismatch`] unless A's columns equal B's rows.
pub fn check_dimensions(a: (usize, usize), b: (usize, usize)) -> Result<()> {
    if a.1 != b.0 {
        return Err(Error::DimensionMismatch {
            a_rows: a.0,
            a_cols: a.1,
            b_rows: b.0,
            b_cols: b.1,
        });
    }
    Ok(())
}

/// `C = A·B` computed sequentially; `A` is `M×K`, `B` is `K×N`, `C` is `M×N`
/// with sorted rows. Inputs may be unsorted and contain duplicates.
///
/// # Errors
/// [`Error::DimensionMismatch`], [`Error::HostOutOfMemory`].
pub fn multiply<'a, 'b, T: Scalar>(
    a: impl Into<CsrView<'a, T>>,
    b: impl Into<CsrView<'b, T>>,
) -> Result<CsrMatrix<T>> {
    multiply_with(a.into(), b.into(), |x, y| x * y)
}

/// `|A|·|B|` with the structure of `A·B`: the scale against which rounding
/// errors of `A·B` are measured (see [`crate::verify`]).
///
/// # Errors
/// As [`multiply`].
pub fn multiply_abs<'a, 'b, T: Scalar>(
    a: impl Into<CsrView<'a, T>>,
    b: impl Into<CsrView<'b, T>>,
) -> Result<CsrMatrix<T>> {
    multiply_with(a.into(), b.into(), |x, y| x.abs() * y.abs())
}

fn multiply_with<T: Scalar>(
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    product: impl Fn(T, T) -> T,
) -> Result<CsrMatrix<T>> {
    check_dimensions(a.shape(), b.shape())?;
    let mut offsets = vec![0usize; a.nrows() + 1];
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    let mut row: Vec<(u32, T)> = Vec::new();
    for i in 0..a.nrows() {
        row.clear();
        let (acols, avals) = a.row(i);
        for (&k, &av) in acols.iter().zip(avals) {
            let (bcols, bvals) = b.row(k as usize);
            row.extend(
                bcols
                    .iter()
                    .zip(bvals)
                    .map(|(&j, &bv)| (j, product(av, bv))),
            );
        }
        row.sort_by_key(|p| p.0);
        for &(j, v) in &row {
            if cols.len() > offsets[i] && *cols.last().unwrap() == j {
                *vals.last_mut().unwrap() += v;
            } else {
                cols.push(j);
                vals.push(v);
            }
        }
        offsets[i + 1] = cols.len();
    }
    CsrMatrix::new(a.nrows(), b.ncols(), offsets, cols, vals)
}

/// `C⟨M⟩ = A ⊕.⊗ B` (or `⟨¬M⟩`, or unmasked), pruned, as `spec` says,
/// computed sequentially: each row's products that the mask allows listed
/// as `(j, a_ik ⊗ b_kj)`, stable-sorted by `j`, folded with `⊕` in the
/// order produced, then pruned (columns: the whole C pruned as the rows
/// of its transpose). A `M×K`, B `K×N`, the mask and C `M×N`
/// with sorted rows. A repeated entry of A or B is a term of its own.
///
/// # Errors
/// As [`ProductSpec::check`]; [`Error::HostOutOfMemory`].
pub fn multiply_spec<T: Scalar>(
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    spec: &ProductSpec<'_, T>,
) -> Result<CsrMatrix<T>> {
    spec.check(a.shape(), b.shape())?;
    if spec.prune.columns {
        // C unpruned, then its columns pruned as the rows of Cᵀ.
        let mut whole = *spec;
        whole.prune = Default::default();
        let ct = multiply_spec(a, b, &whole)?.transpose()?;
        let mut prune = spec.prune;
        prune.columns = false;
        return prune_rows(&ct, &prune)?.transpose();
    }
    let ring = spec.semiring;
    let mut offsets = vec![0usize; a.nrows() + 1];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    let mut row: Vec<(u32, T)> = Vec::new();
    let mut out: Vec<(u32, T)> = Vec::new();
    let mut in_mask: Vec<u32> = Vec::new();
    for i in 0..a.nrows() {
        row.clear();
        in_mask.clear();
        if let Some(m) = &spec.mask {
            in_mask.extend_from_slice(m.row(i));
            in_mask.sort_unstable();
        }
        let allowed = |j: u32| match &spec.mask {
            None => true,
            Some(m) => in_mask.binary_search(&j).is_ok() != m.complement(),
        };
        let (acols, avals) = a.row(i);
        for (&k, &av) in acols.iter().zip(avals) {
            let (bcols, bvals) = b.row(k as usize);
            for (&j, &bv) in bcols.iter().zip(bvals) {
                if allowed(j) {
                    row.push((j, ring.times(av, bv)));
                }
            }
        }
        row.sort_by_key(|p| p.0);
        out.clear();
        for &(j, v) in &row {
            match out.last_mut() {
                Some(last) if last.0 == j => last.1 = ring.plus(last.1, v),
                _ => out.push((j, v)),
            }
        }
        spec.prune.row(&mut out);
        cols.extend(out.iter().map(|e| e.0));
        vals.extend(out.iter().map(|e| e.1));
        offsets[i + 1] = cols.len();
    }
    CsrMatrix::new(a.nrows(), b.ncols(), offsets, cols, vals)
}

/// `m` with each row pruned by `prune`.
fn prune_rows<T: Scalar>(
    m: &CsrMatrix<T>,
    prune: &crate::semiring::Prune<T>,
) -> Result<CsrMatrix<T>> {
    let mut offsets = vec![0usize; m.nrows() + 1];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    let mut row = Vec::new();
    for i in 0..m.nrows() {
        let (c, v) = m.row(i);
        row.clear();
        row.extend(c.iter().copied().zip(v.iter().copied()));
        prune.row(&mut row);
        cols.extend(row.iter().map(|e| e.0));
        vals.extend(row.iter().map(|e| e.1));
        offsets[i + 1] = cols.len();
    }
    CsrMatrix::new(m.nrows(), m.ncols(), offsets, cols, vals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense<const R: usize, const C: usize>(d: [[f64; C]; R]) -> CsrMatrix<f64> {
        let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
        for (i, row) in d.iter().enumerate() {
            for (j, &x) in row.iter().enumerate() {
                if x != 0.0 {
                    r.push(i);
                    c.push(j as u32);
                    v.push(x);
                }
            }
        }
        CsrMatrix::from_triplets(R, C, &r, &c, &v).unwrap()
    }

    #[test]
    fn hand_checked_3x3() {
        // [1 0 2]   [0 1 0]   [ 8 1 0]
        // [0 3 0] · [0 0 4] = [ 0 0 12]
        // [5 0 6]   [4 0 0]   [24 5 0]
        let c = multiply(
            &dense([[1., 0., 2.], [0., 3., 0.], [5., 0., 6.]]),
            &dense([[0., 1., 0.], [0., 0., 4.], [4., 0., 0.]]),
        )
        .unwrap();
        assert_eq!(c, dense([[8., 1., 0.], [0., 0., 12.], [24., 5., 0.]]));
    }

    #[test]
    fn hand_checked_rectangular_2x5_times_5x3() {
        let a = dense([[1., 0., 0., 2., 0.], [0., 0., 3., 0., -1.]]);
        let b = dense([
            [1., 2., 0.],
            [9., 9., 9.],
            [0., 0., 1.],
            [0., 1., 0.],
            [2., 0., 0.],
        ]);
        // row 0: 1*[1,2,0] + 2*[0,1,0] = [1,4,0]; row 1: 3*[0,0,1] - [2,0,0] = [-2,0,3]
        let c = multiply(&a, &b).unwrap();
        assert_eq!(c, dense([[1., 4., 0.], [-2., 0., 3.]]));
    }

    #[test]
    fn cancellation_keeps_explicit_zero() {
        // [1 1] · [1; -1] = [0], stored.
        let a = dense([[1., 1.]]);
        let b = dense([[1.], [-1.]]);
        let c = multiply(&a, &b).unwrap();
        assert_eq!(c.nnz(), 1);
        assert_eq!(c.values(), &[0.0]);
    }

    #[test]
    fn dimension_mismatch() {
        let a = dense([[1., 1.]]);
        let e = multiply(&a, &a).unwrap_err();
        assert!(matches!(
            e,
            Error::DimensionMismatch {
                a_rows: 1,
                a_cols: 2,
                b_rows: 1,
                b_cols: 2
            }
        ));
    }

    #[test]
    fn unsorted_input_with_duplicates() {
        // Row 0 of A stores column 1 twice (1 + 2 = 3) out of order.
        let a = CsrMatrix::new(1, 2, vec![0, 3], vec![1, 0, 1], vec![1.0, 5.0, 2.0]).unwrap();
        let b = dense([[1., 0.], [0., 1.]]);
        assert_eq!(multiply(&a, &b).unwrap(), dense([[5., 3.]]));
    }

    #[test]
    fn semirings_by_hand() {
        use crate::semiring::{ProductSpec, Semiring};
        // A = [1 2; 0 3], A ⊕.⊗ A over each semiring.
        let a = dense([[1., 2.], [0., 3.]]);
        let by = |semiring| {
            let spec = ProductSpec {
                semiring,
                ..Default::default()
            };
            multiply_spec(a.view(), a.view(), &spec)
                .unwrap()
                .values()
                .to_vec()
        };
        // (0,0): 1⊗1; (0,1): 1⊗2 ⊕ 2⊗3; (1,1): 3⊗3.
        assert_eq!(by(Semiring::PlusTimes), vec![1., 8., 9.]);
        assert_eq!(by(Semiring::MinPlus), vec![2., 3., 6.]);
        assert_eq!(by(Semiring::MaxPlus), vec![2., 5., 6.]);
        assert_eq!(by(Semiring::MaxTimes), vec![1., 6., 9.]);
        assert_eq!(by(Semiring::OrAnd), vec![1., 1., 1.]);
        assert_eq!(by(Semiring::PlusPair), vec![1., 2., 1.]);
        assert_eq!(by(Semiring::AnyPair), vec![1., 1., 1.]);
    }

    #[test]
    fn masks_and_complements_by_hand() {
        use crate::semiring::{Mask, ProductSpec};
        let a = dense([[1., 2.], [0., 3.]]);
        let m = dense([[0., 1.], [1., 1.]]);
        let masked = |complement| {
            let spec = ProductSpec {
                mask: Some(Mask::of(m.view(), complement)),
                ..Default::default()
            };
            multiply_spec(a.view(), a.view(), &spec).unwrap()
        };
        assert_eq!(masked(false), dense([[0., 8.], [0., 9.]]));
        assert_eq!(masked(true), dense([[1., 0.], [0., 0.]]));
    }
}
