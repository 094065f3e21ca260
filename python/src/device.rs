//! Products of CSR matrices that live on a CUDA device (CuPy, PyTorch):
//! the caller's arrays are read in place through their device addresses
//! (taken from `__cuda_array_interface__` by the Python package), and C's
//! arrays stay on the device, handed back through the same interface.

use crate::{open, to_py};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use spgemm::device::Device;
use spgemm::gpu::{
    self, DeviceArray, Enqueued, GpuEngine, GpuMatrix, GpuPlan, IndexWidth, PhaseEvents,
};
use spgemm::semiring::{Prune, Semiring};
use spgemm::{Backend, CudaDevice, Scalar};
use std::sync::Arc;

/// One operand on the device: `(nrows, ncols, nnz, indptr, indptr64,
/// indices, indices64, data, sorted)`: device addresses of `nrows + 1` row
/// offsets and `nnz` column indices (int64 when the flag after each is
/// set, else int32) and `nnz` values, read in place. The library checks the
/// structure on the device (rows sorted without duplicates too when
/// `sorted`) before it reads anything else.
pub(crate) type DeviceOperand = (usize, usize, usize, u64, bool, u64, bool, u64, bool);

/// C on the device, of any value type.
pub(crate) enum AnyGpu {
    F32(GpuMatrix<CudaDevice, f32>),
    F64(GpuMatrix<CudaDevice, f64>),
    I32(GpuMatrix<CudaDevice, i32>),
    I64(GpuMatrix<CudaDevice, i64>),
}

/// `$body` with `$c` bound to the matrix inside an [`AnyGpu`].
macro_rules! each_gpu {
    ($any:expr, $c:ident => $body:expr) => {
        match $any {
            AnyGpu::F32($c) => $body,
            AnyGpu::F64($c) => $body,
            AnyGpu::I32($c) => $body,
            AnyGpu::I64($c) => $body,
        }
    };
}

/// The value types of device products, by their NumPy names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ValueType {
    F32,
    F64,
    I32,
    I64,
}

impl ValueType {
    /// `float32`, `float64`, `int32` or `int64`; a `ValueError` otherwise.
    pub(crate) fn parse(name: &str) -> PyResult<Self> {
        Ok(match name {
            "float32" => Self::F32,
            "float64" => Self::F64,
            "int32" => Self::I32,
            "int64" => Self::I64,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "values must be float32, float64, int32 or int64, not {name}"
                )))
            }
        })
    }
}

/// `$call` with `$t` the Rust type of value type `$vt`, its C wrapped in
/// the [`AnyGpu`] variant of that type.
macro_rules! by_value_type {
    ($vt:expr, $t:ident => $call:expr) => {
        match $vt {
            ValueType::F32 => {
                type $t = f32;
                $call.map(|(c, o, t)| (AnyGpu::F32(c), o, t))
            }
            ValueType::F64 => {
                type $t = f64;
                $call.map(|(c, o, t)| (AnyGpu::F64(c), o, t))
            }
            ValueType::I32 => {
                type $t = i32;
                $call.map(|(c, o, t)| (AnyGpu::I32(c), o, t))
            }
            ValueType::I64 => {
                type $t = i64;
                $call.map(|(c, o, t)| (AnyGpu::I64(c), o, t))
            }
        }
    };
}

/// C's row offsets narrowed to int32 by the library, when nnz(C) fits.
pub(crate) type Offsets32 = Option<DeviceArray<CudaDevice, i32>>;

/// C computed on a CUDA device: its arrays stay there, owned by this
/// object, and are exported with `__cuda_array_interface__` (version 3)
/// dictionaries by `interface(k)`: `k` = 0 row offsets (int32 when nnz(C)
/// fits in an int32, else int64), 1 column indices (int32), 2 values.
/// Keep this object alive while they are used.
#[pyclass(module = "spgemm._spgemm", frozen)]
pub(crate) struct DeviceCsr {
    pub(crate) c: AnyGpu,
    /// The row offsets as int32 (the library's narrowing), when they fit.
    pub(crate) offsets32: Offsets32,
    /// The product's times: wall clock of the engine's call, milliseconds,
    /// and the device's own time, known at once or from the events of a
    /// product left running in the caller's stream order.
    pub(crate) timing: Timing,
    /// The backend whose context the arrays belong to.
    pub(crate) backend: Arc<Backend>,
}

/// Milliseconds of a product: the engine call's wall clock, and the
/// device's time from its first to its last kernel (or the events that
/// give it once the product has ended).
pub(crate) enum Timing {
    Done(f64, f64),
    Running(f64, PhaseEvents<CudaDevice>),
}

#[pymethods]
impl DeviceCsr {
    /// `(nrows, ncols)`.
    #[getter]
    fn shape(&self) -> (usize, usize) {
        each_gpu!(&self.c, c => (c.nrows(), c.ncols()))
    }

    /// `(wall_ms, device_ms)` of the product inside the library: the wall
    /// clock of the engine's call (for a product left running in the
    /// caller's stream order, until it was enqueued) and the device's time
    /// from its first to its last kernel (what `spgemm bench` reports),
    /// waiting for the product to end; the binding's own cost is the
    /// caller's time beyond `wall_ms` of a synchronous call.
    #[getter]
    fn times(&self, py: Python<'_>) -> PyResult<(f64, f64)> {
        match &self.timing {
            Timing::Done(wall, device) => Ok((*wall, *device)),
            Timing::Running(wall, events) => {
                let e = engine(&self.backend)?;
                let t = py
                    .detach(|| events.times(e.device()))
                    .map_err(|err| to_py(err.into()))?;
                Ok((*wall, t.total_ms))
            }
        }
    }

    /// Whether the values are float64.
    #[getter]
    fn double(&self) -> bool {
        matches!(self.c, AnyGpu::F64(_))
    }

    /// The values' type as a NumPy type string: `<f8`, `<f4`, `<i8` or
    /// `<i4`.
    #[getter]
    fn typestr(&self) -> &'static str {
        match self.c {
            AnyGpu::F32(_) => "<f4",
            AnyGpu::F64(_) => "<f8",
            AnyGpu::I32(_) => "<i4",
            AnyGpu::I64(_) => "<i8",
        }
    }

    /// nnz(C).
    #[getter]
    fn nnz(&self) -> usize {
        each_gpu!(&self.c, c => c.nnz())
    }

    /// Whether the row offsets are int32 (else int64): when nnz(C) fits.
    #[getter]
    fn offsets_int32(&self) -> bool {
        self.offsets32.is_some()
    }

    /// The device addresses of the row offsets (see `offsets_int32`),
    /// column indices (int32) and values, for wrapping them without
    /// building the interfaces' dictionaries; 0 for an empty array.
    #[getter]
    fn pointers(&self) -> (u64, u64, u64) {
        let (rpt, col, val) = each_gpu!(&self.c, c => c.device_pointers());
        let rpt = self.offsets32.as_ref().map_or(rpt, |o| o.device_ptr());
        (rpt, col, val)
    }

    /// The `__cuda_array_interface__` of array `k` (0 row offsets, 1
    /// column indices, 2 values).
    fn interface<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyDict>> {
        let (nrows, nnz) = (self.shape().0, self.nnz());
        let ptrs = self.pointers();
        let value_type = self.typestr();
        let offsets_type = if self.offsets_int32() { "<i4" } else { "<i8" };
        let (ptr, len, typestr) = match k {
            0 => (ptrs.0, nrows + 1, offsets_type),
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
        // The arrays are complete in the order of the caller's stream,
        // which waits for the product: nothing more to wait for there.
        d.set_item("stream", py.None())?;
        Ok(d)
    }
}

/// A `ValueError` unless A's columns equal B's rows.
pub(crate) fn check_shapes(a: &DeviceOperand, b: &DeviceOperand) -> PyResult<()> {
    if a.1 != b.0 {
        return Err(PyValueError::new_err(format!(
            "dimension mismatch: A is {}x{} but B is {}x{}",
            a.0, a.1, b.0, b.1
        )));
    }
    Ok(())
}

/// The arrays of a device operand.
pub(crate) fn arrays(o: DeviceOperand) -> gpu::DeviceCsr {
    let (nrows, ncols, nnz, rpt, rpt64, col, col64, val, _) = o;
    let width = |wide: bool| {
        if wide {
            IndexWidth::I64
        } else {
            IndexWidth::I32
        }
    };
    gpu::DeviceCsr {
        nrows,
        ncols,
        nnz,
        row_offsets: rpt,
        offsets_width: width(rpt64),
        col_indices: col,
        indices_width: width(col64),
        values: val,
    }
}

/// A and, when it is not A, B on the device.
type Operands<T> = (GpuMatrix<CudaDevice, T>, Option<GpuMatrix<CudaDevice, T>>);

/// The matrices over A's and B's arrays (B `None` when it is A's), their
/// structures checked on the device in one pass with one read-back.
///
/// # Safety
/// The Python package synchronized the caller's stream, and keeps the
/// arrays alive and unchanged while the matrices (and any plan made from
/// them) live.
unsafe fn borrow<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    a: DeviceOperand,
    b: DeviceOperand,
) -> spgemm::Result<Operands<T>> {
    // SAFETY (both): the caller's guarantee.
    Ok(if a == b {
        let [ga] = unsafe { e.borrow_devices([(arrays(a), a.8)])? };
        (ga, None)
    } else {
        let [ga, gb] = unsafe { e.borrow_devices([(arrays(a), a.8), (arrays(b), b.8)])? };
        (ga, Some(gb))
    })
}

/// The engine of the CUDA backend on GPU `device`.
pub(crate) fn engine(backend: &Backend) -> PyResult<&GpuEngine<CudaDevice>> {
    match backend {
        Backend::Cuda(m) => Ok(&m.engines()[0]),
        _ => Err(PyRuntimeError::new_err(
            "device arrays need the CUDA backend",
        )),
    }
}

/// C on the device, its int32 row offsets when they fit, and the
/// product's timing.
pub(crate) type Product<T> = (GpuMatrix<CudaDevice, T>, Offsets32, Timing);

/// C = A·B (from `plan` when given) left running in the order of the
/// caller's `stream` ([`GpuEngine::multiply_ordered`]), with C's int32
/// row offsets.
///
/// # Safety
/// `stream` is a live stream of the engine's device (0: the legacy
/// default stream); the operands' arrays stay unchanged until the product
/// is done (the caller's later work on `stream` is ordered after it).
unsafe fn ordered<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    a: &GpuMatrix<CudaDevice, T>,
    b: &GpuMatrix<CudaDevice, T>,
    plan: Option<&GpuPlan<CudaDevice, T>>,
    stream: u64,
) -> spgemm::Result<Product<T>> {
    // SAFETY: the caller's guarantee.
    timed(|| unsafe { e.multiply_ordered(a, b, plan, stream, true) })
}

/// The product that `enqueue` leaves running, with the host time it took.
fn timed<T: Scalar>(
    enqueue: impl FnOnce() -> spgemm::error::Result<Enqueued<CudaDevice, T>>,
) -> spgemm::Result<Product<T>> {
    let t = std::time::Instant::now();
    let run = enqueue()?;
    let timing = Timing::Running(t.elapsed().as_secs_f64() * 1e3, run.events);
    Ok((run.c, run.offsets_i32, timing))
}

/// Waits on the host for the caller's `stream`, which may still be
/// writing the operands: the structure checks read them first.
///
/// # Safety
/// As [`ordered`].
pub(crate) unsafe fn after_caller(e: &GpuEngine<CudaDevice>, stream: u64) -> spgemm::Result<()> {
    let dev = e.device();
    // SAFETY: the caller's guarantee.
    let caller = unsafe { dev.borrow_stream(stream) };
    dev.synchronize(&caller)
        .map_err(spgemm::error::Error::from)?;
    Ok(())
}

/// `C = A·B` over borrowed device arrays, on this thread (GIL released):
/// in `stream`'s order when given (see [`ordered`]); without, the call
/// waits for C (the library's own synchronous call, which `bench.py`
/// times as the reference) and narrows its offsets after it.
fn product<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    a: DeviceOperand,
    b: DeviceOperand,
    stream: Option<u64>,
) -> spgemm::Result<Product<T>> {
    // SAFETY: see `borrow`; the Python package passes its current stream
    // of the operands' device. The arrays outlive this call, and C does
    // not refer to them; a product left running in the stream's order
    // reads them before anything the caller enqueues after it.
    unsafe {
        if let Some(s) = stream {
            after_caller(e, s)?;
            // The operands' checks answered with the product's first read.
            let b = (a != b).then(|| (arrays(b), b.8));
            return timed(|| e.multiply_borrowed_ordered((arrays(a), a.8), b, s, true));
        }
        let (ga, gb) = borrow(e, a, b)?;
        let gb = gb.as_ref().unwrap_or(&ga);
        let t = std::time::Instant::now();
        let (c, phases) = e.multiply(&ga, gb)?;
        let timing = Timing::Done(t.elapsed().as_secs_f64() * 1e3, phases.total_ms);
        let offsets32 = e.row_offsets_i32(&c)?;
        Ok((c, offsets32, timing))
    }
}

/// `matmul_device(a, b, dtype, device, stream=None)`: C = A·B on CUDA GPU
/// `device` for two device operands (see `DeviceOperand`), values of
/// `dtype` ("float32", "float64", "int32" or "int64"; integer sums exact,
/// wrapping past the type's range). With `stream` (the caller's current stream
/// on that device, a `CUstream` address, 0 for the legacy default stream)
/// the call waits for that stream first and returns once the product is
/// enqueued, the stream made to wait for it; without, it returns when C is
/// complete.
#[pyfunction]
#[pyo3(signature = (a, b, dtype, device, stream=None))]
pub(crate) fn matmul_device(
    py: Python<'_>,
    a: DeviceOperand,
    b: DeviceOperand,
    dtype: &str,
    device: usize,
    stream: Option<u64>,
) -> PyResult<DeviceCsr> {
    check_shapes(&a, &b)?;
    let vt = ValueType::parse(dtype)?;
    let backend = open("cuda", device)?;
    let e = engine(&backend)?;
    let (c, offsets32, timing) = py
        .detach(|| by_value_type!(vt, T => product::<T>(e, a, b, stream)))
        .map_err(to_py)?;
    Ok(DeviceCsr {
        c,
        offsets32,
        timing,
        backend: backend.clone(),
    })
}

/// `C⟨M⟩ = A ⊕.⊗ B` (or `C⟨¬M⟩` when `complement`; M `None`: unmasked)
/// over borrowed device arrays, on this thread, after the caller's
/// `stream`; returns when C is complete. Unmasked, by the product's
/// kernels compiled with the semiring ([`GpuEngine::multiply_semiring`]);
/// masked, by a dot product per entry of M
/// ([`GpuEngine::masked_dot_device`]) or, complemented, by the product and
/// M's entries dropped ([`GpuEngine::complement_device`]); M's structure
/// borrowed once when it is A's or B's arrays; C pruned on the device
/// ([`GpuEngine::prune_device`]). With `b_transposed`, `b` is Bᵀ and a
/// structural mask is required: each entry of M the dot product of A's
/// row and Bᵀ's, nothing transposed
/// ([`GpuEngine::masked_dot_transposed_b_device`]).
#[allow(clippy::too_many_arguments)] // the product's operands and its spec
fn spec_product<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    (a, b): (DeviceOperand, DeviceOperand),
    mask: Option<DeviceOperand>,
    complement: bool,
    b_transposed: bool,
    semiring: Semiring,
    prune: &Prune<T>,
    stream: u64,
) -> spgemm::Result<Product<T>> {
    if b_transposed && (mask.is_none() || complement) {
        return Err(spgemm::error::Error::NotOnBackend(
            "B given transposed on the device needs a structural mask".into(),
        )
        .into());
    }
    // SAFETY: see `product`; C does not refer to the caller's arrays, and
    // it is complete when this returns.
    unsafe {
        after_caller(e, stream)?;
        let (ga, gb, gm) = borrow_spec_operands::<T>(e, a, b, mask)?;
        let gb = gb.as_ref().unwrap_or(&ga);
        let t = std::time::Instant::now();
        let masked = |gm: &GpuMatrix<CudaDevice, T>| {
            if complement {
                e.complement_device(gm, &ga, gb, semiring)
            } else if b_transposed {
                e.masked_dot_transposed_b_device(gm, &ga, gb, semiring)
            } else {
                e.masked_dot_device(gm, &ga, gb, semiring)
            }
        };
        let c = match (mask, &gm) {
            (None, _) => e.multiply_semiring_pruned(&ga, gb, semiring, prune)?.0,
            (Some(_), Some(gm)) => e.prune_device(masked(gm)?, prune)?,
            (Some(m), None) if m == a => e.prune_device(masked(&ga)?, prune)?,
            (Some(_), None) => e.prune_device(masked(gb)?, prune)?,
        };
        let wall = t.elapsed().as_secs_f64() * 1e3;
        let offsets32 = e.row_offsets_i32(&c)?;
        Ok((c, offsets32, Timing::Done(wall, wall)))
    }
}

/// A, B (`None` when it is A's arrays) and a mask of its own (`None` when
/// there is none or it is A's or B's arrays) borrowed and checked, one
/// wait for all.
///
/// # Safety
/// As `product`'s borrowing: the arrays live and stay unchanged until the
/// borrowed matrices are dropped.
unsafe fn borrow_spec_operands<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    a: DeviceOperand,
    b: DeviceOperand,
    mask: Option<DeviceOperand>,
) -> spgemm::Result<Borrowed<T>> {
    let own_mask = mask.filter(|m| *m != a && *m != b);
    let operand = |o: DeviceOperand| (arrays(o), o.8);
    // SAFETY: the caller's guarantee.
    unsafe {
        Ok(match (a == b, own_mask) {
            (true, None) => {
                let [ga] = e.borrow_devices([operand(a)])?;
                (ga, None, None)
            }
            (false, None) => {
                let [ga, gb] = e.borrow_devices([operand(a), operand(b)])?;
                (ga, Some(gb), None)
            }
            (true, Some(m)) => {
                let [ga, gm] = e.borrow_devices([operand(a), operand(m)])?;
                (ga, None, Some(gm))
            }
            (false, Some(m)) => {
                let [ga, gb, gm] = e.borrow_devices([operand(a), operand(b), operand(m)])?;
                (ga, Some(gb), Some(gm))
            }
        })
    }
}

/// A borrowed device matrix.
type Gpu<T> = GpuMatrix<CudaDevice, T>;

/// A, B (`None`: A's arrays) and a mask of its own (`None`: none, or A's
/// or B's arrays), borrowed.
type Borrowed<T> = (Gpu<T>, Option<Gpu<T>>, Option<Gpu<T>>);

/// `⊕` over the entries of `C⟨M⟩ = A ⊕.⊗ B` (structural mask; `b` is Bᵀ
/// with `b_transposed`) over borrowed device arrays after the caller's
/// `stream`, reduced on the device without forming C
/// ([`GpuEngine::masked_reduce_device`]).
fn reduce_product<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    (a, b): (DeviceOperand, DeviceOperand),
    mask: DeviceOperand,
    b_transposed: bool,
    semiring: Semiring,
    stream: u64,
) -> spgemm::Result<crate::arrays::Reduced> {
    // SAFETY: see `product`; nothing returned refers to the caller's
    // arrays, and the value is read back when this returns.
    unsafe {
        after_caller(e, stream)?;
        let (ga, gb, gm) = borrow_spec_operands::<T>(e, a, b, Some(mask))?;
        let gb = gb.as_ref().unwrap_or(&ga);
        let gm = match &gm {
            Some(gm) => gm,
            None if mask == a => &ga,
            None => gb,
        };
        let v = e.masked_reduce_device(gm, &ga, gb, semiring, b_transposed)?;
        Ok(crate::arrays::Reduced::of(v))
    }
}

/// The shapes of A and B (Bᵀ, `N×K`, with `b_transposed`: its columns are
/// A's) checked, the value type and the semiring parsed (`ValueError`s).
fn spec_arguments(
    a: &DeviceOperand,
    b: &DeviceOperand,
    b_transposed: bool,
    dtype: &str,
    semiring: &str,
) -> PyResult<(ValueType, Semiring)> {
    if b_transposed {
        check_shapes(a, &(b.1, b.0, b.2, b.3, b.4, b.5, b.6, b.7, b.8))?;
    } else {
        check_shapes(a, b)?;
    }
    let semiring = semiring.parse().map_err(PyValueError::new_err)?;
    Ok((ValueType::parse(dtype)?, semiring))
}

/// `matmul_reduce_device(a, b, mask, dtype, device, semiring, stream,
/// b_transposed)`: `⊕` over the entries of `C⟨M⟩ = A ⊕.⊗ B` under the
/// structural mask `mask` on CUDA GPU `device` for device operands (as
/// `matmul_spec_device` takes them), reduced on the device without
/// forming C: a float, or an int for integer values. Waits for the
/// caller's `stream` first. `ValueError` as `matmul_spec_device`'s.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul_reduce_device(
    py: Python<'_>,
    a: DeviceOperand,
    b: DeviceOperand,
    mask: DeviceOperand,
    dtype: &str,
    device: usize,
    semiring: &str,
    stream: u64,
    b_transposed: bool,
) -> PyResult<crate::arrays::Reduced> {
    let (vt, semiring) = spec_arguments(&a, &b, b_transposed, dtype, semiring)?;
    let backend = open("cuda", device)?;
    let e = engine(&backend)?;
    py.detach(|| match vt {
        ValueType::F32 => reduce_product::<f32>(e, (a, b), mask, b_transposed, semiring, stream),
        ValueType::F64 => reduce_product::<f64>(e, (a, b), mask, b_transposed, semiring, stream),
        ValueType::I32 => reduce_product::<i32>(e, (a, b), mask, b_transposed, semiring, stream),
        ValueType::I64 => reduce_product::<i64>(e, (a, b), mask, b_transposed, semiring, stream),
    })
    .map_err(to_py)
}

/// `matmul_spec_device(a, b, mask, complement, dtype, device, semiring,
/// stream, prune, keep, prune_columns, b_transposed)`: `C⟨M⟩ = A ⊕.⊗ B`
/// (`C⟨¬M⟩` when `complement`; with `b_transposed`, `b` holds Bᵀ, `N×K`,
/// under a structural mask only) on CUDA GPU `device` for device operands (see
/// `DeviceOperand`; `mask` `None` for none, its values never read), values
/// of `dtype` (as in `matmul_device`), `semiring` a GraphBLAS name; C
/// pruned on the device (`prune` a threshold of magnitude or `None`,
/// `keep` at most this many entries a row, or a column with
/// `prune_columns`, or `None`). Waits for the caller's `stream` first and
/// returns when C is complete. `ValueError` for an unknown semiring, shapes
/// that disagree (the mask's too), a negative or NaN threshold, or rows
/// not checked as sorted where a mask needs them (A's and B's under a
/// mask, the mask's under its complement).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul_spec_device(
    py: Python<'_>,
    a: DeviceOperand,
    b: DeviceOperand,
    mask: Option<DeviceOperand>,
    complement: bool,
    dtype: &str,
    device: usize,
    semiring: &str,
    stream: u64,
    prune: Option<f64>,
    keep: Option<usize>,
    prune_columns: bool,
    b_transposed: bool,
) -> PyResult<DeviceCsr> {
    let (vt, semiring) = spec_arguments(&a, &b, b_transposed, dtype, semiring)?;
    let extras = crate::arrays::Extras {
        semiring,
        complement,
        below: prune,
        keep,
        columns: prune_columns,
        b_transposed,
    };
    let backend = open("cuda", device)?;
    let e = engine(&backend)?;
    let (c, offsets32, timing) = py
        .detach(|| {
            by_value_type!(vt, T => spec_product::<T>(e, (a, b), mask, complement, b_transposed, semiring, &extras.prune(), stream))
        })
        .map_err(to_py)?;
    Ok(DeviceCsr {
        c,
        offsets32,
        timing,
        backend: backend.clone(),
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
        stream: u64,
    ) -> spgemm::Result<Self> {
        // SAFETY: see `product`; the Python `Plan` keeps the structure
        // arrays alive and unchanged as long as this plan.
        let (a_m, b_m) = unsafe {
            after_caller(e, stream)?;
            borrow(e, a, b)?
        };
        let plan = e.symbolic(&a_m, b_m.as_ref().unwrap_or(&a_m))?;
        Ok(Self {
            plan,
            a: a_m,
            b: b_m,
        })
    }

    /// The numeric phase for the values at `a_values` and `b_values`, in
    /// `stream`'s order (see `ordered`).
    fn numeric(
        &self,
        e: &GpuEngine<CudaDevice>,
        a_values: u64,
        b_values: u64,
        stream: u64,
    ) -> spgemm::Result<Product<T>> {
        // SAFETY: the Python `Plan` checked the values' length and type and
        // keeps them alive for the duration of this call; see `product`
        // for the stream.
        unsafe {
            after_caller(e, stream)?;
            let a = e.borrow_device_values(&self.a, a_values);
            let b = self.b.as_ref().map(|b| e.borrow_device_values(b, b_values));
            ordered(e, &a, b.as_ref().unwrap_or(&a), Some(&self.plan), stream)
        }
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

    /// `numeric(a_values, b_values, stream)`: C for new values (device
    /// addresses of nnz(A) and nnz(B) values of the plan's type; B's
    /// ignored when the plan was built for A·A), left running in the
    /// order of the caller's `stream` as in `matmul_device`.
    fn numeric(
        &self,
        py: Python<'_>,
        a_values: u64,
        b_values: u64,
        stream: u64,
    ) -> PyResult<DeviceCsr> {
        let e = engine(&self.backend)?;
        let (c, offsets32, timing) = py
            .detach(|| match &self.plan {
                AnyPlan::F32(p) => p
                    .numeric(e, a_values, b_values, stream)
                    .map(|(c, o, t)| (AnyGpu::F32(c), o, t)),
                AnyPlan::F64(p) => p
                    .numeric(e, a_values, b_values, stream)
                    .map(|(c, o, t)| (AnyGpu::F64(c), o, t)),
            })
            .map_err(to_py)?;
        Ok(DeviceCsr {
            c,
            offsets32,
            timing,
            backend: self.backend.clone(),
        })
    }
}

/// `symbolic_device(a, b, double, device, stream)`: a `DevicePlan` for
/// `A·B`, after waiting for the caller's `stream`.
#[pyfunction]
pub(crate) fn symbolic_device(
    py: Python<'_>,
    a: DeviceOperand,
    b: DeviceOperand,
    double: bool,
    device: usize,
    stream: u64,
) -> PyResult<DevicePlan> {
    check_shapes(&a, &b)?;
    let backend = open("cuda", device)?;
    let e = engine(&backend)?;
    let plan = py
        .detach(|| {
            if double {
                PlanOn::build(e, a, b, stream).map(AnyPlan::F64)
            } else {
                PlanOn::build(e, a, b, stream).map(AnyPlan::F32)
            }
        })
        .map_err(to_py)?;
    Ok(DevicePlan {
        plan,
        backend: backend.clone(),
    })
}
