//! Structure reuse through `Backend::symbolic` / `Backend::numeric` on the
//! CPU and, where a GPU is present, on CUDA (skipped visibly without one
//! unless `SPGEMM_REQUIRE_GPU=1`): new values give the product of the new
//! values, another structure or another backend's plan is an error.

mod common;

use spgemm::{Backend, BackendKind, CsrMatrix};

fn reuse(backend: &Backend) {
    let a: CsrMatrix<f64> = spgemm::generate::uniform(700, 500, 12, 3).unwrap();
    let b: CsrMatrix<f64> = spgemm::generate::uniform(500, 300, 9, 4).unwrap();
    let plan = backend.symbolic(&a, &b).unwrap();
    let scaled = a.map(|v| 3.0 * v - 1.0);
    let c = backend.numeric(&plan, &scaled, &b).unwrap();
    let want = spgemm::reference::multiply(&scaled, &b).unwrap();
    assert_eq!(c.nnz(), plan.nnz());
    assert_eq!(c.row_offsets(), want.row_offsets());
    assert_eq!(c.col_indices(), want.col_indices());
    for (x, y) in c.values().iter().zip(want.values()) {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0), "{x} vs {y}");
    }
    let square = backend.symbolic(a.view(), &a.transpose().unwrap()).unwrap();
    assert_eq!(square.backend(), backend.name());
    let other: CsrMatrix<f64> = spgemm::generate::uniform(700, 500, 12, 5).unwrap();
    let e = backend.numeric(&plan, &other, &b).unwrap_err().to_string();
    assert!(e.contains("structure mismatch") && e.contains('A'), "{e}");
}

#[test]
fn cpu_plans_rerun_the_numeric_phase() {
    reuse(&Backend::select(BackendKind::Cpu).unwrap().0);
}

#[test]
fn cuda_plans_rerun_the_numeric_phase_and_stay_with_their_backend() {
    let cuda = match Backend::select(BackendKind::Cuda) {
        Ok((b, _)) => b,
        Err(e) => {
            let required = std::env::var("SPGEMM_REQUIRE_GPU").is_ok_and(|v| v == "1");
            assert!(!required, "SPGEMM_REQUIRE_GPU=1 but CUDA did not open: {e}");
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIPPED: CUDA not available ({e})");
            return;
        }
    };
    reuse(&cuda);
    let a: CsrMatrix<f64> = spgemm::generate::uniform(50, 50, 3, 1).unwrap();
    let plan = cuda.symbolic(&a, &a).unwrap();
    let cpu = Backend::select(BackendKind::Cpu).unwrap().0;
    let e = cpu.numeric(&plan, &a, &a).unwrap_err().to_string();
    assert!(e.contains("built by the cuda backend"), "{e}");
}
