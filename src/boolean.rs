//! Boolean matrices ([`Bool`](crate::Bool)) on GPU backends, whose
//! kernels take no one-byte values: the operands' values widened to `i32`
//! 0 and 1 (their structure read in place), the semiring replaced by one
//! whose `i32` results are the Boolean ones, and C's values narrowed back
//! (nonzero is true). `plus_times`, `max_times` and `lor_land` on booleans
//! are all `lor_land`, and `plus_pair` and `any_pair` both `any_pair`:
//! their `i32` products hold exactly 0 and 1, so that a threshold and the
//! `k` largest select what they select on booleans. `min_plus` (`land_lor`
//! on booleans) and `max_plus` (`lor_lor`) run as themselves on 0 and 1,
//! whose results (0 to 2) are true where at least 1; those are pruned on
//! the host once narrowed.

use crate::{Backend, CsrMatrix, CsrView, ProductSpec, Result, Scalar};
use spgemm_core::semiring::{pruned, Prune, Semiring};

/// The values of `m` as `i32` 0 and 1.
fn widened_values<T: Scalar>(m: CsrView<'_, T>) -> Vec<i32> {
    m.values()
        .iter()
        .map(|&v| i32::from(v != T::ZERO))
        .collect()
}

/// `m`'s structure with `values` (as many as `m`'s entries).
fn with_values<'a, U: Scalar>(m: CsrView<'a, impl Scalar>, values: &'a [U]) -> CsrView<'a, U> {
    // SAFETY: the structure is a checked view's, and `values` has one
    // value per entry.
    unsafe {
        CsrView::new_unchecked(
            m.nrows(),
            m.ncols(),
            m.row_offsets(),
            m.col_indices(),
            values,
        )
    }
}

/// C's values narrowed from `i32` (nonzero is true).
fn narrowed<T: Scalar>(c: CsrMatrix<i32>) -> CsrMatrix<T> {
    c.map(|v| if v != 0 { T::ONE } else { T::ZERO })
}

/// The `i32` semiring computing `semiring` on booleans, and whether its
/// results are exactly 0 and 1.
fn on_integers(semiring: Semiring) -> (Semiring, bool) {
    match semiring {
        Semiring::PlusTimes | Semiring::MaxTimes | Semiring::OrAnd => (Semiring::OrAnd, true),
        Semiring::PlusPair | Semiring::AnyPair => (Semiring::AnyPair, true),
        Semiring::MinPlus | Semiring::MaxPlus => (semiring, false),
    }
}

impl Backend {
    /// Whether this backend takes `T`'s values widened: a GPU backend and
    /// a type its kernels do not take.
    pub(crate) fn widens<T: Scalar>(&self) -> bool {
        !T::DEVICE && !matches!(self, Backend::Cpu(_))
    }

    /// `run` on `a` and `b` widened to `i32` with `spec` carried over
    /// (semiring replaced, threshold as 0 or 1 where the results are 0
    /// and 1; no pruning otherwise), and C narrowed back and, where the
    /// integer product could not prune it, pruned on the host.
    pub(crate) fn widened<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        spec: &ProductSpec<'_, T>,
        run: impl FnOnce(
            CsrView<'_, i32>,
            CsrView<'_, i32>,
            &ProductSpec<'_, i32>,
        ) -> Result<CsrMatrix<i32>>,
    ) -> Result<CsrMatrix<T>> {
        let (semiring, exact) = on_integers(spec.semiring);
        let prune = Prune {
            below: spec
                .prune
                .below
                .filter(|_| exact)
                .map(|t| i32::from(t != T::ZERO)),
            keep: spec.prune.keep.filter(|_| exact),
            columns: spec.prune.columns,
        };
        let wide = ProductSpec {
            semiring,
            mask: spec.mask,
            prune,
        };
        let va = widened_values(a);
        let c = if a.same_arrays(&b) {
            let a = with_values(a, &va);
            run(a, a, &wide)?
        } else {
            let vb = widened_values(b);
            run(with_values(a, &va), with_values(b, &vb), &wide)?
        };
        let c = narrowed(c);
        if exact || spec.prune.is_none() {
            return Ok(c);
        }
        Ok(pruned(&c, &spec.prune)?)
    }
}

#[cfg(test)]
mod tests {
    use super::on_integers;
    use spgemm_core::semiring::{ProductSpec, Semiring};
    use spgemm_core::{reference, Bool, CsrMatrix};

    /// Every semiring's `i32` stand-in, on 0 and 1 and narrowed, gives the
    /// Boolean product's values, and is exact where it says so.
    #[test]
    fn integer_semirings_compute_the_boolean_ones() {
        let a = spgemm_core::generate::uniform::<f64>(40, 30, 6, 3).unwrap();
        let b = spgemm_core::generate::uniform::<f64>(30, 50, 5, 4).unwrap();
        // About a third of the stored values false.
        let bits = |m: &CsrMatrix<f64>| m.map(|v| Bool::new(v > 0.33));
        let (ab, bb) = (bits(&a), bits(&b));
        let (ai, bi) = (
            ab.map(|v| i32::from(v.get())),
            bb.map(|v| i32::from(v.get())),
        );
        for s in Semiring::ALL {
            let want =
                reference::multiply_spec(ab.view(), bb.view(), &ProductSpec::new().semiring(s))
                    .unwrap();
            let (t, exact) = on_integers(s);
            let got =
                reference::multiply_spec(ai.view(), bi.view(), &ProductSpec::new().semiring(t))
                    .unwrap();
            if exact {
                assert!(got.values().iter().all(|&v| v == 0 || v == 1), "{s:?}");
            }
            assert_eq!(super::narrowed::<Bool>(got), want, "{s:?}");
        }
    }
}
