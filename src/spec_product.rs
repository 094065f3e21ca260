//! Products with a semiring, mask or pruning on every backend: the CPU
//! runs them all; GPU backends run `plus_times` and the counting and
//! boolean semirings (`plus_pair`, `any_pair`, `lor_land`, as the plain
//! product of operands whose values are replaced: 1 for each entry, or 1
//! and 0 for nonzero and zero), unmasked, pruned on the host after the
//! product, and refuse the rest.

use crate::{Backend, CsrMatrix, CsrView, ProductSpec, Result, Scalar};
use spgemm_core::semiring::Semiring;

impl Backend {
    /// `C⟨M⟩ = A ⊕.⊗ B` (or `⟨¬M⟩`, or unmasked), its rows pruned, as
    /// `spec` says (see [`crate::semiring`]); A `M×K`, B `K×N`, the mask
    /// and C `M×N`. The plain product ([`ProductSpec::is_plain`]) runs
    /// [`Backend::multiply`] on any backend. The CPU backend runs every
    /// spec ([`crate::CpuBackend::multiply_spec`]), pruning while it
    /// accumulates; GPU backends run `plus_times`, and `plus_pair`,
    /// `any_pair` and `lor_land` as the plain product of A and B with
    /// their values replaced by 1 (the pair semirings) or by 1 and 0 for
    /// nonzero and zero (`lor_land`), C's counts then kept (`plus_pair`)
    /// or made 1 and 0 (exact while every count is below 2²⁴ in `f32`,
    /// 2⁵³ in `f64`), without masks, and prune C on the host after the
    /// product ([`spgemm_core::semiring::pruned`]).
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
        if spec.mask.is_some() || !(counting || spec.semiring == Semiring::PlusTimes) {
            return Err(spgemm_core::Error::NotOnBackend(format!(
                "the {} backend runs plus_times, plus_pair, any_pair and lor_land without \
                 masks; semiring {}{} runs on the CPU backend (--backend cpu)",
                self.name(),
                spec.semiring,
                if spec.mask.is_some() {
                    " with a mask"
                } else {
                    ""
                },
            ))
            .into());
        }
        let c = if counting {
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

/// 1 or 0.
fn truth<T: Scalar>(b: bool) -> T {
    if b {
        T::ONE
    } else {
        T::ZERO
    }
}
