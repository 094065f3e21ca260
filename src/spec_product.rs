//! Products with a semiring, mask or pruning on every backend: the CPU
//! runs them all in one pass; GPU backends run every semiring without a
//! mask (the product's own kernels compiled with the semiring), under a
//! structural mask (by dot products) or its complement (the product, then
//! the mask's entries dropped on the device), A's rows split over their
//! devices (in more blocks when C does not fit them), C pruned on the
//! device before it is downloaded.

use crate::{Backend, CsrMatrix, CsrView, ProductSpec, Result, Scalar, Transposed};
use spgemm_core::semiring::{Mask, Prune, Semiring};

impl Backend {
    /// `C⟨M⟩ = A ⊕.⊗ B` (or `⟨¬M⟩`, or unmasked), its rows pruned, as
    /// `spec` says (see [`crate::semiring`]); A `M×K`, B `K×N`, the mask
    /// and C `M×N`. The plain product ([`ProductSpec::is_plain`]) runs
    /// [`Backend::multiply`] on any backend. The CPU backend runs every
    /// spec ([`crate::CpuBackend::multiply_spec`]), pruning while it
    /// accumulates. GPU backends run every other product with A's rows
    /// (and the mask's) split over their devices by products
    /// ([`spgemm_core::gpu::MultiGpu::multiply_semiring_host`]): without a
    /// mask by the product's own kernels compiled with the semiring's
    /// operators ([`spgemm_core::gpu::GpuEngine::multiply_host_semiring`],
    /// each block in one piece), under a structural mask by a dot product
    /// per entry of the mask (B's columns formed on each device;
    /// [`spgemm_core::gpu::GpuEngine::masked_dot`]), under a complemented
    /// one by the product and then the mask's entries dropped there
    /// ([`spgemm_core::gpu::GpuEngine::complement_host`]). They prune C on
    /// the device before C is downloaded: as each row is written where an
    /// unmasked product runs in one pass
    /// ([`spgemm_core::gpu::GpuEngine::multiply_semiring_pruned`]), else
    /// after the numeric phase
    /// ([`spgemm_core::gpu::GpuEngine::prune_device`]); a `keep` per
    /// column as a `keep` per row of `Cᵀ = Bᵀ ⊕.⊗ Aᵀ`, transposed back on
    /// the device that holds all of it, on the host when several devices
    /// or blocks hold its rows. A product whose C does
    /// not fit the devices runs in more blocks of rows, each pruned on its
    /// device before it is downloaded, so that a pruned C never exists
    /// unpruned beyond one block a device (within
    /// [`spgemm_core::gpu::GpuConfig::memory_budget`] where one is set).
    ///
    /// ```
    /// use spgemm::semiring::{ProductSpec, Semiring};
    /// use spgemm::{Backend, CpuBackend, CsrMatrix};
    /// // Shortest paths of two hops: A = [0 1; 4 0] (edge weights).
    /// let a = CsrMatrix::new(2, 2, vec![0, 1, 2], vec![1, 0], vec![1.0f64, 4.0])?;
    /// let spec = ProductSpec::new().semiring(Semiring::MinPlus);
    /// let c = Backend::Cpu(CpuBackend::new()).multiply_spec(&a, &a, &spec)?;
    /// assert_eq!(c.values(), &[5.0, 5.0]);
    /// # Ok::<(), spgemm::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`ProductSpec::check`]; [`spgemm_core::Error::NotOnBackend`] for
    /// host operands a GPU's masked product does not take (a row repeating
    /// a column), naming the row; otherwise as [`Backend::multiply`].
    // Only the CPU variant exists without the GPU features.
    #[cfg_attr(
        not(any(feature = "cuda", feature = "hip")),
        allow(irrefutable_let_patterns)
    )]
    pub fn multiply_spec<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
        spec: &ProductSpec<'_, T>,
    ) -> Result<CsrMatrix<T>> {
        let (a, b) = (a.into(), b.into());
        if let Backend::Cpu(c) = self {
            return Ok(c.multiply_spec(a, b, spec)?);
        }
        if spec.is_plain() {
            return self.multiply(a, b);
        }
        spec.check(a.shape(), b.shape())?;
        if self.widens::<T>() {
            return self.widened(a, b, spec, |a, b, s| self.multiply_spec(a, b, s));
        }
        self.on_gpus(a, b, spec.mask, spec.semiring, &spec.prune)
    }
}

impl Backend {
    /// `C⟨M⟩ = op(A) ⊕.⊗ op(B)` as [`Backend::multiply_spec`], with `op`
    /// the transpose for the operands `transposed` names (`A·Bᵀ`: A `M×K`,
    /// B `N×K`, the mask and C `M×N`), as GraphBLAS's descriptors ask. The
    /// CPU backend reads a transposed B where it lies when the product
    /// runs by dot products ([`crate::CpuBackend::multiply_spec_transposed_b`]:
    /// triangle counting's `C⟨L⟩ = L ⊕.pair Lᵀ` transposes nothing), and
    /// so does one GPU under a structural mask
    /// ([`spgemm_core::gpu::MultiGpu::masked_dot_transposed_b_host`]);
    /// every other transpose is formed on the host first.
    ///
    /// # Errors
    /// As [`Backend::multiply_spec`], the shapes named as transposed.
    // Only the CPU variant exists without the GPU features.
    #[cfg_attr(
        not(any(feature = "cuda", feature = "hip")),
        allow(irrefutable_let_patterns)
    )]
    pub fn multiply_spec_transposed<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
        spec: &ProductSpec<'_, T>,
        transposed: Transposed,
    ) -> Result<CsrMatrix<T>> {
        let (a, b) = (a.into(), b.into());
        if self.widens::<T>() {
            return self.widened(a, b, spec, |a, b, s| {
                self.multiply_spec_transposed(a, b, s, transposed)
            });
        }
        let at = matches!(transposed, Transposed::A | Transposed::Both);
        let bt = matches!(transposed, Transposed::B | Transposed::Both);
        let (a_shape, b_shape) = transposed.shapes(&a, &b);
        spec.check(a_shape, b_shape)?;
        let formed_a = if at { Some(a.transpose()?) } else { None };
        let a = formed_a.as_ref().map_or(a, CsrMatrix::view);
        if !bt {
            return self.multiply_spec(a, b, spec);
        }
        #[cfg(feature = "cuda")]
        if let (Backend::Cuda(m), Some(mask)) = (self, spec.mask) {
            return Ok(m.masked_dot_transposed_b_host(a, b, mask, spec.semiring, &spec.prune)?);
        }
        #[cfg(feature = "hip")]
        if let (Backend::Hip(m), Some(mask)) = (self, spec.mask) {
            return Ok(m.masked_dot_transposed_b_host(a, b, mask, spec.semiring, &spec.prune)?);
        }
        if let Backend::Cpu(c) = self {
            return Ok(c.multiply_spec_transposed_b(a, b, spec)?);
        }
        self.multiply_spec(a, &b.transpose()?, spec)
    }
}

impl Backend {
    /// `C⟨M⟩ = A ⊕.⊗ B` (or unmasked) over the devices of a GPU backend
    /// ([`spgemm_core::gpu::MultiGpu::multiply_semiring_host`]); an error
    /// on the CPU backend, which runs every spec itself.
    // Only the CPU variant exists without the GPU features.
    #[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(unused_variables))]
    fn on_gpus<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        mask: Option<Mask<'_>>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<CsrMatrix<T>> {
        match self {
            Backend::Cpu(_) => Err(spgemm_core::Error::NotOnBackend(
                "this product runs on a GPU backend".into(),
            )
            .into()),
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => Ok(m.multiply_semiring_host(a, b, mask, semiring, prune)?),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => Ok(m.multiply_semiring_host(a, b, mask, semiring, prune)?),
        }
    }
}

impl Backend {
    /// `⊕` over the entries of `C⟨M⟩ = op(A) ⊕.⊗ op(B)` as
    /// [`Backend::multiply_spec_transposed`] would form C (`transposed`
    /// `None`: neither operand transposed): one scalar, GraphBLAS's reduce
    /// to a scalar with the semiring's monoid ([`Semiring::reduce`]; `⊕`'s
    /// identity for a C without entries). Triangle counting is
    /// `Σ C⟨L⟩, C = L ⊕.pair Lᵀ`. A GPU backend under a structural mask,
    /// without pruning and without `op(A)`, reduces the dot products on its
    /// first device and never forms C
    /// ([`spgemm_core::gpu::GpuEngine::masked_reduce`]); every other case
    /// forms C and reduces its values. Floating-point sums on the GPU meet
    /// the entries in no fixed order.
    ///
    /// ```
    /// use spgemm::semiring::{ProductSpec, Semiring};
    /// use spgemm::{Backend, CpuBackend, CsrMatrix, Transposed};
    /// // A triangle 0-1-2: L its strict lower triangle.
    /// let l = CsrMatrix::new(3, 3, vec![0, 0, 1, 3], vec![0, 0, 1], vec![1.0f64; 3])?;
    /// let spec = ProductSpec::new()
    ///     .semiring(Semiring::PlusPair)
    ///     .mask(l.view(), false);
    /// let cpu = Backend::Cpu(CpuBackend::new());
    /// assert_eq!(cpu.reduce_spec(&l, &l, &spec, Some(Transposed::B))?, 1.0);
    /// # Ok::<(), spgemm::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Backend::multiply_spec_transposed`].
    pub fn reduce_spec<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
        spec: &ProductSpec<'_, T>,
        transposed: Option<Transposed>,
    ) -> Result<T> {
        let (a, b) = (a.into(), b.into());
        // Booleans on a GPU: C formed (as i32) and reduced here.
        let on_device = !self.widens::<T>()
            && !matches!(transposed, Some(Transposed::A | Transposed::Both))
            && spec.prune.is_none()
            && spec.mask.is_some_and(|m| !m.complement());
        if let (true, Some(mask)) = (on_device, spec.mask) {
            let bt = transposed.is_some();
            if let Some(total) = self.reduce_on_gpu(a, b, mask, spec.semiring, bt) {
                return total;
            }
        }
        let c = match transposed {
            Some(t) => self.multiply_spec_transposed(a, b, spec, t)?,
            None => self.multiply_spec(a, b, spec)?,
        };
        Ok(spec.semiring.reduce(c.values()))
    }
}

impl Backend {
    /// [`spgemm_core::gpu::GpuEngine::masked_reduce`] on a GPU backend's
    /// first device; `None` on the CPU backend.
    // Only the CPU variant exists without the GPU features.
    #[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(unused_variables))]
    fn reduce_on_gpu<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        mask: Mask<'_>,
        semiring: Semiring,
        b_transposed: bool,
    ) -> Option<Result<T>> {
        match self {
            Backend::Cpu(_) => None,
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => Some(
                m.engines()[0]
                    .masked_reduce(mask, a, b, semiring, b_transposed)
                    .map_err(Into::into),
            ),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => Some(
                m.engines()[0]
                    .masked_reduce(mask, a, b, semiring, b_transposed)
                    .map_err(Into::into),
            ),
        }
    }
}
