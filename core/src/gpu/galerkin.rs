//! The Galerkin product `C = R·A·P` (`R = Pᵀ` for `Pᵀ·A·P`) on one
//! device, as algebraic multigrid's setup forms each coarse operator
//! (PETSc's `MatPtAP`, hypre's RAP): `A·P` then `R·(A·P)`, the
//! intermediate kept on the device, and both symbolic phases kept so that
//! new values of A (the same structure: AMG's re-setup) rerun only the two
//! numeric phases.

use super::engine::GpuEngine;
use super::matrix::{GpuMatrix, GpuMatrixRef, GpuPlan};
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::reference::check_dimensions;
use crate::scalar::Scalar;

/// Both symbolic phases of `R·A·P` on one device (R `Q×M`, A `M×K`, P
/// `K×L`, C `Q×L`), with R, A, P and `A·P` in its memory. Built by
/// [`GpuEngine::galerkin`] from the host (A's structure then kept on the
/// host too, to check a re-setup's A) or [`GpuEngine::galerkin_device`]
/// from matrices on the device.
pub struct GalerkinPlan<D: Device, T: Scalar> {
    r: GpuMatrix<D, T>,
    a: GpuMatrix<D, T>,
    p: GpuMatrix<D, T>,
    ap: GpuMatrix<D, T>,
    ap_plan: GpuPlan<D, T>,
    c_plan: GpuPlan<D, T>,
}

impl<D: Device, T: Scalar> GalerkinPlan<D, T> {
    /// nnz of `R·A·P`.
    pub fn nnz(&self) -> usize {
        self.c_plan.nnz()
    }

    /// nnz of the intermediate `A·P`.
    pub fn intermediate_nnz(&self) -> usize {
        self.ap.nnz()
    }

    /// A as the plan holds it: its structure, to give new values to
    /// ([`GpuEngine::with_values`], `borrow_device_values`) for
    /// [`GpuEngine::galerkin_numeric_device`].
    pub fn a(&self) -> &GpuMatrix<D, T> {
        &self.a
    }

    /// A's row offsets (`M + 1`) where the plan keeps them on the host
    /// (built from the host): a caller holding A's offsets in another
    /// integer type may pass these once they compare equal, rather than
    /// convert its own.
    pub fn a_host_row_offsets(&self) -> Option<&[usize]> {
        self.a.structure.host.as_ref().map(|(o, _)| o.as_slice())
    }
}

impl<D: Device> GpuEngine<D> {
    /// `C = R·A·P` (R `Q×M`, A `M×K`, P `K×L`; `r = None` means `Pᵀ`,
    /// formed on the device from P there: [`GpuEngine::transpose_device`])
    /// with a plan that recomputes it for new values of A
    /// ([`GpuEngine::galerkin_numeric`]). `A·P` stays on the device between
    /// the two products.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] naming the pair at fault; as
    /// [`GpuEngine::multiply`].
    pub fn galerkin<T: Scalar>(
        &self,
        r: Option<CsrView<'_, T>>,
        a: CsrView<'_, T>,
        p: CsrView<'_, T>,
    ) -> Result<(GalerkinPlan<D, T>, CsrMatrix<T>)> {
        check_dimensions(a.shape(), p.shape())?;
        if let Some(r) = &r {
            check_dimensions(r.shape(), a.shape())?;
        }
        // A's structure kept on the host as well, to check a re-setup's A
        // there.
        let ga = self.upload_with(a, true)?;
        let gp = self.upload_with(p, false)?;
        let gr = r.map(|r| self.upload_with(r, false)).transpose()?;
        let (plan, c) = self.galerkin_device(gr, ga, gp)?;
        Ok((plan, self.download(&c)?))
    }

    /// [`GpuEngine::galerkin`] of matrices on the device (`r = None`: `Pᵀ`
    /// formed here), C left there. The plan holds R, A and P: borrowed
    /// arrays must outlive it, unchanged but for A's values.
    ///
    /// # Errors
    /// As [`GpuEngine::galerkin`].
    pub fn galerkin_device<T: Scalar>(
        &self,
        r: Option<GpuMatrix<D, T>>,
        a: GpuMatrix<D, T>,
        p: GpuMatrix<D, T>,
    ) -> Result<(GalerkinPlan<D, T>, GpuMatrix<D, T>)> {
        check_dimensions((a.nrows, a.ncols), (p.nrows, p.ncols))?;
        let r = match r {
            Some(r) => {
                check_dimensions((r.nrows, r.ncols), (a.nrows, a.ncols))?;
                r
            }
            None => {
                check_dimensions((p.ncols, p.nrows), (a.nrows, a.ncols))?;
                self.transpose_device(&p)?
            }
        };
        let ap_plan = self.symbolic(&a, &p)?;
        let (ap, _) = self.numeric(&ap_plan, &a, &p)?;
        let c_plan = self.symbolic(&r, &ap)?;
        let (c, _) = self.numeric(&c_plan, &r, &ap)?;
        let plan = GalerkinPlan {
            r,
            a,
            p,
            ap,
            ap_plan,
            c_plan,
        };
        Ok((plan, c))
    }

    /// `R·A·P` again for `a` of the structure `plan` was built for, with
    /// new values: the two numeric phases only.
    ///
    /// # Errors
    /// [`Error::StructureMismatch`] naming what differs in A; as
    /// [`GpuEngine::numeric`].
    pub fn galerkin_numeric<T: Scalar>(
        &self,
        plan: &GalerkinPlan<D, T>,
        a: CsrView<'_, T>,
    ) -> Result<CsrMatrix<T>> {
        let c = self.galerkin_numeric_host(plan, a)?;
        self.download(&c)
    }

    /// [`GpuEngine::galerkin_numeric`] writing only C's values, into
    /// `values`: nnz(C) of them, in the order of C's entries as
    /// [`GpuEngine::galerkin`] returned C (A's values do not change C's
    /// structure). A re-setup then refills the C its setup returned, as
    /// PETSc's `MatPtAP` with `MAT_REUSE_MATRIX` does: no new host arrays,
    /// and only the values cross the bus back.
    ///
    /// # Errors
    /// [`Error::StructureMismatch`] naming what differs in A, or when
    /// `values` does not hold nnz(C) values; as [`GpuEngine::numeric`].
    pub fn galerkin_numeric_values<T: Scalar>(
        &self,
        plan: &GalerkinPlan<D, T>,
        a: CsrView<'_, T>,
        values: &mut [T],
    ) -> Result<()> {
        if values.len() != plan.nnz() {
            return Err(Error::StructureMismatch(format!(
                "C of the Galerkin plan has {} entries, but room for {} values was given",
                plan.nnz(),
                values.len()
            )));
        }
        let c = self.galerkin_numeric_host(plan, a)?;
        self.download_values(&c, values)
    }

    /// The two numeric phases for A from the host: its structure checked
    /// against the plan's host copy on the cores while its values cross
    /// the bus; C left on the device.
    fn galerkin_numeric_host<T: Scalar>(
        &self,
        plan: &GalerkinPlan<D, T>,
        a: CsrView<'_, T>,
    ) -> Result<GpuMatrix<D, T>> {
        let Some((offsets, cols)) = &plan.a.structure.host else {
            return Err(Error::StructureMismatch(
                "A is not the matrix the Galerkin plan was built for: the plan was built on the device, and takes A there".into(),
            ));
        };
        let built = crate::structure::Structure {
            nrows: plan.a.nrows,
            ncols: plan.a.ncols,
            row_offsets: offsets,
            col_indices: cols,
        };
        // A mismatch discards the values sent.
        let (differs, ga) = rayon::join(
            || built.difference(&a.structure()),
            || self.with_values(&plan.a, a.values()),
        );
        if let Some(what) = differs {
            return Err(Error::StructureMismatch(format!(
                "A is not the matrix the Galerkin plan was built for: it {what}"
            )));
        }
        self.galerkin_numeric_device(plan, &ga?)
    }

    /// [`GpuEngine::galerkin_numeric`] for A on the device: `a` shares the
    /// plan's A structure ([`GalerkinPlan::a`] given new values), C left
    /// on the device.
    ///
    /// # Errors
    /// [`Error::StructureMismatch`] when `a` has another structure; as
    /// [`GpuEngine::numeric`].
    pub fn galerkin_numeric_device<T: Scalar>(
        &self,
        plan: &GalerkinPlan<D, T>,
        a: &GpuMatrix<D, T>,
    ) -> Result<GpuMatrix<D, T>> {
        if let Some(what) = GpuMatrixRef::of(&plan.a).difference(a) {
            return Err(Error::StructureMismatch(format!(
                "A is not the matrix the Galerkin plan was built for: it {what}"
            )));
        }
        let (ap, _) = self.numeric(&plan.ap_plan, a, &plan.p)?;
        // The plan's numeric phase writes A·P's columns as its first run
        // did (sorted rows of the same structure): its values go with the
        // structure the second plan was built on.
        let ap = GpuMatrix {
            structure: plan.ap.structure.clone(),
            ..ap
        };
        Ok(self.numeric(&plan.c_plan, &plan.r, &ap)?.0)
    }

    /// `C = R·A·P` as [`GpuEngine::galerkin`] computes it, without a plan:
    /// each product's phases as [`GpuEngine::multiply`] chooses them (one
    /// pass where a row's products bound its size), A and P freed once
    /// `A·P` is formed, no host copy of any structure kept.
    ///
    /// # Errors
    /// As [`GpuEngine::galerkin`].
    pub fn galerkin_once<T: Scalar>(
        &self,
        r: Option<CsrView<'_, T>>,
        a: CsrView<'_, T>,
        p: CsrView<'_, T>,
    ) -> Result<CsrMatrix<T>> {
        check_dimensions(a.shape(), p.shape())?;
        let (ap, gr) = match r {
            Some(r) => {
                check_dimensions(r.shape(), a.shape())?;
                let [gr, ga, gp] = self.upload_all([r, a, p], false)?;
                (self.multiply(&ga, &gp)?.0, gr)
            }
            None => {
                check_dimensions((p.ncols(), p.nrows()), a.shape())?;
                let [ga, gp] = self.upload_all([a, p], false)?;
                let gr = self.transpose_device(&gp)?;
                (self.multiply(&ga, &gp)?.0, gr)
            }
        };
        let (c, _) = self.multiply(&gr, &ap)?;
        drop((gr, ap));
        self.download(&c)
    }
}
