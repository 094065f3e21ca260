//! Products of CSR matrices that live on a CUDA device (CuPy, PyTorch):
//! the caller's arrays are read in place through their device addresses
//! (taken from `__cuda_array_interface__` by the Python package), and C's
//! arrays stay on the device, handed back through the same interface.

use crate::{open, to_py};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use spgemm::gpu::{self, GpuEngine, GpuMatrix, GpuPlan, IndexWidth};
use spgemm::{Backend, CudaDevice, Scalar};
use std::sync::Arc;

/// One operand on the device: `(nrows, ncols, nnz, indptr, indptr64,
/// indices, indices64, data, sorted)`: device addresses of `nrows + 1` row
/// offsets and `nnz` column indices (int64 when the flag after each is
/// set, else int32) and `nnz` values, read in place. The library checks the
/// structure on the device (rows sorted without duplicates too when
/// `sorted`) before it reads anything else.
type DeviceOperand = (usize, usize, usize, u64, bool, u64, bool, u64, bool);

/// C on the device, in either precision.
enum AnyGpu {
    F32(GpuMatrix<CudaDevice, f32>),
    F64(GpuMatrix<CudaDevice, f64>),
}

/// C computed on a CUDA device: its arrays stay there, owned by this
/// object, and are exported with `__cuda_array_interface__` (version 3)
/// dictionaries by `interface(k)`: `k` = 0 row offsets (int64), 1 column
/// indices (int32), 2 values. Keep this object alive while they are used.
#[pyclass(module = "spgemm._spgemm", frozen)]
pub(crate) struct DeviceCsr {
    c: AnyGpu,
    /// Milliseconds of the product: wall clock of the engine's call, and
    /// the device's own time between its first and last kernel.
    times: (f64, f64),
    /// The backend whose context the arrays belong to.
    _backend: Arc<Backend>,
}

#[pymethods]
impl DeviceCsr {
    /// `(nrows, ncols)`.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        match &self.c {
            AnyGpu::F32(c) => (c.nrows(), c.ncols()),
            AnyGpu::F64(c) => (c.nrows(), c.ncols()),
        }
    }

    /// `(wall_ms, device_ms)` of the product inside the library: the wall
    /// clock of the engine's call and the device's time from its first to
    /// its last kernel (what `spgemm bench` reports); the binding's own
    /// cost is the caller's time beyond `wall_ms`.
    #[getter]
    fn times(&self) -> (f64, f64) {
        self.times
    }

    /// nnz(C).
    #[getter]
    fn nnz(&self) -> usize {
        match &self.c {
            AnyGpu::F32(c) => c.nnz(),
            AnyGpu::F64(c) => c.nnz(),
        }
    }

    /// The `__cuda_array_interface__` of array `k` (0 row offsets, 1
    /// column indices, 2 values).
    fn interface<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyDict>> {
        let (nrows, nnz) = (self.shape().0, self.nnz());
        let (ptrs, value_type) = match &self.c {
            AnyGpu::F32(c) => (c.device_pointers(), "<f4"),
            AnyGpu::F64(c) => (c.device_pointers(), "<f8"),
        };
        let (ptr, len, typestr) = match k {
            0 => (ptrs.0, nrows + 1, "<i8"),
            1 => (ptrs.1, nnz, "<i4"),
            2 => (ptrs.2, nnz, value_type),
            _ => return Err(PyValueError::new_err("array 0, 1 or 2")),
        };
        let d = PyDict::new(py);
        d.set_item("shape", (len,))?;
        d.set_item("typestr", typestr)?;
        d.set_item("data", (ptr, false))?;
        d.set_item("version", 3)?;
        d.set_item("strides", py.None())?;
        // The arrays are complete when the product returns.
        d.set_item("stream", py.None())?;
        Ok(d)
    }
}

/// A `ValueError` unless A's columns equal B's rows.
fn check_shapes(a: &DeviceOperand, b: &DeviceOperand) -> PyResult<()> {
    if a.1 != b.0 {
        return Err(PyValueError::new_err(format!(
            "dimension mismatch: A is {}x{} but B is {}x{}",
            a.0, a.1, b.0, b.1
        )));
    }
    Ok(())
}

/// The matrix over a device operand's arrays, its structure checked on
/// the device.
///
/// # Safety
/// The Python package synchronized the caller's stream, and keeps the
/// arrays alive and unchanged while the matrix (and any plan made from it)
/// lives.
unsafe fn borrow<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    o: DeviceOperand,
) -> spgemm::Result<GpuMatrix<CudaDevice, T>> {
    let (nrows, ncols, nnz, rpt, rpt64, col, col64, val, sorted) = o;
    let width = |wide: bool| {
        if wide {
            IndexWidth::I64
        } else {
            IndexWidth::I32
        }
    };
    let arrays = gpu::DeviceCsr {
        nrows,
        ncols,
        nnz,
        row_offsets: rpt,
        offsets_width: width(rpt64),
        col_indices: col,
        indices_width: width(col64),
        values: val,
    };
    // SAFETY: the caller's guarantee.
    Ok(unsafe { e.borrow_device::<T>(arrays, sorted)? })
}

/// The engine of the CUDA backend on GPU `device`.
fn engine(backend: &Backend) -> PyResult<&GpuEngine<CudaDevice>> {
    match backend {
        Backend::Cuda(m) => Ok(&m.engines()[0]),
        _ => Err(PyRuntimeError::new_err(
            "device arrays need the CUDA backend",
        )),
    }
}

/// `C = A·B` over borrowed device arrays, on this thread (GIL released),
/// with `(wall_ms, device_ms)`.
fn product<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    a: DeviceOperand,
    b: DeviceOperand,
) -> spgemm::Result<(GpuMatrix<CudaDevice, T>, (f64, f64))> {
    // SAFETY (both): see `borrow`; the arrays outlive this call, and C does
    // not refer to them.
    let ga = unsafe { borrow(e, a)? };
    let gb = if a == b {
        None
    } else {
        Some(unsafe { borrow(e, b)? })
    };
    let t = std::time::Instant::now();
    let (c, phases) = e.multiply(&ga, gb.as_ref().unwrap_or(&ga))?;
    Ok((c, (t.elapsed().as_secs_f64() * 1e3, phases.total_ms)))
}

/// `matmul_device(a, b, double, device)`: C = A·B on CUDA GPU `device`
/// for two device operands (see `DeviceOperand`), values float64 when
/// `double` else float32.
#[pyfunction]
pub(crate) fn matmul_device(
    py: Python<'_>,
    a: DeviceOperand,
    b: DeviceOperand,
    double: bool,
    device: usize,
) -> PyResult<DeviceCsr> {
    check_shapes(&a, &b)?;
    let backend = open("cuda", device)?;
    let e = engine(&backend)?;
    let (c, times) = py
        .detach(|| {
            if double {
                product::<f64>(e, a, b).map(|(c, t)| (AnyGpu::F64(c), t))
            } else {
                product::<f32>(e, a, b).map(|(c, t)| (AnyGpu::F32(c), t))
            }
        })
        .map_err(to_py)?;
    Ok(DeviceCsr {
        c,
        times,
        _backend: backend.clone(),
    })
}

/// A plan on the device: the symbolic phase and the operands' structures
/// (borrowed from the caller's arrays, which the Python `Plan` keeps).
struct PlanOn<T> {
    plan: GpuPlan<CudaDevice, T>,
    a: GpuMatrix<CudaDevice, T>,
    b: Option<GpuMatrix<CudaDevice, T>>,
}

impl<T: Scalar> PlanOn<T> {
    fn build(
        e: &GpuEngine<CudaDevice>,
        a: DeviceOperand,
        b: DeviceOperand,
    ) -> spgemm::Result<Self> {
        // SAFETY (both): see `borrow`; the Python `Plan` keeps the structure
        // arrays alive and unchanged as long as this plan.
        let a_m = unsafe { borrow(e, a)? };
        let b_m = if a == b {
            None
        } else {
            Some(unsafe { borrow(e, b)? })
        };
        let plan = e.symbolic(&a_m, b_m.as_ref().unwrap_or(&a_m))?;
        Ok(Self {
            plan,
            a: a_m,
            b: b_m,
        })
    }

    /// The numeric phase for the values at `a_values` and `b_values`.
    fn numeric(
        &self,
        e: &GpuEngine<CudaDevice>,
        a_values: u64,
        b_values: u64,
    ) -> spgemm::Result<(GpuMatrix<CudaDevice, T>, (f64, f64))> {
        // SAFETY: the Python `Plan` checked the values' length and type and
        // keeps them alive for the duration of this call.
        let a = unsafe { e.borrow_device_values(&self.a, a_values) };
        let b = match &self.b {
            Some(b) => Some(unsafe { e.borrow_device_values(b, b_values) }),
            None => None,
        };
        let t = std::time::Instant::now();
        let (c, phases) = e.numeric(&self.plan, &a, b.as_ref().unwrap_or(&a))?;
        Ok((c, (t.elapsed().as_secs_f64() * 1e3, phases.total_ms)))
    }
}

enum AnyPlan {
    F32(PlanOn<f32>),
    F64(PlanOn<f64>),
}

/// The symbolic phase of a product of device operands, kept to rerun the
/// numeric phase on new values of the same structure.
#[pyclass(module = "spgemm._spgemm", frozen)]
pub(crate) struct DevicePlan {
    plan: AnyPlan,
    backend: Arc<Backend>,
}

#[pymethods]
impl DevicePlan {
    /// nnz(C).
    #[getter]
    fn nnz(&self) -> usize {
        match &self.plan {
            AnyPlan::F32(p) => p.plan.nnz(),
            AnyPlan::F64(p) => p.plan.nnz(),
        }
    }

    /// `numeric(a_values, b_values)`: C for new values (device addresses of
    /// nnz(A) and nnz(B) values of the plan's type; B's ignored when the
    /// plan was built for A·A).
    fn numeric(&self, py: Python<'_>, a_values: u64, b_values: u64) -> PyResult<DeviceCsr> {
        let e = engine(&self.backend)?;
        let (c, times) = py
            .detach(|| match &self.plan {
                AnyPlan::F32(p) => p
                    .numeric(e, a_values, b_values)
                    .map(|(c, t)| (AnyGpu::F32(c), t)),
                AnyPlan::F64(p) => p
                    .numeric(e, a_values, b_values)
                    .map(|(c, t)| (AnyGpu::F64(c), t)),
            })
            .map_err(to_py)?;
        Ok(DeviceCsr {
            c,
            times,
            _backend: self.backend.clone(),
        })
    }
}

/// `symbolic_device(a, b, double, device)`: a `DevicePlan` for `A·B`.
#[pyfunction]
pub(crate) fn symbolic_device(
    py: Python<'_>,
    a: DeviceOperand,
    b: DeviceOperand,
    double: bool,
    device: usize,
) -> PyResult<DevicePlan> {
    check_shapes(&a, &b)?;
    let backend = open("cuda", device)?;
    let e = engine(&backend)?;
    let plan = py
        .detach(|| {
            if double {
                PlanOn::build(e, a, b).map(AnyPlan::F64)
            } else {
                PlanOn::build(e, a, b).map(AnyPlan::F32)
            }
        })
        .map_err(to_py)?;
    Ok(DevicePlan {
        plan,
        backend: backend.clone(),
    })
}
