//! `spgemm.distributed.matmul` on CuPy and PyTorch blocks (feature
//! `mpi`): each rank's blocks of A and B stay on its GPU, read in place,
//! B's rows move GPU to GPU (staged through pinned host memory, or by
//! NCCL with the `nccl` feature) and each rank's block of C is left on its
//! GPU ([`spgemm::distributed::resident::multiply`], 1D rows).

use crate::device::{after_caller, arrays, engine, AnyGpu, DeviceCsr, DeviceOperand, Timing};
use crate::distributed::{agreed_backend, agreed_value_type, borrowed_comm, Borrowed};
use pyo3::prelude::*;
use spgemm::distributed::comm::agree;
use spgemm::distributed::device_exchange::{DeviceExchange, HostStaged};
use spgemm::distributed::mpi::topology::SimpleCommunicator;
use spgemm::distributed::resident::{self, DeviceDistCsr};
use spgemm::gpu::{GpuEngine, GpuMatrix};
use spgemm::{CudaDevice, Scalar};

/// `distributed_matmul_device(comm, a, b, dtype, device, stream,
/// exchange, algorithm)`: this rank's block of `C = A·B` over the ranks of the
/// communicator whose mpi4py handle is `comm`, from its blocks of A and
/// B on CUDA GPU `device` (device operands as `matmul_spec_device` takes
/// them, global column indices; values of `dtype`, the same on every
/// rank), after the caller's `stream`; B's rows exchanged through
/// `exchange` ("host": pinned host memory and MPI; "nccl"), by 1D rows
/// (`algorithm` "auto" or "1d"). Returns C's block on the device and the
/// algorithm run ("1d"). Collective; every rank's error is every rank's,
/// naming the first rank at fault.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn distributed_matmul_device(
    py: Python<'_>,
    comm: usize,
    a: DeviceOperand,
    b: DeviceOperand,
    dtype: &str,
    device: usize,
    stream: u64,
    exchange: &str,
    algorithm: &str,
) -> PyResult<(DeviceCsr, String)> {
    // SAFETY: mpi4py's handle of a live communicator, used only during
    // this call.
    let comm = unsafe { borrowed_comm(comm) };
    let comm = &*comm.0;
    let asked = match (algorithm, exchange) {
        ("auto" | "1d", "host" | "nccl") => Ok(()),
        ("auto" | "1d", other) => Err(format!("unknown exchange {other:?}: expected host or nccl")),
        (other, _) => Err(format!(
            "algorithm {other:?} on device blocks: they multiply by 1D rows (auto or 1d)"
        )),
    };
    agree(comm, asked.map_err(spgemm::distributed::Error::Argument))
        .map_err(|x| crate::to_py(x.into()))?;
    let backend = agreed_backend(comm, "cuda", device)?;
    agreed_value_type(comm, Some(dtype))?;
    let e = engine(&backend)?;
    let shared = Borrowed(comm);
    let exchange = exchange.to_string();
    let c = py.detach(move || {
        let comm = shared.get();
        let through = |x: &dyn DeviceExchange<CudaDevice>| -> PyResult<(AnyGpu, f64)> {
            let ab = (a, b);
            match dtype {
                "float64" => block::<f64>(comm, e, x, ab, stream).map(|(c, t)| (AnyGpu::F64(c), t)),
                "float32" => block::<f32>(comm, e, x, ab, stream).map(|(c, t)| (AnyGpu::F32(c), t)),
                "int64" => block::<i64>(comm, e, x, ab, stream).map(|(c, t)| (AnyGpu::I64(c), t)),
                _ => block::<i32>(comm, e, x, ab, stream).map(|(c, t)| (AnyGpu::I32(c), t)),
            }
        };
        match exchange.as_str() {
            "nccl" => nccl(comm, e, &through),
            _ => through(&HostStaged::new(comm)),
        }
    })?;
    let (c, ms) = c;
    let offsets32 = match &c {
        AnyGpu::F64(m) => e.row_offsets_i32(m),
        AnyGpu::F32(m) => e.row_offsets_i32(m),
        AnyGpu::I64(m) => e.row_offsets_i32(m),
        AnyGpu::I32(m) => e.row_offsets_i32(m),
    }
    .map_err(|err| crate::to_py(err.into()))?;
    Ok((
        DeviceCsr {
            c,
            offsets32,
            timing: Timing::Done(ms, ms),
            backend: backend.clone(),
        },
        "1d".into(),
    ))
}

/// This rank's block of C for values of type `T` from its blocks `(a, b)`
/// after the caller's `stream`, through `exchange`, and the product's
/// milliseconds (wall clock, this rank).
fn block<T: Scalar>(
    comm: &SimpleCommunicator,
    e: &GpuEngine<CudaDevice>,
    exchange: &dyn DeviceExchange<CudaDevice>,
    (a, b): (DeviceOperand, DeviceOperand),
    stream: u64,
) -> PyResult<(GpuMatrix<CudaDevice, T>, f64)> {
    let err = |x: spgemm::distributed::Error| crate::to_py(x.into());
    // SAFETY: the Python caller's arrays live, unchanged, through this
    // call (its current stream is waited for first); C refers to none of
    // them.
    let borrowed = unsafe {
        after_caller(e, stream)
            .and_then(|()| Ok(e.borrow_devices([(arrays(a), a.8), (arrays(b), b.8)])?))
    };
    let [ga, gb] = agree(
        comm,
        borrowed.map_err(|x| spgemm::distributed::Error::Local(x.to_string())),
    )
    .map_err(err)?;
    let (a_ncols, b_ncols) = (ga.ncols() as u64, gb.ncols() as u64);
    let da = DeviceDistCsr::from_device(comm, e, ga, a_ncols).map_err(err)?;
    let db = DeviceDistCsr::from_device(comm, e, gb, b_ncols).map_err(err)?;
    let (c, stats) = resident::multiply(comm, e, exchange, &da, &db).map_err(err)?;
    Ok((c.into_matrix(), stats.total_ms))
}

/// `through` NCCL over `comm`'s ranks, one GPU each.
#[cfg(feature = "nccl")]
fn nccl<R>(
    comm: &SimpleCommunicator,
    e: &GpuEngine<CudaDevice>,
    through: &dyn Fn(&dyn DeviceExchange<CudaDevice>) -> PyResult<R>,
) -> PyResult<R> {
    let x = spgemm::distributed::nccl::Nccl::new(comm, e.device())
        .map_err(|x| crate::to_py(x.into()))?;
    through(&x)
}

/// NCCL is not in this build: every rank's error.
#[cfg(not(feature = "nccl"))]
fn nccl<R>(
    _: &SimpleCommunicator,
    _: &GpuEngine<CudaDevice>,
    _: &dyn Fn(&dyn DeviceExchange<CudaDevice>) -> PyResult<R>,
) -> PyResult<R> {
    Err(pyo3::exceptions::PyValueError::new_err(
        "exchange 'nccl' needs the package built with the nccl feature; use exchange='host'",
    ))
}
