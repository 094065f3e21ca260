//! Galerkin products `R·A·P` of CSR matrices on a CUDA device (CuPy,
//! PyTorch): once (`galerkin_device`), or with a plan that reruns only the
//! two numeric phases for new values of A (`galerkin_plan_device`), C left
//! on the device.

use crate::device::{
    after_caller, arrays, check_shapes, engine, AnyGpu, DeviceCsr, DeviceOperand, Product, Timing,
};
use crate::{open, to_py};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spgemm::gpu::{GalerkinPlan, GpuEngine, GpuMatrix};
use spgemm::{Backend, CudaDevice, Scalar};
use std::sync::Arc;
use std::time::Instant;

/// A `ValueError` unless A's columns equal P's rows and R's columns (Pᵀ's
/// when `r` is `None`) A's rows.
fn check_chain(a: &DeviceOperand, p: &DeviceOperand, r: Option<&DeviceOperand>) -> PyResult<()> {
    check_shapes(a, p)?;
    let (r_rows, r_cols) = r.map_or((p.1, p.0), |r| (r.0, r.1));
    if r_cols != a.0 {
        return Err(PyValueError::new_err(format!(
            "dimension mismatch: R is {r_rows}x{r_cols} but A is {}x{} (R's columns must equal A's rows)",
            a.0, a.1
        )));
    }
    Ok(())
}

/// A, P and R (when given) on the device.
type Chain<T> = (
    GpuMatrix<CudaDevice, T>,
    GpuMatrix<CudaDevice, T>,
    Option<GpuMatrix<CudaDevice, T>>,
);

/// A, P and R (when given) over the caller's arrays, their structures
/// checked on the device, after the caller's `stream`.
///
/// # Safety
/// The Python package keeps the arrays alive and unchanged while the
/// matrices (and any plan made from them) live, and `stream` is a live
/// stream of the engine's device.
unsafe fn borrow_chain<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    a: DeviceOperand,
    p: DeviceOperand,
    r: Option<DeviceOperand>,
    stream: u64,
) -> spgemm::Result<Chain<T>> {
    // SAFETY (all three): the caller's guarantee.
    unsafe {
        after_caller(e, stream)?;
        let [ga, gp] = e.borrow_devices([(arrays(a), a.8), (arrays(p), p.8)])?;
        let gr = match r {
            Some(r) => {
                let [gr] = e.borrow_devices::<T, 1>([(arrays(r), r.8)])?;
                Some(gr)
            }
            None => None,
        };
        Ok((ga, gp, gr))
    }
}

/// C's int32 row offsets and the call's wall clock (C is complete).
fn done<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    c: GpuMatrix<CudaDevice, T>,
    since: Instant,
) -> spgemm::Result<Product<T>> {
    let wall = since.elapsed().as_secs_f64() * 1e3;
    let offsets32 = e.row_offsets_i32(&c)?;
    Ok((c, offsets32, Timing::Done(wall, wall)))
}

/// `C = R·A·P` over borrowed device arrays (`r` `None`: `Pᵀ`, formed on
/// the device by [`GpuEngine::transpose_device`]), `A·P` kept on the
/// device between the two products, on this thread after the caller's
/// `stream`; returns when C is complete.
fn galerkin_product<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    a: DeviceOperand,
    p: DeviceOperand,
    r: Option<DeviceOperand>,
    stream: u64,
) -> spgemm::Result<Product<T>> {
    // SAFETY: the Python package keeps the arrays alive for the call; C
    // does not refer to them, and it is complete when this returns.
    let (ga, gp, gr) = unsafe { borrow_chain::<T>(e, a, p, r, stream)? };
    let t = Instant::now();
    let gr = match gr {
        Some(gr) => gr,
        None => e.transpose_device(&gp)?,
    };
    let (ap, _) = e.multiply(&ga, &gp)?;
    let (c, _) = e.multiply(&gr, &ap)?;
    done(e, c, t)
}

/// C of either value type, wrapped for Python.
fn device_csr<T>(
    backend: &Arc<Backend>,
    made: spgemm::Result<Product<T>>,
    wrap: fn(GpuMatrix<CudaDevice, T>) -> AnyGpu,
) -> PyResult<DeviceCsr> {
    let (c, offsets32, timing) = made.map_err(to_py)?;
    Ok(DeviceCsr {
        c: wrap(c),
        offsets32,
        timing,
        backend: backend.clone(),
    })
}

/// `galerkin_device(a, p, r, double, device, stream)`: `C = R·A·P` (`r`
/// `None`: `Pᵀ·A·P`) on CUDA GPU `device` for device operands (see
/// `DeviceOperand`), values float64 when `double` else float32. Waits for
/// the caller's `stream` first and returns when C is complete.
/// `ValueError` for shapes that do not chain.
#[pyfunction]
#[pyo3(signature = (a, p, r, double, device, stream))]
pub(crate) fn galerkin_device(
    py: Python<'_>,
    a: DeviceOperand,
    p: DeviceOperand,
    r: Option<DeviceOperand>,
    double: bool,
    device: usize,
    stream: u64,
) -> PyResult<DeviceCsr> {
    check_chain(&a, &p, r.as_ref())?;
    let backend = open("cuda", device)?;
    let e = engine(&backend)?;
    if double {
        let made = py.detach(|| galerkin_product::<f64>(e, a, p, r, stream));
        device_csr(&backend, made, AnyGpu::F64)
    } else {
        let made = py.detach(|| galerkin_product::<f32>(e, a, p, r, stream));
        device_csr(&backend, made, AnyGpu::F32)
    }
}

/// A Galerkin plan in either precision.
enum AnyGalerkin {
    F32(GalerkinPlan<CudaDevice, f32>),
    F64(GalerkinPlan<CudaDevice, f64>),
}

/// The plan of `R·A·P` over borrowed device arrays and its first C.
fn plan_on<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    a: DeviceOperand,
    p: DeviceOperand,
    r: Option<DeviceOperand>,
    stream: u64,
) -> spgemm::Result<(GalerkinPlan<CudaDevice, T>, Product<T>)> {
    // SAFETY: the Python `GalerkinPlan` keeps A's, P's and R's arrays
    // alive and unchanged (but for A's values) as long as this plan.
    let (ga, gp, gr) = unsafe { borrow_chain::<T>(e, a, p, r, stream)? };
    let t = Instant::now();
    let (plan, c) = e.galerkin_device(gr, ga, gp)?;
    Ok((plan, done(e, c, t)?))
}

/// C again for A's new values at device address `a_values`.
fn numeric_on<T: Scalar>(
    e: &GpuEngine<CudaDevice>,
    plan: &GalerkinPlan<CudaDevice, T>,
    a_values: u64,
    stream: u64,
) -> spgemm::Result<Product<T>> {
    // SAFETY: the Python plan checked the values' length and type and
    // keeps them alive for this call, after the caller's stream.
    let a = unsafe {
        after_caller(e, stream)?;
        e.borrow_device_values(plan.a(), a_values)
    };
    let t = Instant::now();
    let c = e.galerkin_numeric_device(plan, &a)?;
    done(e, c, t)
}

/// Both symbolic phases of `R·A·P` over device operands, kept to rerun the
/// two numeric phases for new values of A (AMG's re-setup); R (or the Pᵀ
/// formed from P), A's structure, P and `A·P` stay on the device.
#[pyclass(module = "spgemm._spgemm", frozen)]
pub(crate) struct DeviceGalerkinPlan {
    plan: AnyGalerkin,
    backend: Arc<Backend>,
}

#[pymethods]
impl DeviceGalerkinPlan {
    /// nnz(C).
    #[getter]
    fn nnz(&self) -> usize {
        match &self.plan {
            AnyGalerkin::F32(p) => p.nnz(),
            AnyGalerkin::F64(p) => p.nnz(),
        }
    }

    /// `numeric(a_values, stream)`: C for new values of A (the device
    /// address of nnz(A) values of the plan's type), after the caller's
    /// `stream`; returns when C is complete.
    fn numeric(&self, py: Python<'_>, a_values: u64, stream: u64) -> PyResult<DeviceCsr> {
        let e = engine(&self.backend)?;
        match &self.plan {
            AnyGalerkin::F32(p) => {
                let made = py.detach(|| numeric_on(e, p, a_values, stream));
                device_csr(&self.backend, made, AnyGpu::F32)
            }
            AnyGalerkin::F64(p) => {
                let made = py.detach(|| numeric_on(e, p, a_values, stream));
                device_csr(&self.backend, made, AnyGpu::F64)
            }
        }
    }
}

/// `galerkin_plan_device(a, p, r, double, device, stream)`: a
/// `DeviceGalerkinPlan` for `R·A·P` (`r` `None`: `Pᵀ·A·P`) and its first
/// C, as `galerkin_device` takes and returns them.
#[pyfunction]
#[pyo3(signature = (a, p, r, double, device, stream))]
pub(crate) fn galerkin_plan_device(
    py: Python<'_>,
    a: DeviceOperand,
    p: DeviceOperand,
    r: Option<DeviceOperand>,
    double: bool,
    device: usize,
    stream: u64,
) -> PyResult<(DeviceGalerkinPlan, DeviceCsr)> {
    check_chain(&a, &p, r.as_ref())?;
    let backend = open("cuda", device)?;
    let e = engine(&backend)?;
    let plan = |plan| DeviceGalerkinPlan {
        plan,
        backend: backend.clone(),
    };
    if double {
        let (g, c) = py
            .detach(|| plan_on::<f64>(e, a, p, r, stream))
            .map_err(to_py)?;
        Ok((
            plan(AnyGalerkin::F64(g)),
            device_csr(&backend, Ok(c), AnyGpu::F64)?,
        ))
    } else {
        let (g, c) = py
            .detach(|| plan_on::<f32>(e, a, p, r, stream))
            .map_err(to_py)?;
        Ok((
            plan(AnyGalerkin::F32(g)),
            device_csr(&backend, Ok(c), AnyGpu::F32)?,
        ))
    }
}
