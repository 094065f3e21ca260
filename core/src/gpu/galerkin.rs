//! The Galerkin product `C = R·A·P` (`R = Pᵀ` for `Pᵀ·A·P`) on one
//! device, as algebraic multigrid's setup forms each coarse operator
//! (PETSc's `MatPtAP`, hypre's RAP): `A·P` then `R·(A·P)`, the
//! intermediate kept on the device, and both symbolic phases kept so that
//! new values of A (the same structure: AMG's re-setup) rerun only the two
//! numeric phases.

use super::engine::GpuEngine;
use super::matrix::{GpuMatrix, GpuPlan};
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::{try_copied, Error, Result};
use crate::reference::check_dimensions;
use crate::scalar::Scalar;

/// Both symbolic phases of `R·A·P` on one device (R `Q×M`, A `M×K`, P
/// `K×L`, C `Q×L`), with R, A, P and `A·P` in its memory. Built by
/// [`GpuEngine::galerkin`].
pub struct GalerkinPlan<D: Device, T: Scalar> {
    r: GpuMatrix<D, T>,
    a: GpuMatrix<D, T>,
    p: GpuMatrix<D, T>,
    ap: GpuMatrix<D, T>,
    ap_plan: GpuPlan<D, T>,
    c_plan: GpuPlan<D, T>,
    a_offsets: Vec<usize>,
    a_cols: Vec<u32>,
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
}

impl<D: Device> GpuEngine<D> {
    /// `C = R·A·P` (R `Q×M`, A `M×K`, P `K×L`; `r = None` means `Pᵀ`,
    /// formed on the device from P there: [`GpuEngine::transpose_device`]) with a plan that recomputes
    /// it for new values of A ([`GpuEngine::galerkin_numeric`]). `A·P`
    /// stays on the device between the two products.
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
        } else {
            check_dimensions((p.ncols(), p.nrows()), a.shape())?;
        }
        let [ga, gp] = self.upload_all([a, p], false)?;
        let gr = match r {
            Some(r) => self.upload(r)?,
            None => self.transpose_device(&gp)?,
        };
        let ap_plan = self.symbolic(&ga, &gp)?;
        let (ap, _) = self.numeric(&ap_plan, &ga, &gp)?;
        let c_plan = self.symbolic(&gr, &ap)?;
        let (c, _) = self.numeric(&c_plan, &gr, &ap)?;
        let plan = GalerkinPlan {
            r: gr,
            a: ga,
            p: gp,
            ap,
            ap_plan,
            c_plan,
            a_offsets: try_copied(a.row_offsets(), "row offsets")?,
            a_cols: try_copied(a.col_indices(), "column indices")?,
        };
        Ok((plan, self.download(&c)?))
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
        let built = crate::structure::Structure {
            nrows: plan.a.nrows,
            ncols: plan.a.ncols,
            row_offsets: &plan.a_offsets,
            col_indices: &plan.a_cols,
        };
        // A's structure is checked on the cores while its values cross
        // the bus; a mismatch discards them.
        let (differs, ga) = rayon::join(
            || built.difference(&a.structure()),
            || self.with_values(&plan.a, a.values()),
        );
        if let Some(what) = differs {
            return Err(Error::StructureMismatch(format!(
                "A is not the matrix the Galerkin plan was built for: it {what}"
            )));
        }
        let ga = ga?;
        let (ap, _) = self.numeric(&plan.ap_plan, &ga, &plan.p)?;
        // The plan's numeric phase writes A·P's columns as its first run
        // did (sorted rows of the same structure): its values go with the
        // structure the second plan was built on.
        let ap = GpuMatrix {
            structure: plan.ap.structure.clone(),
            ..ap
        };
        let (c, _) = self.numeric(&plan.c_plan, &plan.r, &ap)?;
        self.download(&c)
    }
}
