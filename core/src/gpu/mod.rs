//! The GPU algorithm, written once over [`Device`](crate::device::Device): OpSparse's two-phase
//! hash SpGEMM (Du et al. 2022, §5, Fig. 2) with the DCU improvements
//! (nsparse on DCU, §5.1–5.4).
//!
//! 1. Setup: `nprod(i)` into C's row offsets, its total and maximum, and
//!    B's longest row (for the thread-group size G).
//! 2. Symbolic binning (two passes, shared-memory atomics) and symbolic hash
//!    kernels, one per bin, largest first, on several streams; rows past
//!    the last shared table (a global bin, or rows that overflow it) are
//!    counted in global memory.
//! 3. Exclusive scan of nnz(i) into C's row offsets; nnz(C) read back; C's
//!    arrays allocated.
//! 4. Numeric binning and numeric hash kernels (bitonic or condense + rank
//!    sort), direct copies for single-entry rows of A, global memory for
//!    the longest rows ([`LongRows`]).
//!
//! When C is narrow, the bins of longer rows accumulate densely in shared
//! memory instead of hashing ([`Accumulator`], KokkosKernels §3.3).
//!
//! A [`GpuPlan`] keeps the symbolic result to rerun only the numeric phase.

mod assembled;
mod bandwidth;
mod bfs;
mod borrowed;
mod checks;
mod chunked;
mod complement;
mod config;
mod constants;
mod dense;
mod engine;
mod faults;
mod galerkin;
mod grid;
#[doc(hidden)]
pub mod kernels;
mod launch;
mod masked;
mod masked_reduce;
mod masked_transposed;
mod matrix;
mod memory;
mod meta;
mod multi;
mod numeric;
mod one_pass;
mod pipeline;
mod product;
#[doc(hidden)]
pub mod program;
mod prune;
mod prune_in_pass;
mod rows;
mod semiring_blocks;
mod shapes;
mod staging;
mod streamed;
mod symbolic;

pub use assembled::{Assembly, RowRun};
pub use bfs::SearchLevels;
pub use chunked::{HostTimes, Placement};
pub use config::{
    Accumulator, GpuConfig, LongRows, SliceSplit, SortVariant, SymbolicMode, ESTIMATE_PERCENT,
    MAX_DOWNLOAD_CHUNKS, RANK_MAX_NNZ, REG_PER_LANE,
};
pub use engine::GpuEngine;
pub use galerkin::GalerkinPlan;
pub use kernels::IndexWidth;
pub use matrix::DeviceCsr;
pub use matrix::{GpuMatrix, GpuPlan, PhaseTimes, VendorRun};
pub use memory::DeviceArray;
pub use multi::{MultiGpu, MultiOperands};
pub use one_pass::{
    estimated_room, one_pass_pays, ONE_PASS_MAX_COMPRESSION, ONE_PASS_MAX_COMPRESSION_WARP,
};
pub use pipeline::{Enqueued, PhaseEvents};

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    /// The modules of `core/src/gpu` each module names through `super::`
    /// outside its tests.
    fn imports() -> BTreeMap<String, BTreeSet<String>> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/gpu");
        let mut graph = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap();
            let deps = code
                .split("super::")
                .skip(1)
                .map(|rest| {
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .filter(|d| *d != name && dir.join(format!("{d}.rs")).exists())
                .collect();
            graph.insert(name, deps);
        }
        graph
    }

    #[test]
    fn gpu_modules_import_each_other_without_a_circle() {
        let graph = imports();
        assert!(graph["pipeline"].contains("product"), "{graph:?}");
        // Depth-first search from every module for a path back to itself.
        fn reaches(
            graph: &BTreeMap<String, BTreeSet<String>>,
            from: &str,
            target: &str,
            seen: &mut BTreeSet<String>,
        ) -> bool {
            graph[from]
                .iter()
                .any(|d| d == target || (seen.insert(d.clone()) && reaches(graph, d, target, seen)))
        }
        for m in graph.keys() {
            assert!(
                !reaches(&graph, m, m, &mut BTreeSet::new()),
                "{m} imports itself through other modules: {graph:?}"
            );
        }
    }
}
