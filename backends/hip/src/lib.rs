//! # spgemm-hip
//!
//! The HIP backend of spgemm, for AMD GPUs and Hygon DCUs: [`HipDevice`]
//! implements `spgemm_core::device::Device` on the HIP runtime
//! ([`runtime`], loaded from libamdhip64 at run time, so building needs no
//! ROCm); kernels are the shared body behind the wave64 prelude
//! (`spgemm-kernels-hip`), compiled by [`hiprtc`] for the device present
//! and cached on disk; the device's kernel table follows from
//! [`properties`] (the DCU configuration named). The algorithm itself is
//! `spgemm_core::gpu::GpuEngine`, the same code as on NVIDIA GPUs.
//!
//! No AMD GPU was available to the authors: this backend is verified by
//! compiling every kernel for gfx906 and gfx90a and checking its resources
//! (tests), and by sharing all of its logic with the CUDA backend.
//!
//! ```no_run
//! let engine = spgemm_hip::open(0)?;
//! let a: spgemm_core::CsrMatrix<f64> = spgemm_core::mtx::read_path("data/matrices/bcsstk16.mtx.gz")?;
//! let c = engine.multiply_host(&a, &a)?;
//! # Ok::<(), spgemm_core::Error>(())
//! ```
#![warn(missing_docs)]

mod device;
pub mod hiprtc;
mod library;
pub mod properties;
pub mod rccl;
pub mod rocsparse;
pub mod runtime;

pub use device::{Buffer, Event, HipDevice, Kernel, Pinned, Stream};

/// SpGEMM on an AMD GPU or Hygon DCU.
pub type HipEngine = spgemm_core::gpu::GpuEngine<HipDevice>;

/// Opens device `ordinal` with the HIP prelude and the shared kernel body.
///
/// # Errors
/// No runtime (libamdhip64), no such device, or another runtime error.
pub fn open(ordinal: usize) -> Result<HipEngine, spgemm_core::Error> {
    let device = HipDevice::new(ordinal)?;
    Ok(HipEngine::new(
        device,
        spgemm_kernels_hip::PRELUDE_HIP,
        spgemm_kernels_hip::BODY,
        spgemm_kernels_hip::MASKED_DOT,
    ))
}
