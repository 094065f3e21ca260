//! The conformance suite on the CPU backend (with its own thread pool of 2
//! and with the hash accumulator forced, so both accumulators are covered).

use crate::common::{self, conformance::Multiplier};
use spgemm::BackendKind::Cpu;

fn dense_accumulator() -> Result<Box<dyn Multiplier>, String> {
    let cpu = spgemm::CpuBackend::with_threads(2).map_err(|e| e.to_string())?;
    Ok(Box::new(spgemm::Backend::Cpu(cpu)))
}

fn hash_accumulator() -> Result<Box<dyn Multiplier>, String> {
    let cpu = spgemm::CpuBackend::with_threads(3).map_err(|e| e.to_string())?;
    Ok(Box::new(spgemm::Backend::Cpu(cpu.with_dense_cutoff(0))))
}

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut t = common::conformance_trials(Cpu, "cpu::dense_accumulator", dense_accumulator);
    t.extend(common::conformance_trials(
        Cpu,
        "cpu::hash_accumulator",
        hash_accumulator,
    ));
    t.push(common::trial(
        Cpu,
        "cpu::one_backend_shared_by_threads_multiplying_at_once".into(),
        one_backend_shared_by_threads_multiplying_at_once,
    ));
    t
}

/// One backend shared by several host threads multiplying at once.
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
