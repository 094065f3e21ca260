//! Breadth-first search levels (`spgemm.bfs_levels`): on SciPy matrices
//! through any backend, on CUDA device matrices (CuPy, PyTorch) where they
//! lie, the levels left on the device.

use crate::arrays::{self, Operand};
use crate::device::{after_caller, engine, DeviceOperand, ValueType};
use crate::{on_pool, open, to_py};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use spgemm::gpu::{DeviceArray, GpuEngine, SearchLevels};
use spgemm::{Backend, CudaDevice, Scalar};
use std::sync::Arc;

/// `bfs_levels(a, source, backend, check)`: each vertex's level (int32,
/// −1 where no path leads) in a breadth-first search of the graph of
/// adjacency matrix `a` (an operand as `matmul`'s) from vertex `source`.
#[pyfunction]
pub(crate) fn bfs_levels<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    source: usize,
    backend: &str,
    check: bool,
) -> PyResult<Bound<'py, PyArray1<i32>>> {
    let be = crate::backend(backend)?;
    let a = Operand::extract(a, check)?;
    let a = a.slices()?;
    let levels = py.detach(|| on_pool(|| arrays::bfs_levels(&be, a, source)));
    Ok(levels.map_err(to_py)?.into_pyarray(py))
}

/// A breadth-first search's levels on a CUDA device, owned by this object
/// and exported by `interface()` as a `__cuda_array_interface__` (version
/// 3) of `n` int32 (−1 where no path leads). Keep this object alive while
/// the array is used.
#[pyclass(module = "spgemm._spgemm", frozen)]
pub(crate) struct DeviceLevels {
    levels: DeviceArray<CudaDevice, u32>,
    /// Levels reached, the source's included.
    #[pyo3(get)]
    depth: usize,
    /// The backend whose context the array belongs to.
    _backend: Arc<Backend>,
}

#[pymethods]
impl DeviceLevels {
    /// The levels' device address (0 for none).
    #[getter]
    fn pointer(&self) -> u64 {
        self.levels.device_ptr()
    }

    /// The `__cuda_array_interface__` of the levels (`k` must be 0).
    fn interface<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyDict>> {
        if k != 0 {
            return Err(PyValueError::new_err("the levels are array 0"));
        }
        let d = PyDict::new(py);
        d.set_item("shape", (self.levels.len(),))?;
        d.set_item("typestr", "<i4")?;
        d.set_item("data", (self.levels.device_ptr(), false))?;
        d.set_item("version", 3)?;
        d.set_item("strides", py.None())?;
        // Complete when the search returned: nothing to wait for.
        d.set_item("stream", py.None())?;
        Ok(d)
    }
}

/// The search over A's borrowed device arrays, after the caller's
/// `stream`; returns when it is done.
fn search<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    a: DeviceOperand,
    source: usize,
    stream: u64,
) -> spgemm::Result<SearchLevels<CudaDevice>> {
    spgemm::graph::check_source((a.0, a.1), source)?;
    // SAFETY: the Python package passes its current stream of A's device
    // and keeps A's arrays alive and unchanged during this call; the
    // levels do not refer to them.
    unsafe {
        after_caller(e, stream)?;
        let [ga] = e.borrow_devices::<T, 1>([(crate::device::arrays(a), a.8)])?;
        Ok(e.bfs_levels_device(&ga, source)?)
    }
}

/// `bfs_levels_device(a, source, dtype, device, stream)`: each vertex's
/// level in a breadth-first search from `source` of the graph whose
/// adjacency matrix's arrays lie on CUDA GPU `device` (a `DeviceOperand`,
/// values of `dtype`, never read), after the caller's `stream`; a
/// `DeviceLevels`, complete when this returns. `ValueError` for a matrix
/// that is not square, a source that is not a vertex, a malformed CSR.
#[pyfunction]
pub(crate) fn bfs_levels_device(
    py: Python<'_>,
    a: DeviceOperand,
    source: usize,
    dtype: &str,
    device: usize,
    stream: u64,
) -> PyResult<DeviceLevels> {
    let vt = ValueType::parse(dtype)?;
    let backend = open("cuda", device)?;
    let e = engine(&backend)?;
    let found = py
        .detach(|| match vt {
            ValueType::F32 => search::<f32>(e, a, source, stream),
            ValueType::F64 => search::<f64>(e, a, source, stream),
            ValueType::I32 => search::<i32>(e, a, source, stream),
            ValueType::I64 => search::<i64>(e, a, source, stream),
        })
        .map_err(to_py)?;
    Ok(DeviceLevels {
        levels: found.levels,
        depth: found.depth,
        _backend: backend.clone(),
    })
}
