//! NumPy CSR arrays borrowed in place: SciPy's `int32` column indices and
//! `float32`, `float64`, `int32` or `int64` values are read where they lie
//! (a [`CsrCow`]),
//! `int32` row offsets (`nrows + 1` of them) and `int64` column indices
//! are converted; C's arrays become NumPy arrays without a copy where the
//! types allow.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use rayon::prelude::*;
use spgemm::interop::{indices_as_u32, offsets_as_usize, CsrCow};
use spgemm::semiring::{Prune, Semiring};
use spgemm::{Backend, CsrMatrix, Galerkin, Plan, ProductSpec, Scalar, Transposed};
use std::borrow::Cow;

/// An index array as NumPy holds it.
pub(crate) enum Index<'py> {
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

/// A value array as NumPy holds it.
enum Values<'py> {
    F32(PyReadonlyArray1<'py, f32>),
    F64(PyReadonlyArray1<'py, f64>),
    I32(PyReadonlyArray1<'py, i32>),
    I64(PyReadonlyArray1<'py, i64>),
}

/// One operand: `(nrows, ncols, indptr, indices, data)` from Python, the
/// arrays one-dimensional and contiguous, indices `int32` or `int64`,
/// values `float32`, `float64`, `int32` or `int64`. Holding it keeps
/// NumPy's borrow flags.
pub(crate) struct Operand<'py> {
    nrows: usize,
    ncols: usize,
    indptr: Index<'py>,
    indices: Index<'py>,
    data: Values<'py>,
    check: bool,
}

/// `x` as an index array (`int32` or `int64`, one-dimensional), or a
/// `ValueError` naming it `what`.
pub(crate) fn index<'py>(x: &Bound<'py, PyAny>, what: &str) -> PyResult<Index<'py>> {
    if let Ok(a) = x.extract::<PyReadonlyArray1<'py, i32>>() {
        return Ok(Index::I32(a));
    }
    if let Ok(a) = x.extract::<PyReadonlyArray1<'py, i64>>() {
        return Ok(Index::I64(a));
    }
    Err(PyValueError::new_err(format!(
        "{what} must be a one-dimensional int32 or int64 array"
    )))
}

impl<'py> Operand<'py> {
    /// Reads the tuple `(nrows, ncols, indptr, indices, data)`.
    pub(crate) fn extract(t: &Bound<'py, PyAny>, check: bool) -> PyResult<Self> {
        let (nrows, ncols, indptr, indices, data): (
            usize,
            usize,
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
        ) = t.extract()?;
        let data = if let Ok(a) = data.extract::<PyReadonlyArray1<'py, f32>>() {
            Values::F32(a)
        } else if let Ok(a) = data.extract::<PyReadonlyArray1<'py, f64>>() {
            Values::F64(a)
        } else if let Ok(a) = data.extract::<PyReadonlyArray1<'py, i32>>() {
            Values::I32(a)
        } else if let Ok(a) = data.extract::<PyReadonlyArray1<'py, i64>>() {
            Values::I64(a)
        } else {
            return Err(PyValueError::new_err(
                "data must be a one-dimensional float32, float64, int32 or int64 array",
            ));
        };
        Ok(Self {
            nrows,
            ncols,
            indptr: index(&indptr, "indptr")?,
            indices: index(&indices, "indices")?,
            data,
            check,
        })
    }

    /// The value type's name.
    fn dtype(&self) -> &'static str {
        match self.data {
            Values::F32(_) => "float32",
            Values::F64(_) => "float64",
            Values::I32(_) => "int32",
            Values::I64(_) => "int64",
        }
    }

    /// The slices the arrays hold (contiguous, or a `ValueError`).
    pub(crate) fn slices(&self) -> PyResult<Slices<'_>> {
        let fail = |_| PyValueError::new_err("data must be contiguous");
        Ok(Slices {
            nrows: self.nrows,
            ncols: self.ncols,
            indptr: self.indptr.slice("indptr")?,
            indices: self.indices.slice("indices")?,
            data: match &self.data {
                Values::F32(a) => ValueSlice::F32(a.as_slice().map_err(fail)?),
                Values::F64(a) => ValueSlice::F64(a.as_slice().map_err(fail)?),
                Values::I32(a) => ValueSlice::I32(a.as_slice().map_err(fail)?),
                Values::I64(a) => ValueSlice::I64(a.as_slice().map_err(fail)?),
            },
            check: self.check,
        })
    }
}

/// Both operands of one value type, or a `ValueError`.
pub(crate) fn same_precision(a: &Operand<'_>, b: &Operand<'_>) -> PyResult<()> {
    if a.dtype() != b.dtype() {
        return Err(PyValueError::new_err(format!(
            "A and B must have the same dtype, not {} and {}",
            a.dtype(),
            b.dtype()
        )));
    }
    Ok(())
}

#[derive(Clone, Copy)]
pub(crate) enum IndexSlice<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
}

impl<'py> Index<'py> {
    /// The indices as a slice (contiguous, or a `ValueError` naming them
    /// `what`).
    pub(crate) fn slice(&self, what: &str) -> PyResult<IndexSlice<'_>> {
        let fail = |_| PyValueError::new_err(format!("{what} must be contiguous"));
        Ok(match self {
            Index::I32(a) => IndexSlice::I32(a.as_slice().map_err(fail)?),
            Index::I64(a) => IndexSlice::I64(a.as_slice().map_err(fail)?),
        })
    }
}

impl IndexSlice<'_> {
    /// Whether these indices equal `x`'s (unsigned, so a negative index
    /// equals none), compared in blocks on all cores.
    pub(crate) fn equals<U: Copy + Sync + TryInto<i64>>(&self, x: &[U]) -> bool {
        fn same<I: Copy + Sync + Into<i64>, U: Copy + Sync + TryInto<i64>>(
            a: &[I],
            b: &[U],
        ) -> bool {
            const BLOCK: usize = 1 << 16;
            a.len() == b.len()
                && a.par_chunks(BLOCK).zip(b.par_chunks(BLOCK)).all(|(p, q)| {
                    p.iter()
                        .zip(q)
                        .all(|(&u, &v)| v.try_into().ok() == Some(u.into()))
                })
        }
        match *self {
            IndexSlice::I32(s) => same(s, x),
            IndexSlice::I64(s) => same(s, x),
        }
    }
}

#[derive(Clone, Copy)]
enum ValueSlice<'a> {
    F32(&'a [f32]),
    F64(&'a [f64]),
    I32(&'a [i32]),
    I64(&'a [i64]),
}

/// An operand's slices: plain data, usable with the GIL released.
#[derive(Clone, Copy)]
pub(crate) struct Slices<'a> {
    nrows: usize,
    ncols: usize,
    indptr: IndexSlice<'a>,
    indices: IndexSlice<'a>,
    data: ValueSlice<'a>,
    check: bool,
}

impl<'a> Slices<'a> {
    /// Whether `other` is the same arrays (the same memory, not equal
    /// contents) of the same shape.
    fn same_arrays(&self, other: &Slices<'_>) -> bool {
        fn addr(i: &IndexSlice<'_>) -> (usize, usize) {
            match i {
                IndexSlice::I32(s) => (s.as_ptr() as usize, s.len()),
                IndexSlice::I64(s) => (s.as_ptr() as usize, s.len() * 2),
            }
        }
        (self.nrows, self.ncols) == (other.nrows, other.ncols)
            && addr(&self.indptr) == addr(&other.indptr)
            && addr(&self.indices) == addr(&other.indices)
    }

    /// The matrix over these arrays: checked (bounds always, sorted rows
    /// when `check`), indices reinterpreted where their bits are ours and
    /// converted otherwise. A negative index is named as such.
    fn csr<T: Scalar>(&self, values: &'a [T]) -> spgemm::Result<CsrCow<'a, T>> {
        self.csr_over(values, None)
    }

    /// [`Slices::csr`], with `known` row offsets (a plan's) borrowed in
    /// place of `int32` ones that equal them: no conversion.
    fn csr_over<T: Scalar>(
        &self,
        values: &'a [T],
        known: Option<&'a [usize]>,
    ) -> spgemm::Result<CsrCow<'a, T>> {
        let offsets = match (self.indptr, known) {
            (IndexSlice::I64(s), _) => match bytemuck::try_cast_slice::<i64, usize>(s) {
                Ok(u) => Cow::Borrowed(u),
                Err(_) => Cow::Owned(offsets_as_usize(s)?),
            },
            (i @ IndexSlice::I32(_), Some(k)) if i.equals(k) => Cow::Borrowed(k),
            (IndexSlice::I32(s), _) => Cow::Owned(offsets_as_usize(s)?),
        };
        let cols = match self.indices {
            IndexSlice::I32(s) => Cow::Borrowed(bytemuck::cast_slice::<i32, u32>(s)),
            IndexSlice::I64(s) => Cow::Owned(indices_as_u32(s)?),
        };
        let m = CsrCow::new(self.nrows, self.ncols, offsets, cols, Cow::Borrowed(values))
            .map_err(|e| self.negative().unwrap_or(e))?;
        if self.check {
            m.view().check_sorted()?;
        }
        Ok(m)
    }

    /// The first negative index, as an error, when there is one (the bits
    /// of a negative index reinterpreted read as a huge one).
    fn negative(&self) -> Option<spgemm::error::Error> {
        match (self.indptr, self.indices) {
            (IndexSlice::I64(s), _) if offsets_as_usize(s).is_err() => offsets_as_usize(s).err(),
            (_, IndexSlice::I32(s)) => indices_as_u32(s).err(),
            _ => None,
        }
    }
}

/// C of any value type.
pub(crate) enum AnyCsr {
    F32(CsrMatrix<f32>),
    F64(CsrMatrix<f64>),
    I32(CsrMatrix<i32>),
    I64(CsrMatrix<i64>),
}

macro_rules! any_csr_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<CsrMatrix<$t>> for AnyCsr {
            fn from(c: CsrMatrix<$t>) -> Self {
                AnyCsr::$v(c)
            }
        }
    )*};
}
any_csr_from!(f32 => F32, f64 => F64, i32 => I32, i64 => I64);

/// Runs `op` on both operands' matrices, of their common value type.
fn dispatch<R>(sa: Slices<'_>, sb: Slices<'_>, op: impl ForEachType<R>) -> spgemm::Result<R> {
    match (sa.data, sb.data) {
        (ValueSlice::F32(va), ValueSlice::F32(vb)) => both(&sa, va, &sb, vb, op),
        (ValueSlice::F64(va), ValueSlice::F64(vb)) => both(&sa, va, &sb, vb, op),
        (ValueSlice::I32(va), ValueSlice::I32(vb)) => both(&sa, va, &sb, vb, op),
        (ValueSlice::I64(va), ValueSlice::I64(vb)) => both(&sa, va, &sb, vb, op),
        _ => Err(spgemm::error::Error::StructureMismatch("A and B differ in dtype".into()).into()),
    }
}

/// `op` on A's and B's matrices; B is A's matrix when its arrays are A's
/// (`A·A`, or `A·Aᵀ` given as `a.T`): converted once, and recognised by
/// the product as the same arrays.
fn both<'s, T: Precision, R>(
    sa: &Slices<'s>,
    va: &'s [T],
    sb: &Slices<'s>,
    vb: &'s [T],
    op: impl ForEachType<R>,
) -> spgemm::Result<R>
where
    AnyCsr: From<CsrMatrix<T>>,
{
    let a = sa.csr(va)?;
    if sa.same_arrays(sb) && std::ptr::eq(va, vb) {
        return op.run(&a, &a);
    }
    op.run(&a, &sb.csr(vb)?)
}

/// Runs `f32_op` or `f64_op` on both operands' matrices, by precision:
/// for the plans and Galerkin products, which take floats only.
fn dispatch_float<R>(
    sa: Slices<'_>,
    sb: Slices<'_>,
    f32_op: impl FnOnce(&CsrCow<'_, f32>, &CsrCow<'_, f32>) -> spgemm::Result<R>,
    f64_op: impl FnOnce(&CsrCow<'_, f64>, &CsrCow<'_, f64>) -> spgemm::Result<R>,
) -> spgemm::Result<R> {
    match (sa.data, sb.data) {
        (ValueSlice::F32(va), ValueSlice::F32(vb)) => f32_op(&sa.csr(va)?, &sb.csr(vb)?),
        (ValueSlice::F64(va), ValueSlice::F64(vb)) => f64_op(&sa.csr(va)?, &sb.csr(vb)?),
        (ValueSlice::I32(_) | ValueSlice::I64(_), _) => Err(spgemm::error::Error::NotOnBackend(
            "plans and Galerkin products take float32 or float64 values".into(),
        )
        .into()),
        _ => Err(spgemm::error::Error::StructureMismatch("A and B differ in dtype".into()).into()),
    }
}

/// An operation on two matrices of any one value type of the package.
trait ForEachType<R> {
    fn run<T: Precision>(self, a: &CsrCow<'_, T>, b: &CsrCow<'_, T>) -> spgemm::Result<R>
    where
        AnyCsr: From<CsrMatrix<T>>;
}

/// `C = R·A·P` on `backend` (`r = None`: `Pᵀ·A·P`), all three of one
/// precision, without a plan.
pub(crate) fn rap(
    backend: &Backend,
    r: Option<Slices<'_>>,
    a: Slices<'_>,
    p: Slices<'_>,
) -> spgemm::Result<AnyCsr> {
    dispatch_float(
        a,
        p,
        |a, p| {
            Ok(AnyCsr::F32(match third::<f32>(r, "R")? {
                Some(r) => backend.rap(&r, a, p)?,
                None => backend.ptap(a, p)?,
            }))
        },
        |a, p| {
            Ok(AnyCsr::F64(match third::<f64>(r, "R")? {
                Some(r) => backend.rap(&r, a, p)?,
                None => backend.ptap(a, p)?,
            }))
        },
    )
}

/// `C = A·B` on `backend`.
pub(crate) fn multiply(backend: &Backend, a: Slices<'_>, b: Slices<'_>) -> spgemm::Result<AnyCsr> {
    struct Op<'b>(&'b Backend);
    impl ForEachType<AnyCsr> for Op<'_> {
        fn run<T: Precision>(self, a: &CsrCow<'_, T>, b: &CsrCow<'_, T>) -> spgemm::Result<AnyCsr>
        where
            AnyCsr: From<CsrMatrix<T>>,
        {
            self.0.multiply(a, b).map(AnyCsr::from)
        }
    }
    dispatch(a, b, Op(backend))
}

/// A value type of the package, picked out of a `ValueSlice`.
trait Precision: Scalar {
    fn values(v: ValueSlice<'_>) -> Option<&[Self]>;
}

macro_rules! precision {
    ($($t:ty => $v:ident),*) => {$(
        impl Precision for $t {
            fn values(v: ValueSlice<'_>) -> Option<&[$t]> {
                match v {
                    ValueSlice::$v(v) => Some(v),
                    _ => None,
                }
            }
        }
    )*};
}
precision!(f32 => F32, f64 => F64, i32 => I32, i64 => I64);

/// A third operand (`what`: the mask, R) as a matrix of A's value type
/// `T`, or an error when its dtype differs.
fn third<'a, T: Precision>(
    s: Option<Slices<'a>>,
    what: &str,
) -> spgemm::Result<Option<CsrCow<'a, T>>> {
    let Some(s) = s else { return Ok(None) };
    match T::values(s.data) {
        Some(v) => Ok(Some(s.csr(v)?)),
        None => Err(spgemm::error::Error::StructureMismatch(format!(
            "{what} differs from A in dtype"
        ))
        .into()),
    }
}

/// What `matmul` computes beside `A·B`: the semiring, the mask's sense
/// and the pruning (a threshold of magnitude, at most `keep` a row).
pub(crate) struct Extras {
    pub semiring: Semiring,
    pub complement: bool,
    pub below: Option<f64>,
    pub keep: Option<usize>,
    pub columns: bool,
    /// B is given as its transpose (`N×K`).
    pub b_transposed: bool,
}

impl Extras {
    /// The extras of Python's keywords: `semiring` a GraphBLAS name
    /// (`ValueError` otherwise), `prune` a threshold of magnitude, `keep`
    /// at most this many entries a row (or column, with `columns`).
    pub fn parse(
        semiring: &str,
        complement: bool,
        below: Option<f64>,
        keep: Option<usize>,
        columns: bool,
        b_transposed: bool,
    ) -> pyo3::PyResult<Self> {
        Ok(Extras {
            semiring: semiring
                .parse()
                .map_err(pyo3::exceptions::PyValueError::new_err)?,
            complement,
            below,
            keep,
            columns,
            b_transposed,
        })
    }

    /// The pruning in values of `T`: a threshold of an integer type rounded
    /// up (an integer's magnitude is at least `t` exactly when it is at
    /// least `⌈t⌉`).
    pub fn prune<T: Scalar>(&self) -> Prune<T> {
        Prune {
            below: self
                .below
                .map(|t| T::from_f64(if T::INTEGER { t.ceil() } else { t })),
            keep: self.keep,
            columns: self.columns,
        }
    }
}

/// One value of any precision: floats as `f64`, integers as `i64`
/// (exactly).
pub(crate) enum Reduced {
    Float(f64),
    Integer(i64),
}

impl Reduced {
    /// `v` as a Python number's value.
    pub fn of<T: Scalar>(v: T) -> Self {
        match (T::INTEGER, std::mem::size_of::<T>()) {
            (false, _) => Reduced::Float(v.to_f64()),
            (true, 8) => Reduced::Integer(bytemuck::cast::<T, i64>(v)),
            (true, _) => Reduced::Integer(i64::from(bytemuck::cast::<T, i32>(v))),
        }
    }
}

impl<'py> pyo3::IntoPyObject<'py> for Reduced {
    type Target = pyo3::PyAny;
    type Output = pyo3::Bound<'py, pyo3::PyAny>;
    type Error = std::convert::Infallible;
    fn into_pyobject(self, py: pyo3::Python<'py>) -> Result<Self::Output, Self::Error> {
        Ok(match self {
            Reduced::Float(x) => x.into_pyobject(py)?.into_any(),
            Reduced::Integer(x) => x.into_pyobject(py)?.into_any(),
        })
    }
}

/// C, or C reduced to one value.
pub(crate) enum Outcome {
    Csr(AnyCsr),
    Reduced(Reduced),
}

/// `C⟨M⟩ = A ⊕.⊗ B` on `backend` as `extras` say (the mask's values of
/// A's type, not read), or with `reduce` `⊕` over C's entries
/// ([`Backend::reduce_spec`]).
pub(crate) fn spec_product(
    backend: &Backend,
    a: Slices<'_>,
    b: Slices<'_>,
    mask: Option<Slices<'_>>,
    extras: &Extras,
    reduce: bool,
) -> spgemm::Result<Outcome> {
    fn run<T: Scalar>(
        backend: &Backend,
        a: &CsrCow<'_, T>,
        b: &CsrCow<'_, T>,
        mask: Option<&CsrCow<'_, T>>,
        x: &Extras,
        reduce: bool,
    ) -> spgemm::Result<Result<CsrMatrix<T>, T>> {
        let mut spec = ProductSpec::new().semiring(x.semiring);
        if let Some(m) = mask {
            spec = spec.mask(m.view(), x.complement);
        }
        spec.prune = x.prune();
        let t = x.b_transposed.then_some(Transposed::B);
        if reduce {
            return backend.reduce_spec(a, b, &spec, t).map(Err);
        }
        match t {
            Some(t) => backend.multiply_spec_transposed(a, b, &spec, t),
            None => backend.multiply_spec(a, b, &spec),
        }
        .map(Ok)
    }
    struct Op<'a, 'x> {
        backend: &'x Backend,
        mask: Option<Slices<'a>>,
        mask_is_a: bool,
        extras: &'x Extras,
        reduce: bool,
    }
    impl ForEachType<Outcome> for Op<'_, '_> {
        fn run<T: Precision>(self, a: &CsrCow<'_, T>, b: &CsrCow<'_, T>) -> spgemm::Result<Outcome>
        where
            AnyCsr: From<CsrMatrix<T>>,
        {
            let m = third::<T>(self.mask, "the mask")?;
            let m = if self.mask_is_a { Some(a) } else { m.as_ref() };
            Ok(
                match run(self.backend, a, b, m, self.extras, self.reduce)? {
                    Ok(c) => Outcome::Csr(AnyCsr::from(c)),
                    Err(v) => Outcome::Reduced(Reduced::of(v)),
                },
            )
        }
    }
    // A mask that is A's arrays (C⟨A⟩ = A·B, triangle counting) is A's
    // matrix: converted once, and on a GPU uploaded once.
    let mask_is_a = mask.as_ref().is_some_and(|m| m.same_arrays(&a));
    let mask = if mask_is_a { None } else { mask };
    let op = Op {
        backend,
        mask,
        mask_is_a,
        extras,
        reduce,
    };
    dispatch(a, b, op)
}

/// Each vertex's level in a breadth-first search of A's graph from
/// `source` on `backend` ([`Backend::bfs_levels`]), A in its own value
/// type (its values are not read).
pub(crate) fn bfs_levels(
    backend: &Backend,
    a: Slices<'_>,
    source: usize,
) -> spgemm::Result<Vec<i32>> {
    match a.data {
        ValueSlice::F32(v) => backend.bfs_levels(&a.csr(v)?, source),
        ValueSlice::F64(v) => backend.bfs_levels(&a.csr(v)?, source),
        ValueSlice::I32(v) => backend.bfs_levels(&a.csr(v)?, source),
        ValueSlice::I64(v) => backend.bfs_levels(&a.csr(v)?, source),
    }
}

/// A Galerkin plan in either precision.
pub(crate) enum AnyGalerkin {
    F32(Galerkin<f32>),
    F64(Galerkin<f64>),
}

impl AnyGalerkin {
    /// `C = R·A·P` on `backend` (`r = None`: `Pᵀ·A·P`), all three of one
    /// precision, and the plan that recomputes it.
    pub(crate) fn build(
        backend: &Backend,
        r: Option<Slices<'_>>,
        a: Slices<'_>,
        p: Slices<'_>,
    ) -> spgemm::Result<(Self, AnyCsr)> {
        dispatch_float(
            a,
            p,
            |a, p| {
                let r = third::<f32>(r, "R")?;
                let (g, c) = backend.galerkin(r.as_ref().map(|r| r.view()), a, p)?;
                Ok((AnyGalerkin::F32(g), AnyCsr::F32(c)))
            },
            |a, p| {
                let r = third::<f64>(r, "R")?;
                let (g, c) = backend.galerkin(r.as_ref().map(|r| r.view()), a, p)?;
                Ok((AnyGalerkin::F64(g), AnyCsr::F64(c)))
            },
        )
    }

    /// nnz(C).
    pub(crate) fn nnz(&self) -> usize {
        match self {
            AnyGalerkin::F32(g) => g.nnz(),
            AnyGalerkin::F64(g) => g.nnz(),
        }
    }

    /// C again for `a` of the plan's structure and precision, new values
    /// (A's `int32` row offsets not converted where they equal the plan's).
    pub(crate) fn numeric(&self, backend: &Backend, a: Slices<'_>) -> spgemm::Result<AnyCsr> {
        match (self, a.data) {
            (AnyGalerkin::F32(g), ValueSlice::F32(v)) => Ok(AnyCsr::F32(
                g.numeric(backend, &a.csr_over(v, g.a_row_offsets())?)?,
            )),
            (AnyGalerkin::F64(g), ValueSlice::F64(v)) => Ok(AnyCsr::F64(
                g.numeric(backend, &a.csr_over(v, g.a_row_offsets())?)?,
            )),
            _ => Err(galerkin_dtype()),
        }
    }

    /// [`AnyGalerkin::numeric`] writing only C's values, into `out`
    /// (nnz(C) of the plan's dtype, in the order of C's entries).
    pub(crate) fn numeric_values(
        &self,
        backend: &Backend,
        a: Slices<'_>,
        out: ValuesMut<'_>,
    ) -> spgemm::Result<()> {
        match (self, a.data, out) {
            (AnyGalerkin::F32(g), ValueSlice::F32(v), ValuesMut::F32(o)) => {
                g.numeric_values(backend, &a.csr_over(v, g.a_row_offsets())?, o)
            }
            (AnyGalerkin::F64(g), ValueSlice::F64(v), ValuesMut::F64(o)) => {
                g.numeric_values(backend, &a.csr_over(v, g.a_row_offsets())?, o)
            }
            _ => Err(galerkin_dtype()),
        }
    }
}

/// A mismatch of A's (or C's) dtype and a Galerkin plan's.
fn galerkin_dtype() -> spgemm::Error {
    spgemm::error::Error::StructureMismatch(
        "A (or the C given for the values) differs in dtype from the Galerkin plan's".into(),
    )
    .into()
}

/// C's values to fill, of a Galerkin plan's precision.
pub(crate) enum ValuesMut<'a> {
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
}

/// A plan in either precision.
pub(crate) enum AnyPlan {
    F32(Plan<f32>),
    F64(Plan<f64>),
}

impl AnyPlan {
    /// The symbolic phase of `A·B` on `backend`.
    pub(crate) fn build(backend: &Backend, a: Slices<'_>, b: Slices<'_>) -> spgemm::Result<Self> {
        dispatch_float(
            a,
            b,
            |a, b| backend.symbolic(a, b).map(AnyPlan::F32),
            |a, b| backend.symbolic(a, b).map(AnyPlan::F64),
        )
    }

    /// nnz(C).
    pub(crate) fn nnz(&self) -> usize {
        match self {
            AnyPlan::F32(p) => p.nnz(),
            AnyPlan::F64(p) => p.nnz(),
        }
    }

    /// The numeric phase with new operands of the plan's precision.
    pub(crate) fn numeric(
        &self,
        backend: &Backend,
        a: Slices<'_>,
        b: Slices<'_>,
    ) -> spgemm::Result<AnyCsr> {
        let wrong = || {
            spgemm::Error::from(spgemm::error::Error::StructureMismatch(
                "the plan was built for the other dtype (float32 / float64)".into(),
            ))
        };
        dispatch_float(
            a,
            b,
            |a, b| match self {
                AnyPlan::F32(p) => backend.numeric(p, a, b).map(AnyCsr::F32),
                AnyPlan::F64(_) => Err(wrong()),
            },
            |a, b| match self {
                AnyPlan::F64(p) => backend.numeric(p, a, b).map(AnyCsr::F64),
                AnyPlan::F32(_) => Err(wrong()),
            },
        )
    }
}

/// C's `(indptr, indices, data)` as NumPy arrays.
pub(crate) type Product<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>);

/// C's arrays handed to NumPy: `int32` indices when nnz(C) and both
/// dimensions fit (SciPy's own rule), `int64` otherwise; values and the
/// index array of the width we hold are moved, not copied.
pub(crate) fn product(py: Python<'_>, c: AnyCsr) -> PyResult<Product<'_>> {
    fn parts<'py, T: Scalar + numpy::Element>(
        py: Python<'py>,
        c: CsrMatrix<T>,
    ) -> PyResult<Product<'py>> {
        let small = [c.nrows(), c.ncols(), c.nnz()]
            .iter()
            .all(|&n| n <= i32::MAX as usize);
        let (_, _, offsets, cols, vals) = c.into_parts();
        let data = PyArray1::from_vec(py, vals).into_any();
        if small {
            let offsets: Vec<i32> = offsets.iter().map(|&o| o as i32).collect();
            let cols: Vec<i32> = bytemuck::cast_vec(cols);
            Ok((
                PyArray1::from_vec(py, offsets).into_any(),
                PyArray1::from_vec(py, cols).into_any(),
                data,
            ))
        } else {
            // Offsets never pass isize::MAX (they count allocated entries).
            let offsets: Vec<i64> = bytemuck::cast_vec(offsets);
            let cols: Vec<i64> = cols.iter().map(|&c| i64::from(c)).collect();
            Ok((
                PyArray1::from_vec(py, offsets).into_any(),
                PyArray1::from_vec(py, cols).into_any(),
                data,
            ))
        }
    }
    match c {
        AnyCsr::F32(c) => parts(py, c),
        AnyCsr::F64(c) => parts(py, c),
        AnyCsr::I32(c) => parts(py, c),
        AnyCsr::I64(c) => parts(py, c),
    }
}
