//! # spgemm-kernels-cuda
//!
//! Kernel sources of spgemm, as data (after candle's kernels crate): the
//! body shared by CUDA and HIP, and the CUDA prelude that defines the warp
//! width, lane-mask type and shuffles for it. `spgemm-core` assembles a
//! program from a prelude, the body and the device's kernel table; the
//! backends compile it at run time (NVRTC, hiprtc).
#![warn(missing_docs)]

/// The kernels shared by every GPU vendor (OpSparse + DCU algorithm): the
/// pipeline (`spgemm.cuh`), then the kernels for rows past the last
/// shared-memory table (`long_rows.cuh`), then dense accumulators in
/// shared memory for rows of a narrow C (`dense_rows.cuh`). Uses only what the prelude
/// defines (`SPGEMM_WARP_SIZE`, shuffles, ballots, `u32`, `u64`) and
/// `value_t`; never a literal warp width.
pub const BODY: &str = concat!(
    include_str!("kernels/spgemm.cuh"),
    include_str!("kernels/long_rows.cuh"),
    include_str!("kernels/dense_rows.cuh")
);

/// NVIDIA prelude: warps of 32, `__shfl_down_sync` with a 32-bit mask.
pub const PRELUDE_CUDA: &str = include_str!("kernels/prelude_cuda.cuh");

#[cfg(test)]
mod tests {
    #[test]
    fn body_never_hard_codes_a_warp_width() {
        for bad in ["warpSize", "0xffffffff)", "% 32", "/ 32", "* 32"] {
            assert!(!super::BODY.contains(bad), "kernel body contains {bad:?}");
        }
    }
}
