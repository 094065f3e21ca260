//! # spgemm-kernels-cuda
//!
//! Kernel sources of spgemm for NVIDIA GPUs, as data: the CUDA prelude
//! (warps of 32, 32-bit lane masks, `_sync` shuffles and ballots, CUDA's
//! meaning of launch bounds) in front of the body every vendor shares
//! ([`BODY`], from `spgemm-kernels-shared`). `spgemm-core` assembles a
//! program from the two and the device's kernel table; the CUDA backend
//! compiles it at run time with NVRTC.
#![warn(missing_docs)]

/// The kernels shared by every GPU vendor.
pub use spgemm_kernels_shared::BODY;

/// The masked products by dot products, shared by every GPU vendor.
pub use spgemm_kernels_shared::MASKED_DOT;

/// NVIDIA prelude: warps of 32, `__shfl_down_sync` with a 32-bit mask.
pub const PRELUDE_CUDA: &str = include_str!("kernels/prelude_cuda.cuh");
