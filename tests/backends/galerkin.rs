//! Galerkin products (`Pᵀ·A·P`, `R·A·P`, their re-setup with new values of
//! A) and products with a transposed operand, on the CPU and each GPU
//! backend, against the sequential reference.

use crate::common;
use spgemm::{generate, reference, Backend, BackendKind, CsrMatrix, Transposed};

/// A case, run on one backend.
type Case = fn(&Backend);

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let cases: [(&str, Case); 6] = [
        ("ptap_of_an_amg_hierarchy", ptap_of_an_amg_hierarchy),
        ("ptap_of_unsorted_operands", ptap_of_unsorted_operands),
        (
            "rap_of_rectangular_random_matrices",
            rap_of_rectangular_random_matrices,
        ),
        (
            "resetup_reruns_the_numeric_phases",
            resetup_reruns_the_numeric_phases,
        ),
        (
            "mismatched_operands_are_errors",
            mismatched_operands_are_errors,
        ),
        ("transposed_operands", transposed_operands),
    ];
    let mut trials = Vec::new();
    for (kind, name) in [
        (BackendKind::Cpu, "cpu"),
        (BackendKind::Cuda, "cuda"),
        (BackendKind::Hip, "hip"),
    ] {
        for (case, run) in cases {
            trials.push(common::trial(
                kind,
                format!("{name}::galerkin::{case}"),
                move || {
                    let (backend, _) = Backend::select(kind).expect("backend");
                    run(&backend)
                },
            ));
        }
        if kind != BackendKind::Cpu {
            trials.push(common::trial(
                kind,
                format!("{name}::galerkin::plans_of_device_matrices"),
                move || plans_of_device_matrices(kind),
            ));
        }
    }
    trials
}

/// `GpuEngine::galerkin_device` on matrices already on the device and a
/// re-setup there (`galerkin_numeric_device`), C left on the device, or
/// from the host; A of another structure refused.
fn plans_of_device_matrices(kind: BackendKind) {
    let (gpu, _) = Backend::select(kind).unwrap();
    match &gpu {
        #[cfg(feature = "cuda")]
        Backend::Cuda(m) => plans_on_engine(&m.engines()[0]),
        #[cfg(feature = "hip")]
        Backend::Hip(m) => plans_on_engine(&m.engines()[0]),
        _ => panic!("{kind:?} opened the {} backend", gpu.name()),
    }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
fn plans_on_engine<D: spgemm::device::Device>(e: &spgemm::gpu::GpuEngine<D>) {
    let a: CsrMatrix<f64> = generate::poisson_7(11).unwrap();
    let p: CsrMatrix<f64> = generate::sa_prolongator(11).unwrap();
    let r: CsrMatrix<f64> = generate::uniform(70, a.nrows(), 11, 9).unwrap();
    let pt = p.transpose().unwrap();
    let up = |m: &CsrMatrix<f64>| e.upload(m).unwrap();
    let (plan, c) = e.galerkin_device(None, up(&a), up(&p)).unwrap();
    check(&e.download(&c).unwrap(), &pt, &a, &p);
    let new_a = a.map(|v| 2.0 * v - 1.0);
    let ga = e.with_values(plan.a(), new_a.values()).unwrap();
    let c = e.galerkin_numeric_device(&plan, &ga).unwrap();
    check(&e.download(&c).unwrap(), &pt, &new_a, &p);
    // A uploaded again: other arrays, the same structure (compared on
    // their host copies); A of another structure refused by name.
    let c = e.galerkin_numeric_device(&plan, &up(&new_a)).unwrap();
    check(&e.download(&c).unwrap(), &pt, &new_a, &p);
    let other: CsrMatrix<f64> = generate::erdos_renyi(a.nrows(), 7, 4).unwrap();
    let err = e.galerkin_numeric_device(&plan, &up(&other)).err().unwrap();
    let want = "A is not the matrix the Galerkin plan was built for";
    assert!(err.to_string().contains(want), "{err}");
    // From the host too: the plan's A came with a host copy.
    check(
        &e.galerkin_numeric(&plan, new_a.view()).unwrap(),
        &pt,
        &new_a,
        &p,
    );
    let (plan, c) = e.galerkin_device(Some(up(&r)), up(&a), up(&p)).unwrap();
    assert_eq!(plan.nnz(), c.nnz());
    check(&e.download(&c).unwrap(), &r, &a, &p);
    let ga = e.with_values(plan.a(), new_a.values()).unwrap();
    let c = e.galerkin_numeric_device(&plan, &ga).unwrap();
    check(&e.download(&c).unwrap(), &r, &new_a, &p);
    // A computed on the device has no host copy of its structure: a
    // re-setup from the host is refused, saying why.
    let (computed, _) = e.multiply(&up(&eye(a.nrows())), &up(&a)).unwrap();
    let (plan, _) = e.galerkin_device(None, computed, up(&p)).unwrap();
    let err = e.galerkin_numeric(&plan, a.view()).unwrap_err();
    assert!(
        err.to_string().contains("the plan was built on the device"),
        "{err}"
    );
    let err = e.galerkin_device(None, up(&r), up(&p)).err().unwrap();
    assert!(err.to_string().contains("dimension mismatch"), "{err}");
}

/// `c` against `r·(a·p)` by the reference, entry by entry within rounding
/// of `|r|·|a|·|p|` (the two products sum in different orders on a GPU).
fn check(c: &CsrMatrix<f64>, r: &CsrMatrix<f64>, a: &CsrMatrix<f64>, p: &CsrMatrix<f64>) {
    let want = reference::multiply(r, &reference::multiply(a, p).unwrap()).unwrap();
    let scale = reference::multiply_abs(r, &reference::multiply_abs(a, p).unwrap()).unwrap();
    assert_eq!(c.row_offsets(), want.row_offsets(), "row offsets");
    assert_eq!(c.col_indices(), want.col_indices(), "columns");
    for (k, ((x, y), s)) in c
        .values()
        .iter()
        .zip(want.values())
        .zip(scale.values())
        .enumerate()
    {
        assert!(
            (x - y).abs() <= 64.0 * f64::EPSILON * s,
            "entry {k}: {x} against {y} (scale {s})"
        );
    }
}

fn ptap_of_an_amg_hierarchy(backend: &Backend) {
    // Two levels of smoothed aggregation on the 7-point Laplacian.
    let a: CsrMatrix<f64> = generate::poisson_7(12).unwrap();
    let p: CsrMatrix<f64> = generate::sa_prolongator(12).unwrap();
    let coarse = backend.ptap(&a, &p).unwrap();
    check(&coarse, &p.transpose().unwrap(), &a, &p);
    let p2: CsrMatrix<f64> = generate::sa_prolongator(4).unwrap();
    assert_eq!(coarse.nrows(), p2.nrows());
    let coarser = backend.ptap(&coarse, &p2).unwrap();
    check(&coarser, &p2.transpose().unwrap(), &coarse, &p2);
}

/// `m` with each row's entries in reverse order.
fn reversed_rows(m: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    let (mut cols, mut vals) = (m.col_indices().to_vec(), m.values().to_vec());
    for w in m.row_offsets().windows(2) {
        cols[w[0]..w[1]].reverse();
        vals[w[0]..w[1]].reverse();
    }
    CsrMatrix::new(m.nrows(), m.ncols(), m.row_offsets().to_vec(), cols, vals).unwrap()
}

fn ptap_of_unsorted_operands(backend: &Backend) {
    // Rows given unsorted (as a user's assembly may leave them): the
    // products without a plan and with one sort C's rows alike.
    let (a, p): (CsrMatrix<f64>, CsrMatrix<f64>) = (
        generate::poisson_7(9).unwrap(),
        generate::sa_prolongator(9).unwrap(),
    );
    let (ua, up) = (reversed_rows(&a), reversed_rows(&p));
    assert!(!ua.is_sorted() && !up.is_sorted());
    let pt = p.transpose().unwrap();
    check(&backend.ptap(&ua, &up).unwrap(), &pt, &a, &p);
    let (plan, c) = backend.galerkin(None, &ua, &up).unwrap();
    check(&c, &pt, &a, &p);
    check(&plan.numeric(backend, &ua).unwrap(), &pt, &a, &p);
    let r = reversed_rows(&generate::uniform(40, a.nrows(), 9, 5).unwrap());
    check(&backend.rap(&r, &ua, &up).unwrap(), &r, &a, &p);
}

fn rap_of_rectangular_random_matrices(backend: &Backend) {
    let r: CsrMatrix<f64> = generate::uniform(90, 300, 7, 1).unwrap();
    let a: CsrMatrix<f64> = generate::uniform(300, 250, 40, 2).unwrap();
    let p: CsrMatrix<f64> = generate::uniform(250, 60, 3, 3).unwrap();
    let (plan, c) = backend.galerkin(Some(r.view()), &a, &p).unwrap();
    assert_eq!(plan.nnz(), c.nnz());
    check(&c, &r, &a, &p);
    check(&backend.rap(&r, &a, &p).unwrap(), &r, &a, &p);
}

fn resetup_reruns_the_numeric_phases(backend: &Backend) {
    let a: CsrMatrix<f64> = generate::poisson_7(10).unwrap();
    let p: CsrMatrix<f64> = generate::sa_prolongator(10).unwrap();
    let (plan, _) = backend.galerkin(None, &a, &p).unwrap();
    assert_eq!(plan.backend(), backend.name());
    let new_a = a.map(|v| 0.5 * v + 0.25);
    let c = plan.numeric(backend, &new_a).unwrap();
    check(&c, &p.transpose().unwrap(), &new_a, &p);
    // Only C's values, into room for them: those of the C returned.
    let newer_a = a.map(|v| 2.0 - v);
    let mut values = vec![f64::NAN; plan.nnz()];
    plan.numeric_values(backend, &newer_a, &mut values).unwrap();
    let refilled = CsrMatrix::new(
        c.nrows(),
        c.ncols(),
        c.row_offsets().to_vec(),
        c.col_indices().to_vec(),
        values,
    )
    .unwrap();
    check(&refilled, &p.transpose().unwrap(), &newer_a, &p);
    let e = plan
        .numeric_values(backend, &newer_a, &mut vec![0.0; plan.nnz() - 1])
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("has {} entries", plan.nnz())), "{e}");
    let offsets = plan
        .a_row_offsets()
        .expect("a plan from the host keeps A's offsets");
    assert_eq!(offsets, a.row_offsets());
    // Another structure: refused, naming A.
    let other: CsrMatrix<f64> = generate::erdos_renyi(a.nrows(), 7, 4).unwrap();
    let e = plan.numeric(backend, &other).unwrap_err().to_string();
    assert!(
        e.contains("A is not the matrix the Galerkin plan was built for"),
        "{e}"
    );
    let e = plan
        .numeric_values(backend, &other, &mut vec![0.0; plan.nnz()])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("A is not the matrix the Galerkin plan was built for"),
        "{e}"
    );
    if backend.name() != "cpu" {
        let cpu = Backend::Cpu(spgemm::CpuBackend::new());
        let e = plan.numeric(&cpu, &a).unwrap_err().to_string();
        assert!(
            e.contains("built by the") && e.contains("cpu backend"),
            "{e}"
        );
    }
}

fn mismatched_operands_are_errors(backend: &Backend) {
    let a: CsrMatrix<f64> = generate::erdos_renyi(20, 3, 1).unwrap();
    let p: CsrMatrix<f64> = generate::uniform(21, 5, 2, 2).unwrap();
    let e = backend.ptap(&a, &p).unwrap_err().to_string();
    assert!(e.contains("A is 20x20 but B is 21x5"), "{e}");
    let p: CsrMatrix<f64> = generate::uniform(20, 5, 2, 2).unwrap();
    let r: CsrMatrix<f64> = generate::uniform(5, 19, 2, 3).unwrap();
    let e = backend
        .galerkin(Some(r.view()), &a, &p)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("A is 5x19 but B is 20x20"), "{e}");
    let e = backend.rap(&r, &a, &p).unwrap_err().to_string();
    assert!(e.contains("A is 5x19 but B is 20x20"), "{e}");
}

fn transposed_operands(backend: &Backend) {
    let a: CsrMatrix<f64> = generate::uniform(70, 40, 6, 5).unwrap();
    let b: CsrMatrix<f64> = generate::uniform(70, 55, 9, 6).unwrap();
    let at = a.transpose().unwrap();
    let c = backend.multiply_transposed(&a, &b, Transposed::A).unwrap();
    check(&c, &at, &b, &eye(55));
    let b2: CsrMatrix<f64> = generate::uniform(33, 40, 5, 7).unwrap();
    let c = backend.multiply_transposed(&a, &b2, Transposed::B).unwrap();
    check(&c, &a, &b2.transpose().unwrap(), &eye(33));
    let b3: CsrMatrix<f64> = generate::uniform(25, 70, 8, 8).unwrap();
    let c = backend
        .multiply_transposed(&a, &b3, Transposed::Both)
        .unwrap();
    check(&c, &at, &b3.transpose().unwrap(), &eye(25));
    let e = backend
        .multiply_transposed(&a, &b2, Transposed::A)
        .unwrap_err()
        .to_string();
    assert!(e.contains("A is 40x70 but B is 33x40"), "{e}");
}

/// The `n×n` identity.
fn eye(n: usize) -> CsrMatrix<f64> {
    CsrMatrix::new(
        n,
        n,
        (0..=n).collect(),
        (0..n as u32).collect(),
        vec![1.0; n],
    )
    .unwrap()
}
