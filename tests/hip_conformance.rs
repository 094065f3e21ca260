//! The conformance suite on the HIP backend (AMD GPUs, Hygon DCU). Without
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
