//! # spgemm-cuda
//!
//! The CUDA backend of spgemm: [`CudaDevice`] implements
//! `spgemm_core::device::Device` on cudarc's driver API with dynamic
//! loading, so building needs no CUDA toolkit; kernels are compiled at run
//! time by NVRTC for the GPU present and cached on disk ([`nvrtc`]).
//! The algorithm itself is `spgemm_core::gpu::GpuEngine`.
//!
//! ```no_run
//! let engine = spgemm_cuda::open(0)?;
//! let a: spgemm_core::CsrMatrix<f64> = spgemm_core::mtx::read_path("data/matrices/bcsstk16.mtx.gz")?;
//! let c = engine.multiply_host(&a, &a)?;
//! # Ok::<(), spgemm_core::Error>(())
//! ```
#![warn(missing_docs)]

pub mod cusparse;
mod device;
mod error;
pub mod nvrtc;

pub use device::{Buffer, CudaDevice, Event, Kernel, Pinned, Stream};

/// SpGEMM on an NVIDIA GPU.
pub type CudaEngine = spgemm_core::gpu::GpuEngine<CudaDevice>;

/// Opens GPU `ordinal` with the CUDA prelude and the shared kernel body.
///
/// # Errors
/// No driver, no such device, or another driver error.
pub fn open(ordinal: usize) -> Result<CudaEngine, spgemm_core::Error> {
    let device = CudaDevice::new(ordinal)?;
    Ok(CudaEngine::new(
        device,
        spgemm_kernels_cuda::PRELUDE_CUDA,
        spgemm_kernels_cuda::BODY,
        spgemm_kernels_cuda::MASKED_DOT,
    ))
}
