//! The conformance suite on the CPU backend (with its own thread pool of 2
//! and with the hash accumulator forced, so both accumulators are covered).

mod common;

mod dense_accumulator {
    crate::conformance_suite!(Some(Box::new(spgemm::Backend::Cpu(
        spgemm::CpuBackend::with_threads(2).unwrap()
    ))));
}

mod hash_accumulator {
    crate::conformance_suite!(Some(Box::new(spgemm::Backend::Cpu(
        spgemm::CpuBackend::with_threads(3)
            .unwrap()
            .with_dense_cutoff(0)
    ))));
}
