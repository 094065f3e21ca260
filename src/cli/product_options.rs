//! `multiply`'s options beyond `C = A·B`: the semiring, a structural mask
//! or its complement, and pruning (see `spgemm::semiring`).

use super::source::MatrixSource;
use super::CliError;
use clap::Args;
use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{Backend, CsrMatrix, Scalar};

/// GraphBLAS-style products: `C⟨M⟩ = A ⊕.⊗ B`, pruned, on any backend.
#[derive(Args, Debug, Clone)]
pub struct ProductOptions {
    /// Semiring: plus_times (the ordinary product), min_plus, max_plus,
    /// max_times, lor_land (or or_and: nonzero values read as true, C
    /// holds 1 and 0), plus_pair (C counts the k joining i and j) or
    /// any_pair (C's structure, values 1); `-` or `_` alike.
    #[arg(long, default_value = "plus_times")]
    pub semiring: Semiring,
    /// Structural mask M (a file or generator, its shape C's): C keeps only
    /// the entries where M has one; its values are not read.
    #[arg(long)]
    pub mask: Option<MatrixSource>,
    /// With --mask: keep only the entries where M has none (C⟨¬M⟩).
    #[arg(long, requires = "mask")]
    pub complement: bool,
    /// Drop C's entries of magnitude below this (at least 0).
    #[arg(long)]
    pub prune: Option<f64>,
    /// Keep at most this many entries of largest magnitude in each row of
    /// C (ties to the lower column), after --prune.
    #[arg(long)]
    pub keep: Option<usize>,
    /// Prune C's columns rather than its rows (with --prune or --keep).
    #[arg(long)]
    pub prune_columns: bool,
}

impl ProductOptions {
    /// Whether this is the ordinary product, unmasked and unpruned.
    pub fn is_plain(&self) -> bool {
        self.semiring == Semiring::PlusTimes
            && self.mask.is_none()
            && self.prune.is_none()
            && self.keep.is_none()
    }

    /// Reads the mask (generators with `seed`), if any.
    ///
    /// # Errors
    /// The mask's file cannot be read.
    pub fn load_mask<T: Scalar>(&self, seed: u64) -> Result<Option<CsrMatrix<T>>, CliError> {
        Ok(self.mask.as_ref().map(|m| m.load::<T>(seed)).transpose()?)
    }

    /// `C⟨M⟩ = A ⊕.⊗ B`, pruned, on `backend`, and its time in
    /// milliseconds.
    ///
    /// # Errors
    /// As `Backend::multiply_spec`.
    pub fn multiply<T: Scalar>(
        &self,
        backend: &Backend,
        a: &CsrMatrix<T>,
        b: &CsrMatrix<T>,
        mask: Option<&CsrMatrix<T>>,
    ) -> Result<(CsrMatrix<T>, f64), CliError> {
        let mut spec = ProductSpec::new().semiring(self.semiring);
        if let Some(m) = mask {
            spec = spec.mask(m.view(), self.complement);
        }
        spec.prune.below = self.prune.map(T::from_f64);
        spec.prune.keep = self.keep;
        spec.prune.columns = self.prune_columns;
        let t = std::time::Instant::now();
        let c = backend.multiply_spec(a, b, &spec)?;
        Ok((c, super::ms(t)))
    }

    /// What is computed beside the product, for the report: `min_plus,
    /// ⟨¬M⟩, pruned`.
    pub fn describe(&self) -> String {
        let mut parts = vec![self.semiring.to_string()];
        match (&self.mask, self.complement) {
            (Some(_), false) => parts.push("⟨M⟩".into()),
            (Some(_), true) => parts.push("⟨¬M⟩".into()),
            (None, _) => {}
        }
        match (
            self.prune.is_some() || self.keep.is_some(),
            self.prune_columns,
        ) {
            (true, false) => parts.push("rows pruned".into()),
            (true, true) => parts.push("columns pruned".into()),
            (false, _) => {}
        }
        parts.join(", ")
    }
}
