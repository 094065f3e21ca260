//! The `spgemm._spgemm` extension module: CSR arrays of SciPy (NumPy) in,
//! CSR arrays out, the GIL released during products. The Python package
//! (`python/spgemm/__init__.py`) turns SciPy, CuPy and PyTorch matrices
//! into these arrays and back.

mod arrays;
mod common_case;
mod device;
mod device_galerkin;
#[cfg(feature = "mpi")]
mod distributed;
#[cfg(feature = "mpi")]
mod distributed_device;
mod galerkin_reuse;
mod search;

use arrays::{Operand, Product, Slices};
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use spgemm::{Backend, BackendKind};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// A Python exception for `e`: malformed input and mismatched shapes or
/// structures are `ValueError`, exhausted host or device memory
/// `MemoryError`, a backend that cannot run or a failing device
/// `RuntimeError`.
pub(crate) fn to_py(e: spgemm::Error) -> PyErr {
    use spgemm::error::Error as Core;
    match &e {
        spgemm::Error::BackendUnavailable { .. } => PyRuntimeError::new_err(e.to_string()),
        spgemm::Error::PlanBackend { .. } => PyValueError::new_err(e.to_string()),
        spgemm::Error::Core(Core::HostOutOfMemory { .. }) => PyMemoryError::new_err(e.to_string()),
        spgemm::Error::Core(Core::Device(d))
            if d.kind == spgemm::device::DeviceErrorKind::OutOfMemory =>
        {
            PyMemoryError::new_err(e.to_string())
        }
        spgemm::Error::Core(
            Core::Device(_)
            | Core::TableDoesNotFit(_)
            | Core::NoDevices
            | Core::KernelArguments { .. },
        ) => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// The backends opened so far, by name and GPU ordinal: opening one (a
/// GPU context, its kernels compiled or loaded from the disk cache) is done
/// once per process.
pub(crate) fn open(name: &str, device: usize) -> PyResult<Arc<Backend>> {
    type Opened = HashMap<(String, usize), Arc<Backend>>;
    static OPEN: OnceLock<Mutex<Opened>> = OnceLock::new();
    let kind: BackendKind = name.parse().map_err(PyValueError::new_err)?;
    let mut open = OPEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let key = (name.to_string(), device);
    if let Some(b) = open.get(&key) {
        return Ok(b.clone());
    }
    let options = spgemm::GpuConfig {
        devices: vec![device],
        ..Default::default()
    };
    let (b, _) = Backend::select_with(kind, &options).map_err(to_py)?;
    let b = Arc::new(b);
    open.insert(key, b.clone());
    Ok(b)
}

/// The backend `name` on GPU 0 (the CPU for "cpu").
fn backend(name: &str) -> PyResult<Arc<Backend>> {
    open(name, 0)
}

/// `f` run on a thread of rayon's global pool: the operands' checks and
/// conversions and the product's passes then run as nested tasks, rather
/// than each pass handed from the interpreter's thread to the pool and
/// waited for.
pub(crate) fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    rayon::scope(|_| f())
}

/// `backends()`: `(name, available, reason)` for "cpu", "cuda" and "hip".
#[pyfunction]
fn backends(py: Python<'_>) -> Vec<(String, bool, String)> {
    ["cpu", "cuda", "hip"]
        .iter()
        .map(
            |&name| match py.detach(|| backend(name).map(|b| b.device())) {
                Ok(device) => (name.to_string(), true, device),
                Err(e) => (name.to_string(), false, e.value(py).to_string()),
            },
        )
        .collect()
}

/// `backend_name(backend)`: the backend that `backend` ("auto", "cpu",
/// "cuda", "hip") opens here.
#[pyfunction]
fn backend_name(py: Python<'_>, backend: &str) -> PyResult<&'static str> {
    py.detach(|| self::backend(backend).map(|b| b.name()))
}

/// `matmul(a, b, backend, check)`: C = A·B of two operands, each
/// `(nrows, ncols, indptr, indices, data)` (see `arrays::Operand`);
/// returns C's `(indptr, indices, data)` as NumPy arrays.
#[pyfunction]
fn matmul<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    backend: &str,
    check: bool,
) -> PyResult<Product<'py>> {
    let be = self::backend(backend)?;
    let (a, b) = (Operand::extract(a, check)?, Operand::extract(b, check)?);
    arrays::same_precision(&a, &b)?;
    let (a, b) = (a.slices()?, b.slices()?);
    let c = py.detach(|| on_pool(|| arrays::multiply(&be, a, b)));
    arrays::product(py, c.map_err(to_py)?)
}

/// `matmul_spec(a, b, mask, backend, check, semiring, complement, prune,
/// keep, prune_columns, b_transposed, reduce)`: `C⟨M⟩ = A ⊕.⊗ B` (`mask`
/// an operand like `a` or `None`; `semiring` a GraphBLAS name; `prune` a
/// threshold of magnitude or `None`; `keep` at most this many entries a row
/// or `None`; `b_transposed`: `b` holds Bᵀ, `N×K`); returns C's `(indptr,
/// indices, data)`, or with `reduce` `⊕` over C's entries
/// ([`spgemm::Backend::reduce_spec`]): a float, or an int for integer
/// values.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // one keyword of Python's matmul each
fn matmul_spec<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    mask: Option<&Bound<'py, PyAny>>,
    backend: &str,
    check: bool,
    semiring: &str,
    complement: bool,
    prune: Option<f64>,
    keep: Option<usize>,
    prune_columns: bool,
    b_transposed: bool,
    reduce: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let extras = arrays::Extras::parse(
        semiring,
        complement,
        prune,
        keep,
        prune_columns,
        b_transposed,
    )?;
    let out = with_spec_operands(py, (a, b, mask), backend, check, |be, a, b, m| {
        arrays::spec_product(be, a, b, m, &extras, reduce)
    })?;
    Ok(match out {
        arrays::Outcome::Csr(c) => arrays::product(py, c)?.into_pyobject(py)?.into_any(),
        arrays::Outcome::Reduced(r) => r.into_pyobject(py)?,
    })
}

/// `f` on `backend` for the operands `a`, `b` and `mask` (of one
/// precision; the mask's values not read), with the GIL released.
fn with_spec_operands<'py, R: Send>(
    py: Python<'py>,
    (a, b, mask): (
        &Bound<'py, PyAny>,
        &Bound<'py, PyAny>,
        Option<&Bound<'py, PyAny>>,
    ),
    backend: &str,
    check: bool,
    f: impl FnOnce(&Backend, Slices<'_>, Slices<'_>, Option<Slices<'_>>) -> spgemm::Result<R> + Send,
) -> PyResult<R> {
    let be = self::backend(backend)?;
    let (a, b) = (Operand::extract(a, check)?, Operand::extract(b, check)?);
    arrays::same_precision(&a, &b)?;
    let m = mask.map(|m| Operand::extract(m, false)).transpose()?;
    let (a, b) = (a.slices()?, b.slices()?);
    let m = m.as_ref().map(|m| m.slices()).transpose()?;
    py.detach(|| on_pool(|| f(&be, a, b, m))).map_err(to_py)
}

/// `reduce_values(values, semiring)`: `⊕` over a NumPy array of float32,
/// float64, int32 or int64 values ([`spgemm::semiring::Semiring::reduce`];
/// the identity for none): a float, or an int for integers. `ValueError`
/// for another dtype or an unknown semiring.
#[pyfunction]
fn reduce_values(values: &Bound<'_, PyAny>, semiring: &str) -> PyResult<arrays::Reduced> {
    use numpy::PyReadonlyArray1;
    let semiring: spgemm::semiring::Semiring = semiring.parse().map_err(PyValueError::new_err)?;
    fn of<T: spgemm::Scalar + numpy::Element>(
        v: &Bound<'_, PyAny>,
        ring: spgemm::semiring::Semiring,
    ) -> Option<PyResult<arrays::Reduced>> {
        let v = v.extract::<PyReadonlyArray1<'_, T>>().ok()?;
        Some(
            v.as_slice()
                .map(|s| arrays::Reduced::of(ring.reduce(s)))
                .map_err(|e| PyValueError::new_err(e.to_string())),
        )
    }
    of::<f64>(values, semiring)
        .or_else(|| of::<f32>(values, semiring))
        .or_else(|| of::<i64>(values, semiring))
        .or_else(|| of::<i32>(values, semiring))
        .unwrap_or_else(|| {
            Err(PyValueError::new_err(
                "values to reduce must be a 1-D array of float32, float64, int32 or int64",
            ))
        })
}

/// Both symbolic phases of a Galerkin product `R·A·P`, kept to recompute
/// it for new values of A.
#[pyclass(module = "spgemm._spgemm", frozen)]
struct GalerkinPlan {
    backend: Arc<Backend>,
    plan: arrays::AnyGalerkin,
    /// C's structure as the setup returned it, to check a C to refill.
    c: galerkin_reuse::CStructure,
}

#[pymethods]
impl GalerkinPlan {
    /// nnz(C).
    #[getter]
    fn nnz(&self) -> usize {
        self.plan.nnz()
    }

    /// The backend that built the plan.
    #[getter]
    fn backend(&self) -> &'static str {
        self.backend.name()
    }

    /// `numeric(a, check)`: C's arrays for A of the plan's structure with
    /// new values.
    fn numeric<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        check: bool,
    ) -> PyResult<Product<'py>> {
        let a = Operand::extract(a, check)?;
        let a = a.slices()?;
        let c = py.detach(|| on_pool(|| self.plan.numeric(&self.backend, a)));
        arrays::product(py, c.map_err(to_py)?)
    }

    /// `refill(a, check, indptr, indices, data)`: C's values for A of the
    /// plan's structure with new values, written into `data`, the values of
    /// the C (`indptr`, `indices`) the setup returned; `ValueError` when
    /// that C's structure is not the plan's or `data` is not a writeable
    /// array of the plan's dtype and nnz(C).
    fn refill<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        check: bool,
        indptr: &Bound<'py, PyAny>,
        indices: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        let a = Operand::extract(a, check)?;
        let (indptr, indices) = (
            arrays::index(indptr, "out.indptr")?,
            arrays::index(indices, "out.indices")?,
        );
        let out = (
            indptr.slice("out.indptr")?,
            indices.slice("out.indices")?,
            data,
        );
        galerkin_reuse::refill(py, &self.backend, &self.plan, &self.c, a.slices()?, out)
    }
}

/// R (when given), A and P of a Galerkin product.
type Chain<'py> = (Option<Operand<'py>>, Operand<'py>, Operand<'py>);

/// The operands of `galerkin` and `rap` read, all of one precision, or a
/// `ValueError`.
fn chain<'py>(
    r: Option<&Bound<'py, PyAny>>,
    a: &Bound<'py, PyAny>,
    p: &Bound<'py, PyAny>,
    check: bool,
) -> PyResult<Chain<'py>> {
    let (a, p) = (Operand::extract(a, check)?, Operand::extract(p, check)?);
    arrays::same_precision(&a, &p)?;
    let r = r.map(|r| Operand::extract(r, check)).transpose()?;
    if let Some(r) = &r {
        arrays::same_precision(r, &a)?;
    }
    Ok((r, a, p))
}

/// `galerkin(r, a, p, backend, check)`: `C = R·A·P` (`r` an operand or
/// `None` for `Pᵀ·A·P`); returns a `GalerkinPlan` and C's
/// `(indptr, indices, data)`.
#[pyfunction]
fn galerkin<'py>(
    py: Python<'py>,
    r: Option<&Bound<'py, PyAny>>,
    a: &Bound<'py, PyAny>,
    p: &Bound<'py, PyAny>,
    backend: &str,
    check: bool,
) -> PyResult<(GalerkinPlan, Product<'py>)> {
    let be = self::backend(backend)?;
    let (r, a, p) = chain(r, a, p, check)?;
    let (a, p) = (a.slices()?, p.slices()?);
    let r = r.as_ref().map(|r| r.slices()).transpose()?;
    let built = py.detach(|| on_pool(|| arrays::AnyGalerkin::build(&be, r, a, p)));
    let (plan, c) = built.map_err(to_py)?;
    let plan = GalerkinPlan {
        backend: be,
        plan,
        c: galerkin_reuse::CStructure::of(&c),
    };
    Ok((plan, arrays::product(py, c)?))
}

/// `rap(r, a, p, backend, check)`: `C = R·A·P` (`r` an operand or `None`
/// for `Pᵀ·A·P`) without a plan, as `galerkin` computes it; returns C's
/// `(indptr, indices, data)`.
#[pyfunction]
fn rap<'py>(
    py: Python<'py>,
    r: Option<&Bound<'py, PyAny>>,
    a: &Bound<'py, PyAny>,
    p: &Bound<'py, PyAny>,
    backend: &str,
    check: bool,
) -> PyResult<Product<'py>> {
    let be = self::backend(backend)?;
    let (r, a, p) = chain(r, a, p, check)?;
    let (a, p) = (a.slices()?, p.slices()?);
    let r = r.as_ref().map(|r| r.slices()).transpose()?;
    let c = py.detach(|| on_pool(|| arrays::rap(&be, r, a, p)));
    arrays::product(py, c.map_err(to_py)?)
}

/// The symbolic phase of one product, kept to rerun the numeric phase
/// with new values.
#[pyclass(module = "spgemm._spgemm", frozen)]
struct Plan {
    backend: Arc<Backend>,
    plan: arrays::AnyPlan,
}

#[pymethods]
impl Plan {
    /// nnz(C).
    #[getter]
    fn nnz(&self) -> usize {
        self.plan.nnz()
    }

    /// The backend that built the plan.
    #[getter]
    fn backend(&self) -> &'static str {
        self.backend.name()
    }

    /// `numeric(a, b, check)`: C's arrays for operands with the plan's
    /// structure and new values.
    fn numeric<'py>(
        &self,
        py: Python<'py>,
        a: &Bound<'py, PyAny>,
        b: &Bound<'py, PyAny>,
        check: bool,
    ) -> PyResult<Product<'py>> {
        let (a, b) = (Operand::extract(a, check)?, Operand::extract(b, check)?);
        arrays::same_precision(&a, &b)?;
        let (a, b) = (a.slices()?, b.slices()?);
        let c = py.detach(|| on_pool(|| self.plan.numeric(&self.backend, a, b)));
        arrays::product(py, c.map_err(to_py)?)
    }
}

/// `symbolic(a, b, backend, check)`: a `Plan` for `A·B`.
#[pyfunction]
fn symbolic(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    backend: &str,
    check: bool,
) -> PyResult<Plan> {
    let be = self::backend(backend)?;
    let (a, b) = (Operand::extract(a, check)?, Operand::extract(b, check)?);
    arrays::same_precision(&a, &b)?;
    let (a, b) = (a.slices()?, b.slices()?);
    let plan = py
        .detach(|| on_pool(|| arrays::AnyPlan::build(&be, a, b)))
        .map_err(to_py)?;
    Ok(Plan { backend: be, plan })
}

#[pymodule]
fn _spgemm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(backends, m)?)?;
    m.add_function(wrap_pyfunction!(backend_name, m)?)?;
    m.add_function(wrap_pyfunction!(matmul, m)?)?;
    m.add_function(wrap_pyfunction!(matmul_spec, m)?)?;
    m.add_function(wrap_pyfunction!(reduce_values, m)?)?;
    m.add_function(wrap_pyfunction!(galerkin, m)?)?;
    m.add_function(wrap_pyfunction!(rap, m)?)?;
    m.add_class::<GalerkinPlan>()?;
    m.add_function(wrap_pyfunction!(symbolic, m)?)?;
    m.add_class::<Plan>()?;
    m.add_function(wrap_pyfunction!(device::matmul_device, m)?)?;
    m.add_function(wrap_pyfunction!(device::matmul_spec_device, m)?)?;
    m.add_function(wrap_pyfunction!(device::matmul_reduce_device, m)?)?;
    m.add_function(wrap_pyfunction!(device_galerkin::galerkin_device, m)?)?;
    m.add_function(wrap_pyfunction!(device_galerkin::galerkin_plan_device, m)?)?;
    m.add_class::<device_galerkin::DeviceGalerkinPlan>()?;
    m.add_function(wrap_pyfunction!(common_case::matmul_cupy, m)?)?;
    m.add_function(wrap_pyfunction!(common_case::matmul_torch, m)?)?;
    m.add_class::<device::DeviceCsr>()?;
    m.add_function(wrap_pyfunction!(search::bfs_levels, m)?)?;
    m.add_function(wrap_pyfunction!(search::bfs_levels_device, m)?)?;
    m.add_class::<search::DeviceLevels>()?;
    m.add_function(wrap_pyfunction!(device::symbolic_device, m)?)?;
    m.add_class::<device::DevicePlan>()?;
    #[cfg(feature = "mpi")]
    m.add_function(wrap_pyfunction!(distributed::distributed_matmul, m)?)?;
    #[cfg(feature = "mpi")]
    m.add_function(wrap_pyfunction!(
        distributed_device::distributed_matmul_device,
        m
    )?)?;
    Ok(())
}
