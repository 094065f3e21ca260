//! # spgemm-kernels-hip
//!
//! Kernel sources of spgemm for HIP (AMD GPUs and Hygon DCUs): the prelude
//! that defines wavefronts of 64, 64-bit lane masks, shuffles and ballots
//! without `_sync`, and HIP's meaning of launch bounds. The kernel body is
//! the one shared with CUDA ([`BODY`], from `spgemm-kernels-cuda`): every
//! line of the algorithm is the same on both vendors.
#![warn(missing_docs)]

/// The kernels shared by every GPU vendor.
pub use spgemm_kernels_cuda::BODY;

/// AMD / Hygon prelude: wavefront 64, 64-bit lane masks.
pub const PRELUDE_HIP: &str = include_str!("kernels/prelude_hip.cuh");
