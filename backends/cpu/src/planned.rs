//! A product and its plan in one call: C = A·B computed as
//! [`CpuBackend::multiply`] would (in one pass where every row is short),
//! with the plan a later numeric phase reruns, its C row offsets taken
//! from C rather than from a symbolic phase of their own.

use crate::accumulator::PlusTimes;
use crate::{one_pass, prefetch, Accumulators, CpuBackend, CpuPlan, Setup, Shortcuts, Structure};
use spgemm_core::error::try_copied;
use spgemm_core::{CsrMatrix, CsrView, Result, Scalar};

impl CpuBackend {
    /// `C = A·B` (A `M×K`, B `K×N`, rows sorted) and the plan of its
    /// symbolic phase, equal to [`CpuBackend::symbolic`]'s: when no row of
    /// A has more than a short row's products, C is computed in one pass
    /// (Nagasaka, Matsuoka, Azad and Buluç, "Performance optimization,
    /// modeling and analysis of sparse matrix-matrix products on multi-core
    /// and many-core processors", Parallel Computing 90, 2019, §4.2) and the
    /// plan takes C's row offsets, so the symbolic phase does not run
    /// apart; otherwise both phases run, the symbolic one kept. For setups
    /// that rerun the numeric phase later (algebraic multigrid's Galerkin
    /// products).
    ///
    /// # Errors
    /// As [`CpuBackend::multiply`].
    pub fn multiply_planned<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<(CpuPlan, CsrMatrix<T>)> {
        let (a, b) = (a.into(), b.into());
        self.run(|| {
            let setup = Setup::of(a, b)?;
            let shortcuts = Shortcuts::of(&a, &b);
            let (c_row_offsets, chunks, total_nprod, shortcuts, compressed, c) =
                if one_pass::short(setup.max_nprod) {
                    let prefetch = prefetch::worth_it(&a);
                    let accumulators = Accumulators::new(self.kind(&b, prefetch), b.ncols());
                    let c = one_pass::multiply(
                        PlusTimes,
                        a,
                        b,
                        &setup.chunks,
                        &accumulators,
                        prefetch,
                    )?;
                    let offsets = try_copied(c.row_offsets(), "C row offsets")?;
                    (offsets, setup.chunks, setup.total_nprod, shortcuts, None, c)
                } else {
                    let s = self.symbolic_parts(a, b, setup, shortcuts)?;
                    let offsets = try_copied(&s.offsets, "C row offsets")?;
                    let (chunks, compressed) = (&s.chunks, s.compressed.as_ref());
                    let c = self.numeric_parts(
                        PlusTimes,
                        a,
                        b,
                        s.offsets,
                        chunks,
                        &s.shortcuts,
                        compressed,
                    )?;
                    (
                        offsets,
                        s.chunks,
                        s.total_nprod,
                        s.shortcuts,
                        s.compressed.map(Box::new),
                        c,
                    )
                };
            let plan = CpuPlan {
                a: Structure::of(a),
                b: Structure::of(b),
                c_row_offsets,
                chunks,
                total_nprod,
                shortcuts,
                compressed,
            };
            Ok((plan, c))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::CpuBackend;
    use spgemm_core::{generate, CsrMatrix};

    /// `multiply_planned` against `multiply` and against a plan of
    /// `symbolic`, bit for bit, and its plan rerun for new values against
    /// that plan's numeric phase.
    fn planned_equals_both_phases(a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) {
        let bits =
            |m: &CsrMatrix<f64>| -> Vec<u64> { m.values().iter().map(|v| v.to_bits()).collect() };
        for threads in [1, 3] {
            let cpu = CpuBackend::with_threads(threads).unwrap();
            let (plan, c) = cpu.multiply_planned(a, b).unwrap();
            let both = cpu.symbolic(a, b).unwrap();
            let want = cpu.numeric(&both, a, b).unwrap();
            assert_eq!(plan.nnz(), want.nnz());
            assert_eq!(c.row_offsets(), want.row_offsets());
            assert_eq!(c.col_indices(), want.col_indices());
            assert_eq!(bits(&c), bits(&want));
            let b2 = b.map(|v| 0.5 * v - 1.0);
            let again = cpu.numeric(&plan, a, &b2).unwrap();
            let want = cpu.numeric(&both, a, &b2).unwrap();
            assert_eq!(again.row_offsets(), want.row_offsets());
            assert_eq!(again.col_indices(), want.col_indices());
            assert_eq!(bits(&again), bits(&want));
            spgemm_core::verify::check_product(a, &b2, &again)
                .unwrap()
                .unwrap();
        }
    }

    #[test]
    fn short_rows_planned_in_one_pass() {
        // A·P of an AMG pair: every row at most 7 × 8 products.
        let a: CsrMatrix<f64> = generate::poisson_7(12).unwrap();
        let p: CsrMatrix<f64> = generate::sa_prolongator(12).unwrap();
        let setup = crate::Setup::of(a.view(), p.view()).unwrap();
        assert!(crate::one_pass::short(setup.max_nprod));
        planned_equals_both_phases(&a, &p);
    }

    #[test]
    fn long_rows_planned_in_two_phases() {
        // Pᵀ·(A·P): rows of hundreds of products.
        let a: CsrMatrix<f64> = generate::poisson_7(12).unwrap();
        let p: CsrMatrix<f64> = generate::sa_prolongator(12).unwrap();
        let ap = CpuBackend::new().multiply(&a, &p).unwrap();
        let pt = p.transpose().unwrap();
        let setup = crate::Setup::of(pt.view(), ap.view()).unwrap();
        assert!(!crate::one_pass::short(setup.max_nprod));
        planned_equals_both_phases(&pt, &ap);
    }
}
