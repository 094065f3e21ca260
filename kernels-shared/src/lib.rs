//! # spgemm-kernels-shared
//!
//! The kernel body of spgemm, as data (after candle's kernels crate and
//! Ginkgo's `common/cuda_hip`): one source shared by every GPU vendor,
//! which the vendor crates `spgemm-kernels-cuda` and `spgemm-kernels-hip`
//! put a thin prelude in front of. `spgemm-core` assembles a program from
//! a prelude, this body and the device's kernel table; the backends
//! compile it at run time (NVRTC, hiprtc).
//!
//! The body uses only what a prelude defines (`SPGEMM_WARP_SIZE`,
//! shuffles, ballots, `u32`, `u64`, launch bounds), what the program
//! builder emits (`value_t`, the constants of `spgemm_core::gpu`, the bin
//! ranges) and never a literal warp width. The parameter lists of its
//! `extern "C"` kernels are the kernel catalogue's
//! (`spgemm_core::gpu::kernels`), which a test of `spgemm-core` compares
//! with this text.
#![warn(missing_docs)]

/// The kernels shared by every GPU vendor (OpSparse + DCU algorithm): the
/// semiring's atomic `⊕` (`semiring_atomic.cuh`), the pipeline up to the
/// shared-memory bins (`spgemm.cuh`), the runs of rows of A with the same
/// columns, counted once by the symbolic phase (`same_rows.cuh`), the
/// scans of row
/// offsets (`scan.cuh`), the register sort
/// of short rows (`register_sort.cuh`), magnitudes of values as pruning
/// compares them (`magnitude.cuh`) and the pruning of a row in its
/// shared-memory table (`row_prune.cuh`), the bitonic sort
/// (`bitonic.cuh`), the shared-memory bins
/// (`shared_bins.cuh`), then the kernels for rows past the last
/// shared-memory table (`long_rows.cuh`), then dense accumulators in
/// shared memory for rows of a narrow C (`dense_rows.cuh`), then B packed
/// into words of columns for the symbolic phase (`packed_columns.cuh`),
/// then the checks of structures read in place from another library's
/// device arrays (`checks.cuh`), then the row offsets of a matrix
/// assembled from runs of other matrices' rows (`assembled_rows.cuh`),
/// then the one-pass product of short rows, pruned as it is written
/// (`one_pass.cuh`).
pub const BODY: &str = concat!(
    include_str!("kernels/semiring_atomic.cuh"),
    include_str!("kernels/spgemm.cuh"),
    include_str!("kernels/same_rows.cuh"),
    include_str!("kernels/scan.cuh"),
    include_str!("kernels/register_sort.cuh"),
    include_str!("kernels/magnitude.cuh"),
    include_str!("kernels/row_prune.cuh"),
    include_str!("kernels/bitonic.cuh"),
    include_str!("kernels/shared_bins.cuh"),
    include_str!("kernels/long_rows.cuh"),
    include_str!("kernels/dense_rows.cuh"),
    include_str!("kernels/packed_columns.cuh"),
    include_str!("kernels/checks.cuh"),
    include_str!("kernels/assembled_rows.cuh"),
    include_str!("kernels/one_pass.cuh")
);

/// The scans (`scan.cuh`, as in the body), the semiring's atomic `⊕`
/// (`semiring_atomic.cuh`, as in the body), the masked products by dot
/// products (`masked_dot.cuh`: with B's transpose, C's compaction and a
/// complemented mask's marks), the sort of the rows of a transpose
/// (`bitonic.cuh`, as in the body, and `sorted_rows.cuh`), the masked products pushed into a dense
/// grid (`grid.cuh`), then the pruning of C's rows and columns
/// (`magnitude.cuh`, `prune.cuh`): a program of its own,
/// compiled per value type and semiring, whose `value_t` and semiring
/// operators the program builder emits in front of it.
pub const MASKED_DOT: &str = concat!(
    include_str!("kernels/scan.cuh"),
    include_str!("kernels/semiring_atomic.cuh"),
    include_str!("kernels/masked_dot.cuh"),
    include_str!("kernels/bitonic.cuh"),
    include_str!("kernels/sorted_rows.cuh"),
    include_str!("kernels/grid.cuh"),
    include_str!("kernels/magnitude.cuh"),
    include_str!("kernels/prune.cuh")
);

#[cfg(test)]
mod tests {
    #[test]
    fn body_never_hard_codes_a_warp_width() {
        for bad in ["warpSize", "0xffffffff)", "% 32", "/ 32", "* 32"] {
            for (name, source) in [("body", super::BODY), ("masked dot", super::MASKED_DOT)] {
                assert!(!source.contains(bad), "kernel {name} contains {bad:?}");
            }
        }
    }
}
