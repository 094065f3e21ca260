//! Products beyond plus-times: the semiring `⊕.⊗` of `C = A ⊕.⊗ B`, a
//! structural mask `⟨M⟩` or its complement `⟨¬M⟩`, and pruning of C's
//! rows — defined once here, run by the backends.
//!
//! `c_ij = ⊕_k a_ik ⊗ b_kj` over the `k` where both `a_ik` and `b_kj` are
//! stored; C holds an entry exactly where at least one such `k` exists (and
//! the mask allows it), whatever its value. The names follow GraphBLAS
//! (Davis, "Algorithm 1000: SuiteSparse:GraphBLAS", ACM TOMS 45(4), 2019,
//! §2) and python-graphblas: `plus_times`, `min_plus`, `max_plus`,
//! `max_times`, `lor_land`, `plus_pair`, `any_pair`.

use crate::csr_view::CsrView;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::structure::Structure;

/// The `⊕` monoid and `⊗` operator of a product.
///
/// Values are of any [`Scalar`] type in and out (`f64`, `f32`, `i64`,
/// `i32`; GraphBLAS's `FP64`, `FP32`, `INT64`, `INT32`). The boolean
/// semiring `lor_land` reads a stored value as true when it is nonzero and
/// writes 1 or 0; `plus_pair` writes counts (exact up to 2²⁴ in `f32`, 2⁵³
/// in `f64`, 2³¹ − 1 in `i32`, 2⁶³ − 1 in `i64`) and `any_pair` writes 1:
/// neither reads A's or B's values. On integers the identities `+∞` and
/// `−∞` are the type's largest and smallest values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Semiring {
    /// `⊕ = +`, `⊗ = ×`: the ordinary product.
    #[default]
    PlusTimes,
    /// `⊕ = min`, `⊗ = +` (identity `+∞`): shortest paths.
    MinPlus,
    /// `⊕ = max`, `⊗ = +` (identity `−∞`): longest paths.
    MaxPlus,
    /// `⊕ = max`, `⊗ = ×` (identity `−∞`): most reliable paths.
    MaxTimes,
    /// `⊕ = or`, `⊗ = and` (identity false): reachability.
    OrAnd,
    /// `⊕ = +`, `⊗ = pair` (`x ⊗ y = 1`): the number of `k` joining `i`
    /// and `j` (triangle counting with a mask).
    PlusPair,
    /// `⊕ = any`, `⊗ = pair`: the structure of the product, values 1
    /// (breadth-first search frontiers).
    AnyPair,
}

impl Semiring {
    /// Every semiring, in the order of the documentation.
    pub const ALL: [Semiring; 7] = [
        Semiring::PlusTimes,
        Semiring::MinPlus,
        Semiring::MaxPlus,
        Semiring::MaxTimes,
        Semiring::OrAnd,
        Semiring::PlusPair,
        Semiring::AnyPair,
    ];

    /// The GraphBLAS name (`"min_plus"`).
    pub fn name(self) -> &'static str {
        match self {
            Semiring::PlusTimes => "plus_times",
            Semiring::MinPlus => "min_plus",
            Semiring::MaxPlus => "max_plus",
            Semiring::MaxTimes => "max_times",
            Semiring::OrAnd => "lor_land",
            Semiring::PlusPair => "plus_pair",
            Semiring::AnyPair => "any_pair",
        }
    }

    /// Whether the product reads A's and B's values (`plus_pair` and
    /// `any_pair` read only their structure).
    pub fn reads_values(self) -> bool {
        !matches!(self, Semiring::PlusPair | Semiring::AnyPair)
    }

    /// The identity of `⊕` (`0`, `+∞`, `−∞`, false as 0; the largest and
    /// smallest values for `+∞` and `−∞` on integers).
    pub fn identity<T: Scalar>(self) -> T {
        match self {
            Semiring::MinPlus => T::from_f64(f64::INFINITY),
            Semiring::MaxPlus | Semiring::MaxTimes => T::from_f64(f64::NEG_INFINITY),
            _ => T::ZERO,
        }
    }

    /// `x ⊗ y`.
    #[inline(always)]
    pub fn times<T: Scalar>(self, x: T, y: T) -> T {
        match self {
            Semiring::PlusTimes | Semiring::MaxTimes => x * y,
            Semiring::MinPlus | Semiring::MaxPlus => x + y,
            Semiring::OrAnd => truth(x != T::ZERO && y != T::ZERO),
            Semiring::PlusPair | Semiring::AnyPair => T::ONE,
        }
    }

    /// `x ⊕ y`. `min` and `max` return the other operand when one is NaN,
    /// as C's `fmin` and `fmax` (and GraphBLAS) do.
    #[inline(always)]
    pub fn plus<T: Scalar>(self, x: T, y: T) -> T {
        match self {
            Semiring::PlusTimes | Semiring::PlusPair => x + y,
            Semiring::MinPlus => {
                if y < x || x.to_f64().is_nan() {
                    y
                } else {
                    x
                }
            }
            Semiring::MaxPlus | Semiring::MaxTimes => {
                if y > x || x.to_f64().is_nan() {
                    y
                } else {
                    x
                }
            }
            Semiring::OrAnd => truth(x != T::ZERO || y != T::ZERO),
            Semiring::AnyPair => x,
        }
    }

    /// `⊕` over `values` ([`Semiring::identity`] when there are none):
    /// the reduction of a product's entries to one scalar, GraphBLAS's
    /// `GrB_reduce` to a scalar with the semiring's monoid (a masked
    /// `plus_pair` product's total counts triangles). The identity for no
    /// values.
    pub fn reduce<T: Scalar>(self, values: &[T]) -> T {
        values
            .iter()
            .copied()
            .reduce(|acc, v| self.plus(acc, v))
            .unwrap_or_else(|| self.identity())
    }

    /// The semiring for the GPU kernels on values of type `T`, as C:
    /// `semiring_times(x, y)` and
    /// `semiring_plus(x, y)` on `value_t` (defined before this text), as
    /// [`Semiring::times`] and [`Semiring::plus`] compute them (`min` and
    /// `max` ignoring a NaN operand; `any` taking its first nonzero operand,
    /// which is the same 1); `SPGEMM_IDENTITY`, the identity of `⊕` that
    /// accumulators start at (`-0.0` for `+`, so that a first product
    /// lands exactly; the type's extreme values for `min` and `max`, `±∞`
    /// on floats); `SPGEMM_ADDITIVE` (1 when `⊕` is `+`, which the
    /// hardware adds atomically); `SPGEMM_READS_VALUES` (0 for the pair
    /// semirings). The program builder emits it in front of the kernels.
    pub fn kernel_definitions<T: Scalar>(self) -> String {
        let (times, plus) = match self {
            Semiring::PlusTimes => ("x * y", "x + y"),
            Semiring::MinPlus => ("x + y", "(y < x || x != x) ? y : x"),
            Semiring::MaxPlus => ("x + y", "(y > x || x != x) ? y : x"),
            Semiring::MaxTimes => ("x * y", "(y > x || x != x) ? y : x"),
            Semiring::OrAnd => (
                "(value_t)(x != value_t(0) && y != value_t(0))",
                "(value_t)(x != value_t(0) || y != value_t(0))",
            ),
            Semiring::PlusPair => ("value_t(1)", "x + y"),
            Semiring::AnyPair => ("value_t(1)", "x != value_t(0) ? x : y"),
        };
        let identity = match self {
            Semiring::PlusTimes | Semiring::PlusPair => "(-value_t(0))",
            Semiring::MinPlus => T::C_MAX,
            Semiring::MaxPlus | Semiring::MaxTimes => T::C_MIN,
            Semiring::OrAnd | Semiring::AnyPair => "value_t(0)",
        };
        let additive = matches!(self, Semiring::PlusTimes | Semiring::PlusPair);
        format!(
            "// semiring {name}\n\
             #define SPGEMM_READS_VALUES {reads}\n\
             #define SPGEMM_ADDITIVE {additive}\n\
             #define SPGEMM_IDENTITY {identity}\n\
             __device__ __forceinline__ value_t semiring_times(value_t x, value_t y) {{ return {times}; }}\n\
             __device__ __forceinline__ value_t semiring_plus(value_t x, value_t y) {{ return {plus}; }}\n",
            name = self.name(),
            reads = u8::from(self.reads_values()),
            additive = u8::from(additive),
        )
    }
}

fn truth<T: Scalar>(b: bool) -> T {
    if b {
        T::ONE
    } else {
        T::ZERO
    }
}

impl std::fmt::Display for Semiring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Semiring {
    type Err = String;
    /// A GraphBLAS name, with `-` or `_` (`min-plus`), or `or_and` for
    /// `lor_land`.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.trim().to_ascii_lowercase().replace('-', "_");
        if s == "or_and" {
            return Ok(Semiring::OrAnd);
        }
        Semiring::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Semiring::ALL.iter().map(|r| r.name()).collect();
                format!(
                    "unknown semiring {s:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// A structural mask: `C⟨M⟩` keeps only the entries of C where M has an
/// entry (whatever M's value), `C⟨¬M⟩` (`complement`) only those where it
/// has none. C is new (GraphBLAS's replace semantics). M is `M×N` for A
/// `M×K` and B `K×N`; its rows need not be sorted.
#[derive(Clone, Copy, Debug)]
pub struct Mask<'m> {
    structure: Structure<'m>,
    complement: bool,
}

impl<'m> Mask<'m> {
    /// The structure of `m` as a mask (`complement` false: `⟨M⟩`).
    pub fn of<T: Scalar>(m: CsrView<'m, T>, complement: bool) -> Self {
        Mask {
            structure: Structure {
                nrows: m.nrows(),
                ncols: m.ncols(),
                row_offsets: m.row_offsets(),
                col_indices: m.col_indices(),
            },
            complement,
        }
    }

    /// Whether this is `⟨¬M⟩`.
    pub fn complement(&self) -> bool {
        self.complement
    }

    /// M's `(rows, columns)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.structure.nrows, self.structure.ncols)
    }

    /// M's structure (its rows need not be sorted).
    pub fn structure(&self) -> Structure<'m> {
        self.structure
    }

    /// M's entries.
    pub fn nnz(&self) -> usize {
        self.structure.col_indices.len()
    }

    /// M's structure transposed (`N×M`), as a matrix of zeros.
    ///
    /// # Errors
    /// [`Error::HostOutOfMemory`]; [`Error::TooLarge`] past `u32` columns.
    pub fn transposed<T: Scalar>(&self) -> Result<crate::CsrMatrix<T>> {
        let s = self.structure;
        let zeros = crate::error::try_filled(s.col_indices.len(), T::ZERO, "mask values")?;
        let view = CsrView::new(s.nrows, s.ncols, s.row_offsets, s.col_indices, &zeros)?;
        view.transpose()
    }

    /// Columns of M's row `i` (`i` below M's rows).
    pub fn row(&self, i: usize) -> &'m [u32] {
        let s = self.structure;
        &s.col_indices[s.row_offsets[i]..s.row_offsets[i + 1]]
    }
}

/// Pruning of C's rows after each is accumulated (before it is stored):
/// entries with `|c_ij| < below` dropped, then at most `keep` of the
/// largest `|c_ij|` kept per row (ties to the lower column), as Markov
/// clustering prunes (Azad et al., "HipMCL", Nucleic Acids Research
/// 46(6), 2018, §2). A row's kept entries stay sorted by column. With
/// `columns`, C's columns are pruned instead (HipMCL's column-stochastic
/// matrices): `Cᵀ = Bᵀ ⊕.⊗ Aᵀ` is computed with its rows pruned, then
/// transposed back (every `⊗` here commutes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Prune<T> {
    /// Drop entries of magnitude below this (`None`: keep all).
    pub below: Option<T>,
    /// Keep at most this many entries per row (`None`: no limit).
    pub keep: Option<usize>,
    /// Prune C's columns rather than its rows.
    pub columns: bool,
}

impl<T> Default for Prune<T> {
    fn default() -> Self {
        Prune {
            below: None,
            keep: None,
            columns: false,
        }
    }
}

impl<T: Scalar> Prune<T> {
    /// Whether pruning changes anything.
    pub fn is_none(&self) -> bool {
        self.below.is_none() && self.keep.is_none()
    }

    /// Checks the threshold.
    ///
    /// # Errors
    /// [`Error::Prune`] for a negative or NaN threshold.
    pub fn check(&self) -> Result<()> {
        if let Some(t) = self.below {
            if t.to_f64().is_nan() || t < T::ZERO {
                return Err(Error::Prune(format!(
                    "the threshold must be a number at least 0, not {t}"
                )));
            }
        }
        Ok(())
    }

    /// Prunes one row, given as `(column, value)` pairs sorted by column.
    pub fn row(&self, row: &mut Vec<(u32, T)>) {
        if let Some(t) = self.below {
            row.retain(|&(_, v)| v.abs() >= t);
        }
        if let Some(k) = self.keep {
            if row.len() > k {
                let larger = |x: &(u32, T), y: &(u32, T)| {
                    y.1.abs()
                        .to_f64()
                        .total_cmp(&x.1.abs().to_f64())
                        .then(x.0.cmp(&y.0))
                };
                if k > 0 {
                    row.select_nth_unstable_by(k - 1, larger);
                }
                row.truncate(k);
                row.sort_unstable_by_key(|e| e.0);
            }
        }
    }
}

/// `m` pruned as `prune` says, after the product (its rows, or its columns
/// through the transpose), the rows in parallel: for backends that do not
/// prune while accumulating.
///
/// # Errors
/// [`Error::HostOutOfMemory`].
pub fn pruned<T: Scalar>(m: &crate::CsrMatrix<T>, prune: &Prune<T>) -> Result<crate::CsrMatrix<T>> {
    use rayon::prelude::*;
    if prune.columns {
        let rows = Prune {
            columns: false,
            ..*prune
        };
        return pruned(&m.transpose()?, &rows)?.transpose();
    }
    const ROWS: usize = 1 << 12;
    let pieces: Vec<(Vec<usize>, Vec<u32>, Vec<T>)> = (0..m.nrows().div_ceil(ROWS))
        .into_par_iter()
        .map(|k| {
            let (mut lens, mut cols, mut vals, mut row) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for i in k * ROWS..((k + 1) * ROWS).min(m.nrows()) {
                let (c, v) = m.row(i);
                row.clear();
                row.extend(c.iter().copied().zip(v.iter().copied()));
                prune.row(&mut row);
                lens.push(row.len());
                cols.extend(row.iter().map(|e| e.0));
                vals.extend(row.iter().map(|e| e.1));
            }
            (lens, cols, vals)
        })
        .collect();
    let mut offsets = crate::error::try_with_capacity(m.nrows() + 1, "C row offsets")?;
    offsets.push(0usize);
    for (lens, _, _) in &pieces {
        for l in lens {
            offsets.push(offsets[offsets.len() - 1] + l);
        }
    }
    let cols = pieces.iter().flat_map(|p| p.1.iter().copied()).collect();
    let vals = pieces.into_iter().flat_map(|p| p.2).collect();
    crate::CsrMatrix::new(m.nrows(), m.ncols(), offsets, cols, vals)
}

/// What is computed beside `A·B`: the semiring, an optional mask, and
/// pruning. The default is the plain plus-times product.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProductSpec<'m, T> {
    /// `⊕.⊗`.
    pub semiring: Semiring,
    /// `⟨M⟩` or `⟨¬M⟩`.
    pub mask: Option<Mask<'m>>,
    /// Pruning of C's rows.
    pub prune: Prune<T>,
}

impl<'m, T: Scalar> ProductSpec<'m, T> {
    /// The plain plus-times product, to be changed by the methods below.
    pub fn new() -> Self {
        ProductSpec {
            semiring: Semiring::PlusTimes,
            mask: None,
            prune: Prune::default(),
        }
    }

    /// With `⊕.⊗` = `semiring`.
    pub fn semiring(mut self, semiring: Semiring) -> Self {
        self.semiring = semiring;
        self
    }

    /// With `m`'s structure as the mask (`⟨¬M⟩` when `complement`).
    pub fn mask(mut self, m: CsrView<'m, T>, complement: bool) -> Self {
        self.mask = Some(Mask::of(m, complement));
        self
    }

    /// Dropping entries of magnitude below `threshold`.
    pub fn prune_below(mut self, threshold: T) -> Self {
        self.prune.below = Some(threshold);
        self
    }

    /// Keeping at most the `k` largest entries (by magnitude) of each row.
    pub fn keep(mut self, k: usize) -> Self {
        self.prune.keep = Some(k);
        self
    }

    /// Pruning C's columns rather than its rows ([`Prune::columns`]).
    pub fn prune_columns(mut self) -> Self {
        self.prune.columns = true;
        self
    }

    /// For a spec pruning columns: `Cᵀ = Bᵀ ⊕.⊗ Aᵀ`'s spec, whose rows are
    /// pruned, over `mask_t`, the transposed mask's structure (made by
    /// [`Mask::transposed`]).
    pub fn transposed<'t>(&self, mask_t: Option<CsrView<'t, T>>) -> ProductSpec<'t, T> {
        ProductSpec {
            semiring: self.semiring,
            mask: match (&self.mask, mask_t) {
                (Some(m), Some(t)) => Some(Mask::of(t, m.complement())),
                _ => None,
            },
            prune: Prune {
                columns: false,
                ..self.prune
            },
        }
    }

    /// Whether this is the plain plus-times product, unmasked, unpruned.
    pub fn is_plain(&self) -> bool {
        self.semiring == Semiring::PlusTimes && self.mask.is_none() && self.prune.is_none()
    }

    /// Checks the spec against A's and B's shapes (`(rows, columns)`).
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`] unless A's columns equal B's rows;
    /// [`Error::MaskShape`] unless the mask is `A.rows × B.columns`;
    /// [`Error::Prune`] for a negative or NaN threshold.
    pub fn check(&self, a: (usize, usize), b: (usize, usize)) -> Result<()> {
        crate::reference::check_dimensions(a, b)?;
        if let Some(m) = &self.mask {
            if m.shape() != (a.0, b.1) {
                return Err(Error::MaskShape {
                    mask: m.shape(),
                    product: (a.0, b.1),
                });
            }
        }
        self.prune.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for r in Semiring::ALL {
            assert_eq!(r.name().parse::<Semiring>(), Ok(r));
            assert_eq!(r.name().replace('_', "-").parse::<Semiring>(), Ok(r));
        }
        assert_eq!("or-and".parse::<Semiring>(), Ok(Semiring::OrAnd));
        let e = "min_times".parse::<Semiring>().unwrap_err();
        assert!(e.contains("min_times") && e.contains("min_plus"), "{e}");
    }

    #[test]
    fn identities_are_identities() {
        for r in Semiring::ALL {
            if r == Semiring::AnyPair {
                continue; // any's identity is "no entry"
            }
            for x in [-2.5f64, 0.0, 1.0, 7.0] {
                let x = if r == Semiring::OrAnd {
                    (x != 0.0) as u8 as f64
                } else {
                    x
                };
                assert_eq!(r.plus(r.identity::<f64>(), x), x, "{r}");
                assert_eq!(r.plus(x, r.identity::<f64>()), x, "{r}");
            }
        }
    }

    #[test]
    fn reduce_folds_from_the_identity() {
        let v = [3.0f64, -1.0, 2.0];
        assert_eq!(Semiring::PlusTimes.reduce(&v), 4.0);
        assert_eq!(Semiring::PlusPair.reduce(&v), 4.0);
        assert_eq!(Semiring::MinPlus.reduce(&v), -1.0);
        assert_eq!(Semiring::MaxTimes.reduce(&v), 3.0);
        assert_eq!(Semiring::OrAnd.reduce(&[0.0f64, 1.0]), 1.0);
        assert_eq!(Semiring::AnyPair.reduce(&[1i32, 1]), 1);
        assert_eq!(Semiring::MinPlus.reduce::<f64>(&[]), f64::INFINITY);
        assert_eq!(Semiring::MinPlus.reduce::<i32>(&[]), i32::MAX);
        assert_eq!(Semiring::PlusTimes.reduce::<i64>(&[]), 0);
    }

    #[test]
    fn min_and_max_skip_nan() {
        assert_eq!(Semiring::MinPlus.plus(f64::NAN, 2.0), 2.0);
        assert_eq!(Semiring::MinPlus.plus(2.0, f64::NAN), 2.0);
        assert_eq!(Semiring::MaxTimes.plus(f64::NAN, 2.0), 2.0);
    }

    #[test]
    fn prune_drops_small_then_keeps_largest() {
        let mut row = vec![(1u32, 0.5f64), (3, -4.0), (4, 0.01), (7, 4.0), (9, 2.0)];
        Prune {
            below: Some(0.1),
            keep: Some(2),
            columns: false,
        }
        .row(&mut row);
        assert_eq!(row, vec![(3, -4.0), (7, 4.0)]);
        let mut row = vec![(1u32, 1.0f64), (2, 1.0), (3, 1.0)];
        Prune {
            below: None,
            keep: Some(2),
            columns: false,
        }
        .row(&mut row);
        assert_eq!(row, vec![(1, 1.0), (2, 1.0)], "ties go to the lower column");
        Prune {
            below: None,
            keep: Some(0),
            columns: false,
        }
        .row(&mut row);
        assert!(row.is_empty());
    }

    #[test]
    fn spec_checks_mask_shape_and_threshold() {
        let m = crate::CsrMatrix::<f64>::zeros(3, 4).unwrap();
        let spec = ProductSpec::<f64> {
            mask: Some(Mask::of(m.view(), false)),
            ..Default::default()
        };
        assert!(spec.check((3, 5), (5, 4)).is_ok());
        let e = spec.check((3, 5), (5, 6)).unwrap_err().to_string();
        assert!(e.contains("3x4") && e.contains("3x6"), "{e}");
        let spec = ProductSpec::<f64> {
            prune: Prune {
                below: Some(f64::NAN),
                keep: None,
                columns: false,
            },
            ..Default::default()
        };
        assert!(spec.check((2, 2), (2, 2)).is_err());
    }

    #[test]
    fn pruning_after_the_product_equals_the_reference() {
        let a = crate::generate::uniform::<f64>(200, 150, 8, 5).unwrap();
        let b = crate::generate::uniform::<f64>(150, 180, 9, 6).unwrap();
        let c = crate::reference::multiply(&a, &b).unwrap();
        for columns in [false, true] {
            let prune = Prune {
                below: Some(0.05),
                keep: Some(3),
                columns,
            };
            let spec = ProductSpec {
                prune,
                ..ProductSpec::new()
            };
            let want = crate::reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
            assert_eq!(pruned(&c, &prune).unwrap(), want, "columns {columns}");
        }
    }
}
