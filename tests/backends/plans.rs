//! Structure reuse through `Backend::symbolic` / `Backend::numeric` on the
//! CPU and on CUDA (where it opens GPU 0): new values give the product of
//! the new values, another structure or another backend's plan is an error
//! naming what differs.

use crate::common;
use spgemm::{Backend, BackendKind, CsrMatrix};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    vec![
        common::trial(
            BackendKind::Cpu,
            "cpu::plans::rerun_the_numeric_phase".into(),
            cpu_plans_rerun_the_numeric_phase,
        ),
        common::trial(
            BackendKind::Cuda,
            "cuda::plans::rerun_the_numeric_phase_and_stay_with_their_backend".into(),
            cuda_plans_rerun_the_numeric_phase_and_stay_with_their_backend,
        ),
    ]
}

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
    assert!(
        e.contains("structure mismatch: A is not the matrix the plan was built for: it "),
        "{e}"
    );
    let wider: CsrMatrix<f64> = spgemm::generate::uniform(500, 301, 9, 4).unwrap();
    let e = backend.numeric(&plan, &a, &wider).unwrap_err().to_string();
    assert!(
        e.contains("B is not the matrix the plan was built for: it is 500x301, not 500x300"),
        "{e}"
    );
}

fn cpu_plans_rerun_the_numeric_phase() {
    reuse(&Backend::select(BackendKind::Cpu).unwrap().0);
}

fn cuda_plans_rerun_the_numeric_phase_and_stay_with_their_backend() {
    let cuda = Backend::select(BackendKind::Cuda).expect("CUDA GPU 0").0;
    reuse(&cuda);
    let a: CsrMatrix<f64> = spgemm::generate::uniform(50, 50, 3, 1).unwrap();
    let plan = cuda.symbolic(&a, &a).unwrap();
    let cpu = Backend::select(BackendKind::Cpu).unwrap().0;
    let e = cpu.numeric(&plan, &a, &a).unwrap_err().to_string();
    assert!(e.contains("built by the cuda backend"), "{e}");
}
