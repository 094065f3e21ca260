//! Products with a semiring, mask or pruning on every backend: the CPU
//! runs them all; GPU backends run every semiring under a structural mask
//! (by dot products on the first device, [`spgemm_core::gpu::GpuEngine::masked_dot`]),
//! and without a mask `plus_times` and the counting and boolean semirings
//! (`plus_pair`, `any_pair`, `lor_land`, as the plain product of operands
//! whose values are replaced: 1 for each entry, or 1 and 0 for nonzero
//! and zero), pruned on the host after the product, and refuse the rest.

use crate::{Backend, CsrMatrix, CsrView, ProductSpec, Result, Scalar};
use spgemm_core::semiring::Semiring;

impl Backend {
    /// `C⟨M⟩ = A ⊕.⊗ B` (or `⟨¬M⟩`, or unmasked), its rows pruned, as
    /// `spec` says (see [`crate::semiring`]); A `M×K`, B `K×N`, the mask
    /// and C `M×N`. The plain product ([`ProductSpec::is_plain`]) runs
    /// [`Backend::multiply`] on any backend. The CPU backend runs every
    /// spec ([`crate::CpuBackend::multiply_spec`]), pruning while it
    /// accumulates. GPU backends run every semiring under a structural
    /// (not complemented) mask by a dot product per entry of the mask on
    /// their first device (B's columns formed there;
    /// [`spgemm_core::gpu::GpuEngine::masked_dot`]); without a mask they run
    /// `plus_times`, and `plus_pair`, `any_pair` and `lor_land` as the
    /// plain product of A and B with their values replaced by 1 (the pair
    /// semirings) or by 1 and 0 for nonzero and zero (`lor_land`), C's
    /// counts then kept (`plus_pair`) or made 1 and 0 (exact while every
    /// count is below 2²⁴ in `f32`, 2⁵³ in `f64`). They prune C on the
    /// host after the product ([`spgemm_core::semiring::pruned`]).
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
    /// a spec a GPU backend does not run, naming what it lacks; otherwise
    /// as [`Backend::multiply`].
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
        let counting = matches!(
            spec.semiring,
            Semiring::PlusPair | Semiring::AnyPair | Semiring::OrAnd
        );
        let masked = spec.mask.map(|m| m.complement());
        if !Backend::gpu_runs(spec.semiring, masked) {
            return Err(spgemm_core::Error::NotOnBackend(format!(
                "the {} backend runs every semiring with a structural mask, and plus_times, \
                 plus_pair, any_pair and lor_land without one; semiring {}{} runs on the CPU \
                 backend (--backend cpu)",
                self.name(),
                spec.semiring,
                match masked {
                    Some(true) => " with a complemented mask",
                    Some(false) => "",
                    None => " without a mask",
                },
            ))
            .into());
        }
        let c = if let Some(mask) = spec.mask {
            self.masked_dot(mask, a, b, spec.semiring)?
        } else if counting {
            let indicator = |m: CsrView<'_, T>| match spec.semiring {
                Semiring::OrAnd => m.to_matrix().map(|m| m.map(|v: T| truth(v != T::ZERO))),
                _ => m.to_matrix().map(|m| m.map(|_: T| T::ONE)),
            };
            let counts = self.multiply(&indicator(a)?, &indicator(b)?)?;
            match spec.semiring {
                Semiring::PlusPair => counts,
                _ => counts.map(|v: T| truth(v != T::ZERO)),
            }
        } else {
            self.multiply(a, b)?
        };
        if spec.prune.is_none() {
            return Ok(c);
        }
        Ok(spgemm_core::semiring::pruned(&c, &spec.prune)?)
    }
}

impl Backend {
    /// Whether GPU backends run products with `semiring` and a mask
    /// (`Some(complement)`) or none (`None`): every semiring under a
    /// structural mask; `plus_times`, `plus_pair`, `any_pair` and
    /// `lor_land` without one; nothing under a complemented mask. The CPU
    /// backend runs them all; `auto` picks it for the rest.
    pub fn gpu_runs(semiring: Semiring, mask: Option<bool>) -> bool {
        match mask {
            Some(complement) => !complement,
            None => matches!(
                semiring,
                Semiring::PlusTimes | Semiring::PlusPair | Semiring::AnyPair | Semiring::OrAnd
            ),
        }
    }

    /// `C⟨M⟩ = A ⊕.⊗ B` by dot products on the first device of a GPU
    /// backend ([`spgemm_core::gpu::GpuEngine::masked_dot`]).
    /// The CPU backend runs its own masked products
    /// ([`crate::CpuBackend::multiply_spec`]), not this path.
    // Only the CPU variant exists without the GPU features.
    #[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(unused_variables))]
    fn masked_dot<T: Scalar>(
        &self,
        mask: spgemm_core::semiring::Mask<'_>,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        semiring: Semiring,
    ) -> Result<CsrMatrix<T>> {
        match self {
            Backend::Cpu(_) => Err(spgemm_core::Error::NotOnBackend(
                "masked dot products on a GPU need a GPU backend".into(),
            )
            .into()),
            #[cfg(feature = "cuda")]
            Backend::Cuda(m) => Ok(m.engines()[0].masked_dot(mask, a, b, semiring)?),
            #[cfg(feature = "hip")]
            Backend::Hip(m) => Ok(m.engines()[0].masked_dot(mask, a, b, semiring)?),
        }
    }
}

/// 1 or 0.
fn truth<T: Scalar>(b: bool) -> T {
    if b {
        T::ONE
    } else {
        T::ZERO
    }
}
