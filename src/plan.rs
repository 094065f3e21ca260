//! Structure reuse on every backend: the symbolic phase once, the numeric
//! phase for each new set of values (OpSparse §4 and KokkosKernels §3:
//! the two-phase method keeps C's row offsets between the phases).

use crate::{Backend, CpuPlan, CsrMatrix, CsrView, Error, Result, Scalar};

/// The symbolic phase of `C = A·B` on one backend: C's row offsets and
/// the structures of A and B it was built for. Built by
/// [`Backend::symbolic`], used by [`Backend::numeric`] of the same backend.
pub struct Plan<T: Scalar> {
    inner: Inner<T>,
}

enum Inner<T: Scalar> {
    /// The CPU plan holds no values: `T` only types the later products.
    Cpu(CpuPlan, std::marker::PhantomData<T>),
    #[cfg(feature = "cuda")]
    Cuda(crate::gpu::GpuPlan<crate::CudaDevice, T>),
    #[cfg(feature = "hip")]
    Hip(crate::gpu::GpuPlan<crate::HipDevice, T>),
}

impl<T: Scalar> Plan<T> {
    /// Number of entries of C.
    pub fn nnz(&self) -> usize {
        match &self.inner {
            Inner::Cpu(p, _) => p.nnz(),
            #[cfg(feature = "cuda")]
            Inner::Cuda(p) => p.nnz(),
            #[cfg(feature = "hip")]
            Inner::Hip(p) => p.nnz(),
        }
    }

    /// The backend that built the plan (`"cpu"`, `"cuda"`, `"hip"`).
    pub fn backend(&self) -> &'static str {
        match &self.inner {
            Inner::Cpu(..) => "cpu",
            #[cfg(feature = "cuda")]
            Inner::Cuda(_) => "cuda",
            #[cfg(feature = "hip")]
            Inner::Hip(_) => "hip",
        }
    }
}

/// A and B uploaded to the first device of `m` (B as `None` when it is A),
/// their structure kept on the host to check later operands.
#[cfg(any(feature = "cuda", feature = "hip"))]
#[allow(clippy::type_complexity)] // the engine and the two uploads
fn upload_pair<'m, D: spgemm_core::device::Device, T: Scalar>(
    m: &'m crate::gpu::MultiGpu<D>,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
) -> Result<(
    &'m crate::gpu::GpuEngine<D>,
    crate::gpu::GpuMatrix<D, T>,
    Option<crate::gpu::GpuMatrix<D, T>>,
)> {
    let e = &m.engines()[0];
    let ga = e.upload(a)?;
    let gb = if a.same_arrays(&b) {
        None
    } else {
        Some(e.upload(b)?)
    };
    Ok((e, ga, gb))
}

/// The symbolic phase on the first device of `m`.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn gpu_symbolic<D: spgemm_core::device::Device, T: Scalar>(
    m: &crate::gpu::MultiGpu<D>,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
) -> Result<crate::gpu::GpuPlan<D, T>> {
    let (e, ga, gb) = upload_pair(m, a, b)?;
    Ok(e.symbolic(&ga, gb.as_ref().unwrap_or(&ga))?)
}

/// The numeric phase with `plan` on the first device of `m`.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn gpu_numeric<D: spgemm_core::device::Device, T: Scalar>(
    m: &crate::gpu::MultiGpu<D>,
    plan: &crate::gpu::GpuPlan<D, T>,
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
) -> Result<CsrMatrix<T>> {
    let (e, ga, gb) = upload_pair(m, a, b)?;
    let (c, _) = e.numeric(plan, &ga, gb.as_ref().unwrap_or(&ga))?;
    Ok(e.download(&c)?)
}

impl Backend {
    /// The symbolic phase of `C = A·B` (A is `M×K`, B is `K×N`), kept as a
    /// plan for [`Backend::numeric`]. GPU backends run plans on their
    /// first device, with A and B in device memory (products larger than
    /// the device are not chunked: use [`Backend::multiply`]).
    ///
    /// # Errors
    /// As [`Backend::multiply`].
    pub fn symbolic<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<Plan<T>> {
        let (a, b) = (a.into(), b.into());
        let inner = match self {
            Backend::Cpu(c) => Inner::Cpu(c.symbolic(a, b)?, std::marker::PhantomData),
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => Inner::Cuda(gpu_symbolic(m, a, b)?),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => Inner::Hip(gpu_symbolic(m, a, b)?),
        };
        Ok(Plan { inner })
    }

    /// The numeric phase: `C = A·B` for A and B with exactly the structure
    /// (shapes, row offsets, column indices) `plan` was built for and any
    /// values.
    ///
    /// # Errors
    /// [`Error::PlanBackend`] for a plan of another backend;
    /// `StructureMismatch` (in [`Error::Core`]) naming the operand whose
    /// structure differs; the errors of [`Backend::multiply`].
    pub fn numeric<'a, 'b, T: Scalar>(
        &self,
        plan: &Plan<T>,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<CsrMatrix<T>> {
        let (a, b) = (a.into(), b.into());
        match (self, &plan.inner) {
            (Backend::Cpu(c), Inner::Cpu(p, _)) => Ok(c.numeric(p, a, b)?),
            #[cfg(feature = "cuda")]
            (Backend::Cuda(m), Inner::Cuda(p)) => gpu_numeric(m, p, a, b),
            #[cfg(feature = "hip")]
            (Backend::Hip(m), Inner::Hip(p)) => gpu_numeric(m, p, a, b),
            #[allow(unreachable_patterns)] // reachable with a GPU feature
            _ => Err(Error::PlanBackend {
                built: plan.backend(),
                used: self.name(),
            }),
        }
    }
}
