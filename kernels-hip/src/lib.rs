//! # spgemm-kernels-hip
//!
//! Kernel sources of spgemm for HIP (AMD GPUs and Hygon DCUs), as data:
//! the HIP prelude (wavefronts of 64, 64-bit lane masks, shuffles and
//! ballots without `_sync`, HIP's meaning of launch bounds) in front of the
//! body every vendor shares ([`BODY`], from `spgemm-kernels-shared`):
//! every line of the algorithm is the same on both vendors.
#![warn(missing_docs)]

/// The kernels shared by every GPU vendor.
pub use spgemm_kernels_shared::BODY;

/// The masked products by dot products, shared by every GPU vendor.
pub use spgemm_kernels_shared::MASKED_DOT;

/// AMD / Hygon prelude: wavefront 64, 64-bit lane masks.
pub const PRELUDE_HIP: &str = include_str!("kernels/prelude_hip.cuh");
