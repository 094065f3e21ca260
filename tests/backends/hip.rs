//! The conformance and engine-level suites on the HIP backend (AMD GPUs,
//! Hygon DCU), run where it opens GPU 0 (see `main.rs`): on a DCU,
//! `SPGEMM_REQUIRE_GPU=1 cargo test --release --features hip --test
//! backends -- hip::`.

use crate::common::{self, conformance::Multiplier};
use spgemm::gpu::{Accumulator, LongRows, SortVariant, SymbolicMode};
use spgemm::BackendKind::Hip;
use spgemm::GpuConfig;

fn default_options() -> Result<Box<dyn Multiplier>, String> {
    common::open_gpu(Hip, &GpuConfig::default(), &[&[0]])
}

/// Every row past the shared tables through one of the DCU paper's two
/// global variants (kernel 8, sorted; kernel 9, in place), whatever the
/// row count, and hash tables in every bin (the paper's kernels on narrow
/// matrices too).
fn with_long_rows(long_rows: LongRows) -> Result<Box<dyn Multiplier>, String> {
    let options = GpuConfig {
        long_rows,
        accumulator: Accumulator::Hash,
        ..Default::default()
    };
    common::open_gpu(Hip, &options, &[&[0]])
}

fn sorted_global_hash() -> Result<Box<dyn Multiplier>, String> {
    with_long_rows(LongRows::SortedHash)
}

fn in_place_global_hash() -> Result<Box<dyn Multiplier>, String> {
    with_long_rows(LongRows::InPlaceHash)
}

/// The register-aware accumulators (`--sort register`, `register-hash`).
fn register_sort() -> Result<Box<dyn Multiplier>, String> {
    common::open_registers(Hip, SortVariant::Register)
}

fn register_hash() -> Result<Box<dyn Multiplier>, String> {
    common::open_registers(Hip, SortVariant::RegisterHash)
}

/// Every product with a symbolic phase, and every product that can in one
/// pass (`--symbolic exact`, `bound`, `estimate`), its estimate also
/// forced to fall short (half the estimated room: the pass runs again
/// wherever C has more than a few entries).
fn symbolic_exact() -> Result<Box<dyn Multiplier>, String> {
    common::open_symbolic(Hip, SymbolicMode::Exact)
}

fn symbolic_bound() -> Result<Box<dyn Multiplier>, String> {
    common::open_symbolic(Hip, SymbolicMode::Bound)
}

fn symbolic_estimate() -> Result<Box<dyn Multiplier>, String> {
    common::open_estimate(Hip, spgemm::gpu::ESTIMATE_PERCENT)
}

fn symbolic_estimate_short() -> Result<Box<dyn Multiplier>, String> {
    common::open_estimate(Hip, 50)
}

pub fn trials() -> Vec<libtest_mimic::Trial> {
    #[cfg(feature = "hip")]
    let engine = engine_level::CASES;
    #[cfg(not(feature = "hip"))]
    let engine = &[];
    common::gpu_backend_trials(
        Hip,
        "hip",
        &[
            ("default", default_options),
            ("sorted_global_hash", sorted_global_hash),
            ("in_place_global_hash", in_place_global_hash),
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

#[cfg(feature = "hip")]
mod engine_level {
    crate::engine_suite!(spgemm_hip::open, spgemm::HipDevice, "HIP");
}
