//! The conformance suite on the CUDA backend. Without the `cuda` feature or
//! without a GPU every test is skipped with a message, unless
//! `SPGEMM_REQUIRE_GPU=1`, which makes them fail instead.

mod common;

fn open() -> Option<Box<dyn common::conformance::Multiplier>> {
    common::open_gpu(spgemm::BackendKind::Cuda, &Default::default(), &[&[0]])
}

mod suite {
    crate::conformance_suite!(crate::open());
}

/// Two engines splitting A's rows: GPUs 0 and 1 when there are two, else
/// two engines on GPU 0 (the same splitting and stacking either way).
fn open_two() -> Option<Box<dyn common::conformance::Multiplier>> {
    common::open_gpu(
        spgemm::BackendKind::Cuda,
        &Default::default(),
        &[&[0, 1], &[0, 0]],
    )
}

mod suite_two_devices {
    crate::conformance_suite!(crate::open_two());
}

/// The DCU paper's table (the one gfx906 uses: 9 + 9 bins, 12,288 keys and
/// 4,096 pairs filling 48 KB, whole-table bitonic sort, a global symbolic
/// bin) run on this GPU, with every row past its shared tables through the
/// DCU's sorted global hash (kernel 8): the HIP backend's logic checked on
/// a device we have. Hash tables in every bin (no dense accumulators), so
/// the paper's paths run on narrow matrices too.
fn open_dcu_paper() -> Option<Box<dyn common::conformance::Multiplier>> {
    let options = spgemm::GpuConfig {
        table: spgemm::table::TableConfig::DcuPaper,
        long_rows: spgemm::gpu::LongRows::SortedHash,
        accumulator: spgemm::gpu::Accumulator::Hash,
        ..Default::default()
    };
    common::open_gpu(spgemm::BackendKind::Cuda, &options, &[&[0]])
}

mod suite_dcu_paper_table {
    crate::conformance_suite!(crate::open_dcu_paper());
}

/// OpSparse's V100 table, with the longest rows through the in-place
/// global hash (DCU kernel 9) and hash tables in every bin.
fn open_v100_paper() -> Option<Box<dyn common::conformance::Multiplier>> {
    let options = spgemm::GpuConfig {
        table: spgemm::table::TableConfig::V100Paper,
        long_rows: spgemm::gpu::LongRows::InPlaceHash,
        accumulator: spgemm::gpu::Accumulator::Hash,
        ..Default::default()
    };
    common::open_gpu(spgemm::BackendKind::Cuda, &options, &[&[0]])
}

mod suite_v100_paper_table {
    crate::conformance_suite!(crate::open_v100_paper());
}

// The register-aware accumulators (`--sort register`, `register-hash`).
crate::register_suites!(spgemm::BackendKind::Cuda);

#[cfg(feature = "cuda")]
mod engine_level {
    crate::engine_suite!(spgemm_cuda::open, spgemm::CudaDevice, "CUDA");
}
