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

/// One backend shared by several host threads multiplying at once.
#[test]
fn one_backend_shared_by_threads_multiplying_at_once() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<spgemm::CpuBackend>();
    send_sync::<spgemm::CpuPlan>();
    send_sync::<spgemm::CsrMatrix<f64>>();
    let cpu = std::sync::Arc::new(spgemm::CpuBackend::with_threads(2).unwrap());
    let handles: Vec<_> = (0..6u64)
        .map(|seed| {
            let cpu = cpu.clone();
            std::thread::spawn(move || {
                for round in 0..3 {
                    let a = spgemm::generate::uniform::<f64>(
                        400 + 50 * seed as usize,
                        400,
                        9,
                        seed * 10 + round,
                    )
                    .unwrap();
                    let b = spgemm::generate::uniform::<f64>(400, 300, 7, seed * 10 + round + 100)
                        .unwrap();
                    let c = cpu.multiply(&a, &b).unwrap();
                    spgemm::verify::check_product(&a, &b, &c).unwrap().unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
}
