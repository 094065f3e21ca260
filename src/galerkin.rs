//! Galerkin products `Pᵀ·A·P` and `R·A·P` on every backend, with the
//! structure kept for new values of A (algebraic multigrid's setup and
//! re-setup: PETSc's `MatPtAP` with `MAT_REUSE_MATRIX`, hypre's RAP), and
//! products with a transposed operand.

use crate::{Backend, CpuPlan, CsrMatrix, CsrView, Error, Result, Scalar};

/// `C = R·A·P` (R `Q×M`, A `M×K`, P `K×L`, C `Q×L`; R is Pᵀ for
/// [`Backend::ptap`]) as two products, `A·P` then `R·(A·P)`, with both
/// symbolic phases kept: [`Galerkin::numeric`] recomputes C for new values
/// of A (the same structure) with the two numeric phases only. Built by
/// [`Backend::galerkin`]; GPU backends keep R, A, P and `A·P` on their
/// first device.
pub struct Galerkin<T: Scalar> {
    inner: Inner<T>,
}

enum Inner<T: Scalar> {
    Cpu {
        r: CsrMatrix<T>,
        p: CsrMatrix<T>,
        ap: CpuPlan,
        c: CpuPlan,
    },
    #[cfg(feature = "cuda")]
    Cuda(crate::gpu::GalerkinPlan<crate::CudaDevice, T>),
    #[cfg(feature = "hip")]
    Hip(crate::gpu::GalerkinPlan<crate::HipDevice, T>),
}

/// Which operands of a product are transposed: `Aᵀ·B`, `A·Bᵀ` or `Aᵀ·Bᵀ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transposed {
    /// `Aᵀ·B`.
    A,
    /// `A·Bᵀ`.
    B,
    /// `Aᵀ·Bᵀ`.
    Both,
}

impl Transposed {
    /// The shapes (rows, columns) of `op(A)` and `op(B)` for A and B as
    /// given.
    pub(crate) fn shapes<T: Scalar>(
        self,
        a: &CsrView<'_, T>,
        b: &CsrView<'_, T>,
    ) -> ((usize, usize), (usize, usize)) {
        let flip = |(r, c): (usize, usize), t: bool| if t { (c, r) } else { (r, c) };
        (
            flip(a.shape(), matches!(self, Transposed::A | Transposed::Both)),
            flip(b.shape(), matches!(self, Transposed::B | Transposed::Both)),
        )
    }
}

impl<T: Scalar> Galerkin<T> {
    /// nnz of C.
    pub fn nnz(&self) -> usize {
        match &self.inner {
            Inner::Cpu { c, .. } => c.nnz(),
            #[cfg(feature = "cuda")]
            Inner::Cuda(g) => g.nnz(),
            #[cfg(feature = "hip")]
            Inner::Hip(g) => g.nnz(),
        }
    }

    /// `C = R·A·P` for `a` with the structure the plan was built for and
    /// new values, on the backend that built it.
    ///
    /// # Errors
    /// [`Error::PlanBackend`] for another backend; `StructureMismatch`
    /// (in [`Error::Core`]) naming what differs in A; as
    /// [`Backend::multiply`].
    pub fn numeric<'a>(
        &self,
        backend: &Backend,
        a: impl Into<CsrView<'a, T>>,
    ) -> Result<CsrMatrix<T>> {
        let a = a.into();
        match (backend, &self.inner) {
            (Backend::Cpu(cpu), Inner::Cpu { r, p, ap, c }) => {
                let ap_values = cpu.numeric(ap, a, p).map_err(|e| in_a(e, "A·P"))?;
                Ok(cpu.numeric(c, r, &ap_values)?)
            }
            #[cfg(feature = "cuda")]
            (Backend::Cuda(m), Inner::Cuda(g)) => Ok(m.engines()[0].galerkin_numeric(g, a)?),
            #[cfg(feature = "hip")]
            (Backend::Hip(m), Inner::Hip(g)) => Ok(m.engines()[0].galerkin_numeric(g, a)?),
            #[allow(unreachable_patterns)] // reachable with a GPU feature
            _ => Err(Error::PlanBackend {
                built: self.backend(),
                used: backend.name(),
            }),
        }
    }

    /// [`Galerkin::numeric`] writing only C's values, into `values`: nnz(C)
    /// of them, in the order of C's entries as [`Backend::galerkin`]
    /// returned C (A's values do not change C's structure). A re-setup
    /// then refills the C its setup returned, as PETSc's `MatPtAP` with
    /// `MAT_REUSE_MATRIX` does; GPU backends move only the values back.
    ///
    /// # Errors
    /// As [`Galerkin::numeric`]; `StructureMismatch` (in [`Error::Core`])
    /// when `values` does not hold nnz(C) values.
    pub fn numeric_values<'a>(
        &self,
        backend: &Backend,
        a: impl Into<CsrView<'a, T>>,
        values: &mut [T],
    ) -> Result<()> {
        let a = a.into();
        match (backend, &self.inner) {
            #[cfg(feature = "cuda")]
            (Backend::Cuda(m), Inner::Cuda(g)) => {
                Ok(m.engines()[0].galerkin_numeric_values(g, a, values)?)
            }
            #[cfg(feature = "hip")]
            (Backend::Hip(m), Inner::Hip(g)) => {
                Ok(m.engines()[0].galerkin_numeric_values(g, a, values)?)
            }
            _ => {
                if values.len() != self.nnz() {
                    return Err(spgemm_core::Error::StructureMismatch(format!(
                        "C of the Galerkin plan has {} entries, but room for {} values was given",
                        self.nnz(),
                        values.len()
                    ))
                    .into());
                }
                let c = self.numeric(backend, a)?;
                values.copy_from_slice(c.values());
                Ok(())
            }
        }
    }

    /// The row offsets (`M + 1`) of the A the plan was built for, where
    /// the plan keeps them on the host (the CPU's plans, and GPU plans
    /// built from the host): a caller holding A's offsets in another
    /// integer type may pass these once they compare equal to its own,
    /// rather than convert them.
    pub fn a_row_offsets(&self) -> Option<&[usize]> {
        match &self.inner {
            Inner::Cpu { ap, .. } => Some(ap.a_row_offsets()),
            #[cfg(feature = "cuda")]
            Inner::Cuda(g) => g.a_host_row_offsets(),
            #[cfg(feature = "hip")]
            Inner::Hip(g) => g.a_host_row_offsets(),
        }
    }

    /// The backend that built the plan.
    pub fn backend(&self) -> &'static str {
        match &self.inner {
            Inner::Cpu { .. } => "cpu",
            #[cfg(feature = "cuda")]
            Inner::Cuda(_) => "cuda",
            #[cfg(feature = "hip")]
            Inner::Hip(_) => "hip",
        }
    }
}

/// A structure mismatch of the first product's A, said of the Galerkin
/// plan.
fn in_a(e: spgemm_core::Error, what: &str) -> spgemm_core::Error {
    match e {
        spgemm_core::Error::StructureMismatch(m) => spgemm_core::Error::StructureMismatch(format!(
            "{} (in {what})",
            m.replace("the plan was", "the Galerkin plan was")
        )),
        e => e,
    }
}

impl Backend {
    /// `C = R·A·P` (R `Q×M`, A `M×K`, P `K×L`, C `Q×L`; `r = None` means
    /// `Pᵀ`, formed on the host), and a [`Galerkin`] plan to recompute it
    /// for new values of A. GPU backends run both products on their first
    /// device with `A·P` kept there.
    ///
    /// ```
    /// use spgemm::{Backend, CpuBackend, generate};
    /// let a = generate::poisson_7::<f64>(6)?; // 216 unknowns
    /// let p = generate::sa_prolongator::<f64>(6)?; // aggregates of 2×2×2
    /// let backend = Backend::Cpu(CpuBackend::new());
    /// let (plan, coarse) = backend.galerkin(None, &a, &p)?;
    /// assert_eq!(coarse.shape(), (p.ncols(), p.ncols()));
    /// let again = plan.numeric(&backend, &a)?; // a re-setup: numeric phases only
    /// assert_eq!(again, coarse);
    /// # Ok::<(), spgemm::Error>(())
    /// ```
    ///
    /// # Errors
    /// `DimensionMismatch` (in [`Error::Core`]) unless A's columns equal
    /// P's rows and R's columns A's rows; as [`Backend::multiply`].
    pub fn galerkin<'a, 'r, 'p, T: Scalar>(
        &self,
        r: Option<CsrView<'r, T>>,
        a: impl Into<CsrView<'a, T>>,
        p: impl Into<CsrView<'p, T>>,
    ) -> Result<(Galerkin<T>, CsrMatrix<T>)> {
        let (a, p) = (a.into(), p.into());
        match self {
            Backend::Cpu(cpu) => {
                spgemm_core::reference::check_dimensions(a.shape(), p.shape())?;
                let r = match r {
                    Some(r) => r.to_matrix()?,
                    None => p.transpose()?,
                };
                spgemm_core::reference::check_dimensions(r.shape(), a.shape())?;
                let (ap_plan, ap) = cpu.multiply_planned(a, p)?;
                let (c_plan, c) = cpu.multiply_planned(&r, &ap)?;
                let plan = Inner::Cpu {
                    r,
                    p: p.to_matrix()?,
                    ap: ap_plan,
                    c: c_plan,
                };
                Ok((Galerkin { inner: plan }, c))
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => {
                let (g, c) = m.engines()[0].galerkin(r, a, p)?;
                Ok((
                    Galerkin {
                        inner: Inner::Cuda(g),
                    },
                    c,
                ))
            }
            #[cfg(feature = "hip")]
            Backend::Hip(m) => {
                let (g, c) = m.engines()[0].galerkin(r, a, p)?;
                Ok((
                    Galerkin {
                        inner: Inner::Hip(g),
                    },
                    c,
                ))
            }
        }
    }

    /// `C = Pᵀ·A·P` (A `K×K`, P `K×L`, C `L×L`): the coarse operator of
    /// algebraic multigrid. See [`Backend::galerkin`] to keep the plan.
    ///
    /// # Errors
    /// As [`Backend::galerkin`].
    pub fn ptap<'a, 'p, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        p: impl Into<CsrView<'p, T>>,
    ) -> Result<CsrMatrix<T>> {
        self.galerkin_once(None, a.into(), p.into())
    }

    /// `C = R·A·P` (R `Q×M`, A `M×K`, P `K×L`, C `Q×L`): a Galerkin
    /// product with a restriction other than `Pᵀ`. See
    /// [`Backend::galerkin`] to keep the plan.
    ///
    /// # Errors
    /// As [`Backend::galerkin`].
    pub fn rap<'r, 'a, 'p, T: Scalar>(
        &self,
        r: impl Into<CsrView<'r, T>>,
        a: impl Into<CsrView<'a, T>>,
        p: impl Into<CsrView<'p, T>>,
    ) -> Result<CsrMatrix<T>> {
        self.galerkin_once(Some(r.into()), a.into(), p.into())
    }

    /// `C = R·A·P` (`r = None`: `Pᵀ·A·P`) without a plan: the two
    /// products as [`Backend::multiply`] runs them (one pass where it
    /// would), on a GPU backend's first device with `A·P` kept there.
    fn galerkin_once<T: Scalar>(
        &self,
        r: Option<CsrView<'_, T>>,
        a: CsrView<'_, T>,
        p: CsrView<'_, T>,
    ) -> Result<CsrMatrix<T>> {
        match self {
            Backend::Cpu(cpu) => {
                spgemm_core::reference::check_dimensions(a.shape(), p.shape())?;
                let transposed;
                let r = match r {
                    Some(r) => r,
                    None => {
                        transposed = p.transpose()?;
                        transposed.view()
                    }
                };
                spgemm_core::reference::check_dimensions(r.shape(), a.shape())?;
                let ap = cpu.multiply(a, p)?;
                Ok(cpu.multiply(r, &ap)?)
            }
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => Ok(m.engines()[0].galerkin_once(r, a, p)?),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => Ok(m.engines()[0].galerkin_once(r, a, p)?),
        }
    }

    /// `C = op(A)·op(B)` with `op` the transpose for the operands
    /// `transposed` names (`Aᵀ·B`: A `K×M`, B `K×N`, C `M×N`); the
    /// transposes are formed on the host, then multiplied as
    /// [`Backend::multiply`] does.
    ///
    /// # Errors
    /// As [`Backend::multiply`], the shapes named as transposed.
    pub fn multiply_transposed<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
        transposed: Transposed,
    ) -> Result<CsrMatrix<T>> {
        let (a, b) = (a.into(), b.into());
        let at = matches!(transposed, Transposed::A | Transposed::Both);
        let bt = matches!(transposed, Transposed::B | Transposed::Both);
        let (a_shape, b_shape) = transposed.shapes(&a, &b);
        spgemm_core::reference::check_dimensions(a_shape, b_shape)?;
        let ta = if at { Some(a.transpose()?) } else { None };
        let tb = if bt { Some(b.transpose()?) } else { None };
        let a = ta.as_ref().map_or(a, CsrMatrix::view);
        let b = tb.as_ref().map_or(b, CsrMatrix::view);
        self.multiply(a, b)
    }
}
