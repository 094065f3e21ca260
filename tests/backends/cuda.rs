//! The conformance and engine-level suites on the CUDA backend, run where
//! it opens GPU 0 (see `main.rs`): `SPGEMM_REQUIRE_GPU=1 cargo test
//! --release --features cuda --test backends -- cuda::` on a GPU machine.

use crate::common::{self, conformance::Multiplier};
use spgemm::gpu::{Accumulator, LongRows, SortVariant, SymbolicMode};
use spgemm::BackendKind::Cuda;
use spgemm::GpuConfig;

fn default_options() -> Result<Box<dyn Multiplier>, String> {
    common::open_gpu(Cuda, &GpuConfig::default(), &[&[0]])
}

/// Two engines splitting A's rows: GPUs 0 and 1 when there are two, else
/// two engines on GPU 0 (the same splitting and stacking either way).
fn two_devices() -> Result<Box<dyn Multiplier>, String> {
    common::open_gpu(Cuda, &GpuConfig::default(), &[&[0, 1], &[0, 0]])
}

/// The DCU paper's table (the one gfx906 uses: 9 + 9 bins, 12,288 keys and
/// 4,096 pairs filling 48 KB, whole-table bitonic sort, a global symbolic
/// bin) run on this GPU, with every row past its shared tables through the
/// DCU's sorted global hash (kernel 8): the HIP backend's logic checked on
/// a device we have. Hash tables in every bin (no dense accumulators), so
/// the paper's paths run on narrow matrices too.
fn dcu_paper_table() -> Result<Box<dyn Multiplier>, String> {
    let options = GpuConfig {
        table: spgemm::table::TableConfig::DcuPaper,
        long_rows: LongRows::SortedHash,
        accumulator: Accumulator::Hash,
        ..Default::default()
    };
    common::open_gpu(Cuda, &options, &[&[0]])
}

/// OpSparse's V100 table, with the longest rows through the in-place
/// global hash (DCU kernel 9) and hash tables in every bin.
fn v100_paper_table() -> Result<Box<dyn Multiplier>, String> {
    let options = GpuConfig {
        table: spgemm::table::TableConfig::V100Paper,
        long_rows: LongRows::InPlaceHash,
        accumulator: Accumulator::Hash,
        ..Default::default()
    };
    common::open_gpu(Cuda, &options, &[&[0]])
}

/// The register-aware accumulators (`--sort register`, `register-hash`).
fn register_sort() -> Result<Box<dyn Multiplier>, String> {
    common::open_registers(Cuda, SortVariant::Register)
}

fn register_hash() -> Result<Box<dyn Multiplier>, String> {
    common::open_registers(Cuda, SortVariant::RegisterHash)
}

/// Every product with a symbolic phase, and every product that can in one
/// pass (`--symbolic exact`, `bound`, `estimate`), its estimate also
/// forced to fall short (half the estimated room: the pass runs again
/// wherever C has more than a few entries).
fn symbolic_exact() -> Result<Box<dyn Multiplier>, String> {
    common::open_symbolic(Cuda, SymbolicMode::Exact)
}

fn symbolic_bound() -> Result<Box<dyn Multiplier>, String> {
    common::open_symbolic(Cuda, SymbolicMode::Bound)
}

fn symbolic_estimate() -> Result<Box<dyn Multiplier>, String> {
    common::open_estimate(Cuda, spgemm::gpu::ESTIMATE_PERCENT)
}

fn symbolic_estimate_short() -> Result<Box<dyn Multiplier>, String> {
    common::open_estimate(Cuda, 50)
}

pub fn trials() -> Vec<libtest_mimic::Trial> {
    #[cfg(feature = "cuda")]
    let engine = engine_level::CASES;
    #[cfg(not(feature = "cuda"))]
    let engine = &[];
    common::gpu_backend_trials(
        Cuda,
        "cuda",
        &[
            ("default", default_options),
            ("two_devices", two_devices),
            ("dcu_paper_table", dcu_paper_table),
            ("v100_paper_table", v100_paper_table),
            ("register_sort", register_sort),
            ("register_hash", register_hash),
            ("symbolic_exact", symbolic_exact),
            ("symbolic_bound", symbolic_bound),
            ("symbolic_estimate", symbolic_estimate),
            ("symbolic_estimate_short", symbolic_estimate_short),
        ],
        engine,
    )
}

#[cfg(feature = "cuda")]
mod engine_level {
    crate::engine_suite!(spgemm_cuda::open, spgemm::CudaDevice, "CUDA");
}
