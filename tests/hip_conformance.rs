//! The conformance and engine-level suites on the HIP backend (AMD GPUs,
//! Hygon DCU). Without
//! the `hip` feature or without a device every test is skipped with a
//! message, unless `SPGEMM_REQUIRE_GPU=1`, which makes them fail instead:
//! on a DCU, run `SPGEMM_REQUIRE_GPU=1 cargo test --release --features hip
//! --test hip_conformance` (see the README).

mod common;

fn open() -> Option<Box<dyn common::conformance::Multiplier>> {
    common::open_gpu(spgemm::BackendKind::Hip, &Default::default(), &[&[0]])
}

mod suite {
    crate::conformance_suite!(crate::open());
}

/// Every row past the shared tables through one of the DCU paper's two
/// global variants (kernel 8, sorted; kernel 9, in place), whatever the
/// row count, and hash tables in every bin (the paper's kernels on narrow
/// matrices too).
fn open_with(long_rows: spgemm::gpu::LongRows) -> Option<Box<dyn common::conformance::Multiplier>> {
    let options = spgemm::GpuConfig {
        long_rows,
        accumulator: spgemm::gpu::Accumulator::Hash,
        ..Default::default()
    };
    common::open_gpu(spgemm::BackendKind::Hip, &options, &[&[0]])
}

mod suite_sorted_global_hash {
    crate::conformance_suite!(crate::open_with(spgemm::gpu::LongRows::SortedHash));
}

mod suite_in_place_global_hash {
    crate::conformance_suite!(crate::open_with(spgemm::gpu::LongRows::InPlaceHash));
}

// The register-aware accumulators (`--sort register`, `register-hash`).
crate::register_suites!(spgemm::BackendKind::Hip);

#[cfg(feature = "hip")]
mod engine_level {
    crate::engine_suite!(spgemm_hip::open, spgemm::HipDevice, "HIP");
}
