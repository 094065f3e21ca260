//! Numbers that the host and the kernels must agree on, defined once here
//! and emitted into every program as `#define`s ([`defines`], called by
//! `program::build`); the kernel sources use the `SPGEMM_` names and never
//! define them.

use super::config::REG_PER_LANE;
use std::fmt::Write;

/// Lanes per row of A in the setup kernel (a warp for long rows): the
/// host launches `rows · SETUP_LANES` threads (`SPGEMM_SETUP_LANES`).
pub(crate) const SETUP_LANES: usize = 8;
/// Lanes per row of A in the setup kernel for an A of short rows
/// (`SPGEMM_SETUP_SHORT_LANES`; [`Kernel::SetupShort`](super::kernels::Kernel::SetupShort)).
pub(crate) const SETUP_SHORT_LANES: usize = 2;
/// Largest average entries per row of A that takes
/// [`SETUP_SHORT_LANES`]: measured on an H100, two lanes per row halve
/// the setup of the 7-point stencil (7 entries per row; 0.22-0.25 ->
/// 0.12 ms) and help Erdős–Rényi (8), while R-MAT 16 (16) and bcsstk33
/// (68) are faster with eight.
pub(crate) const SETUP_SHORT_ROW: usize = 12;
/// Entries of a row of A past which setup only lists the row, and
/// [`Kernel::SetupSplit`](super::kernels::Kernel::SetupSplit) spreads it
/// over every warp in chunks of this many entries
/// (`SPGEMM_SETUP_SPLIT`): one warp walks 256 entries of a row per step,
/// so a row of 4,096 takes 16 steps, each about a memory latency.
pub(crate) const SETUP_SPLIT: usize = 4096;
/// Buckets of the setup kernel's histogram of the rows of B used, by
/// log2 of their length (`SPGEMM_HIST_BUCKETS`; DCU §5.1's choice of G).
pub(crate) const HIST_BUCKETS: usize = 64;
/// Threads of a block of the dense kernels (`SPGEMM_DENSE_THREADS`).
pub(crate) const DENSE_THREADS: u32 = 512;
/// Threads of a block of the ranked-bitmap kernel for rows past the last
/// shared table (`SPGEMM_RANKED_LONG_THREADS`; one block resident).
pub(crate) const RANKED_LONG_THREADS: u32 = 1024;
/// Resident blocks the symbolic dense kernel is compiled for (its launch
/// bounds, `SPGEMM_DENSE_SYMBOLIC_BLOCKS`).
pub(crate) const DENSE_SYMBOLIC_BLOCKS: usize = 4;
/// Slots of a tile of the device-wide sort, sorted in shared memory
/// (`SPGEMM_SORT_TILE`; DCU §5.4, kernel 8).
pub(crate) const SORT_TILE: usize = 2048;

/// Products a lane holds in the numeric kernel of distinct rows: the
/// distinct bin takes rows of at most this many times the warp width
/// entries (`SPGEMM_DISTINCT_PER_LANE`).
pub(crate) const DISTINCT_PER_LANE: u32 = 8;

/// Rows of a run of rows of A with the same columns that one block of
/// the numeric phase computes together (`SPGEMM_RUN_ROWS`;
/// [`Kernel::NumericRuns`](super::kernels::Kernel::NumericRuns)): each
/// key of its table holds this many values.
pub(crate) const RUN_ROWS: u32 = 4;
/// Rows of a run of rows of B that
/// [`Kernel::NumericRuns`](super::kernels::Kernel::NumericRuns) walks
/// together (`SPGEMM_RUN_SPAN`): a column of theirs hashed once, their
/// products for each row of A summed before one addition.
pub(crate) const RUN_SPAN: u32 = 3;
/// Most entries of the rows of C that
/// [`Kernel::NumericRuns`](super::kernels::Kernel::NumericRuns) takes
/// (`SPGEMM_RUN_MAX`, a power of two): its table has twice as many keys,
/// [`RUN_ROWS`] values each (36 KB of shared memory for `f64`).
pub(crate) const RUN_MAX: u32 = 512;
/// Threads of a block of
/// [`Kernel::NumericRuns`](super::kernels::Kernel::NumericRuns)
/// (`SPGEMM_RUN_THREADS`).
pub(crate) const RUN_THREADS: u32 = 256;
/// Resident blocks [`Kernel::NumericRuns`](super::kernels::Kernel::NumericRuns)
/// is compiled for (its launch bounds, `SPGEMM_RUN_BLOCKS`): 4 blocks of
/// [`RUN_THREADS`], at most 64 registers a thread.
pub(crate) const RUN_BLOCKS: u32 = 4;

/// Numeric binning of a product of few rows
/// ([`PROMOTE_ROWS_PER_MULTIPROCESSOR`]): a row of up to the short-row
/// bins' entries takes the bin of a row 2^this longer
/// (`SPGEMM_PROMOTE_SHIFT`), so that more lanes share it.
pub(crate) const PROMOTE_SHIFT: u32 = 3;

/// Rows of a product per multiprocessor up to which the numeric phase
/// bins its short rows as longer ones ([`PROMOTE_SHIFT`]): with a few
/// rows per multiprocessor, the short-row bins (8–64 lanes a row) leave
/// most of the device idle and each row's chain of loads bounds them.
/// Measured on an H200 (`docs/benchmarks/few-rows-h200-2026-11-29.md`):
/// the numeric phase of products of about a thousand rows 1.05–1.95×
/// faster where rows were promoted (collins_15NN 0.068 -> 0.053 ms).
pub(crate) const PROMOTE_ROWS_PER_MULTIPROCESSOR: usize = 16;

/// Products of a row (estimated from its entries of A and the typical
/// row of B) from which [`PROMOTE_ROWS_PER_MULTIPROCESSOR`]'s rows are
/// binned as longer ones: rows of fewer products gained nothing on an
/// H200 (494_bus, 13 a row: 0.88×; cage8, 128: 0.95×).
pub(crate) const PROMOTE_MIN_PRODUCTS: usize = 256;

/// Fault words of the structure checks of another library's arrays
/// that a product with pending checks reads (`SPGEMM_FAULT_WORDS`): two
/// per operand (`checks.cuh`), two operands.
pub(crate) const FAULT_WORDS: usize = 4;

/// A column that is no entry (`SPGEMM_EMPTY`): an empty hash slot, a
/// lane past its row, an entry of a mask that no product met.
pub(crate) const EMPTY: u32 = u32::MAX;

/// The `#define`s of the constants above, as kernel source.
pub(crate) fn defines() -> String {
    let mut s = String::from("\n// Shared with the host (core/src/gpu/constants.rs).\n");
    for (name, value) in [
        ("SPGEMM_SETUP_LANES", SETUP_LANES.to_string()),
        ("SPGEMM_SETUP_SHORT_LANES", SETUP_SHORT_LANES.to_string()),
        ("SPGEMM_SETUP_SPLIT", format!("{SETUP_SPLIT}ull")),
        ("SPGEMM_HIST_BUCKETS", HIST_BUCKETS.to_string()),
        ("SPGEMM_DENSE_THREADS", DENSE_THREADS.to_string()),
        (
            "SPGEMM_RANKED_LONG_THREADS",
            RANKED_LONG_THREADS.to_string(),
        ),
        (
            "SPGEMM_DENSE_SYMBOLIC_BLOCKS",
            DENSE_SYMBOLIC_BLOCKS.to_string(),
        ),
        ("SPGEMM_SORT_TILE", format!("{SORT_TILE}u")),
        ("SPGEMM_DISTINCT_PER_LANE", format!("{DISTINCT_PER_LANE}u")),
        ("SPGEMM_REG_PER_LANE", format!("{REG_PER_LANE}u")),
        ("SPGEMM_RUN_ROWS", format!("{RUN_ROWS}u")),
        ("SPGEMM_RUN_SPAN", format!("{RUN_SPAN}u")),
        ("SPGEMM_RUN_MAX", format!("{RUN_MAX}u")),
        ("SPGEMM_RUN_THREADS", RUN_THREADS.to_string()),
        ("SPGEMM_RUN_BLOCKS", RUN_BLOCKS.to_string()),
        ("SPGEMM_PROMOTE_SHIFT", format!("{PROMOTE_SHIFT}u")),
        ("SPGEMM_FAULT_WORDS", format!("{FAULT_WORDS}u")),
        ("SPGEMM_EMPTY", format!("{EMPTY:#x}u")),
    ] {
        let _ = writeln!(s, "#define {name} {value}");
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn kernel_sources_leave_the_shared_constants_to_the_host() {
        let body = spgemm_kernels_shared::BODY;
        for name in [
            "SETUP_LANES",
            "SETUP_SHORT_LANES",
            "HIST_BUCKETS",
            "DENSE_THREADS",
            "RANKED_LONG_THREADS",
            "DENSE_SYMBOLIC_BLOCKS",
            "SORT_TILE",
            "DISTINCT_PER_LANE",
            "RUN_ROWS",
            "RUN_SPAN",
            "RUN_MAX",
            "RUN_THREADS",
            "RUN_BLOCKS",
            "PROMOTE_SHIFT",
            "FAULT_WORDS",
            "EMPTY",
        ] {
            let define = format!("#define SPGEMM_{name} ");
            assert!(
                !body.contains(&define),
                "the kernel source defines SPGEMM_{name}"
            );
            assert!(super::defines().contains(&define));
            assert!(
                body.contains(&format!("SPGEMM_{name}")),
                "SPGEMM_{name} is unused"
            );
        }
    }
}
