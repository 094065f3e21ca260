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

mod bandwidth;
mod chunked;
mod config;
mod constants;
mod dense;
mod engine;
#[doc(hidden)]
pub mod kernels;
mod launch;
mod matrix;
mod memory;
mod meta;
mod multi;
mod numeric;
mod pipeline;
mod product;
#[doc(hidden)]
pub mod program;
mod rows;
mod staging;
mod symbolic;

pub use chunked::{HostTimes, Placement};
pub use config::{Accumulator, GpuConfig, LongRows, SortVariant, RANK_MAX_NNZ};
pub use engine::GpuEngine;
pub use matrix::{GpuMatrix, GpuPlan, PhaseTimes, VendorRun};
pub use multi::{MultiGpu, MultiOperands};
