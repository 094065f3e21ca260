//! Products of transposed operands with a semiring, mask or pruning
//! (`Backend::multiply_spec_transposed`, `CpuBackend::multiply_spec_transposed_b`)
//! against the reference on the transposes formed first: the CPU's dot
//! products read a transposed B where it lies; every backend, every
//! semiring, both masks, pruning of rows and columns, Bᵀ's rows unsorted,
//! and shapes at fault.

use crate::common;
use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{generate, reference, Backend, BackendKind, CpuBackend, CsrMatrix, Transposed};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut trials = vec![
        common::trial(
            BackendKind::Cpu,
            "cpu::transposed::given_b_every_semiring_and_mask".into(),
            || given_b_every_semiring_and_mask(&Backend::Cpu(CpuBackend::with_threads(3).unwrap())),
        ),
        common::trial(
            BackendKind::Cpu,
            "cpu::transposed::triangles_of_social_graphs_from_l_alone".into(),
            || triangles_of_social_graphs_from_l_alone(&Backend::Cpu(CpuBackend::new())),
        ),
        common::trial(
            BackendKind::Cpu,
            "cpu::transposed::unsorted_rows_of_the_given_transpose".into(),
            unsorted_rows_of_the_given_transpose,
        ),
        common::trial(
            BackendKind::Cpu,
            "cpu::transposed::shapes_at_fault_are_one_line_errors".into(),
            shapes_at_fault_are_one_line_errors,
        ),
        common::trial(
            BackendKind::Cpu,
            "cpu::transposed::few_rows_and_unsorted_transposes".into(),
            || few_rows_and_unsorted_transposes(&Backend::Cpu(CpuBackend::new())),
        ),
        common::trial(
            BackendKind::Cpu,
            "cpu::transposed::long_dot_products".into(),
            || long_dot_products(&Backend::Cpu(CpuBackend::new())),
        ),
    ];
    for (kind, name) in [(BackendKind::Cuda, "cuda"), (BackendKind::Hip, "hip")] {
        trials.push(common::trial(
            kind,
            format!("{name}::transposed::given_b_every_semiring_and_mask"),
            move || given_b_every_semiring_and_mask(&Backend::select(kind).unwrap().0),
        ));
        trials.push(common::trial(
            kind,
            format!("{name}::transposed::triangles_of_social_graphs_from_l_alone"),
            move || triangles_of_social_graphs_from_l_alone(&Backend::select(kind).unwrap().0),
        ));
        trials.push(common::trial(
            kind,
            format!("{name}::transposed::few_rows_and_unsorted_transposes"),
            move || few_rows_and_unsorted_transposes(&Backend::select(kind).unwrap().0),
        ));
        trials.push(common::trial(
            kind,
            format!("{name}::transposed::long_dot_products"),
            move || long_dot_products(&Backend::select(kind).unwrap().0),
        ));
    }
    trials
}

/// `op(A) ⊕.⊗ op(B)` on `backend` against the reference on the formed
/// transposes: exactly on the CPU (each entry's products summed in
/// increasing k either way), within rounding for `plus_times` on a GPU.
fn check(
    backend: &Backend,
    a: &CsrMatrix<f64>,
    b: &CsrMatrix<f64>,
    spec: &ProductSpec<'_, f64>,
    t: Transposed,
    what: &str,
) {
    let formed_a = matches!(t, Transposed::A | Transposed::Both).then(|| a.transpose().unwrap());
    let formed_b = matches!(t, Transposed::B | Transposed::Both).then(|| b.transpose().unwrap());
    let (fa, fb) = (
        formed_a.as_ref().unwrap_or(a),
        formed_b.as_ref().unwrap_or(b),
    );
    let want = reference::multiply_spec(fa.view(), fb.view(), spec).unwrap();
    let got = backend.multiply_spec_transposed(a, b, spec, t).unwrap();
    same(&got, &want, spec.semiring, what);
}

/// `got` is `want`: the same structure, values equal (within rounding for
/// `plus_times`).
fn same(got: &CsrMatrix<f64>, want: &CsrMatrix<f64>, ring: Semiring, what: &str) {
    assert_eq!(got.row_offsets(), want.row_offsets(), "{what}: row offsets");
    assert_eq!(got.col_indices(), want.col_indices(), "{what}: columns");
    for (p, (x, y)) in got.values().iter().zip(want.values()).enumerate() {
        let close =
            x == y || (ring == Semiring::PlusTimes && (x - y).abs() <= 1e-12 * (1.0 + y.abs()));
        assert!(close, "{what}: value {p}: {x} against {y}");
    }
}

/// Masked dot products whose shorter side holds hundreds of entries (on a
/// GPU a block each from a list, past 256; the list's room is 65,536
/// entries, so a mask of 78,000 such entries overflows it and the rest take
/// the segments' path), mixed with short ones, B given transposed and as
/// B: A 260 × 3,000 with rows of 700 entries (one of 2,500, one of 1),
/// Bᵀ 300 × 3,000 with rows of 700; a full mask and one of 5 entries a
/// row.
fn long_dot_products(backend: &Backend) {
    let mut a: CsrMatrix<f64> = generate::uniform(260, 3000, 700, 71).unwrap();
    let hub: CsrMatrix<f64> = generate::uniform(1, 3000, 2500, 72).unwrap();
    let one: CsrMatrix<f64> = generate::uniform(1, 3000, 1, 73).unwrap();
    a = stacked(&[&hub, &a, &one]);
    let bt: CsrMatrix<f64> = generate::uniform(300, 3000, 700, 74)
        .unwrap()
        .map(|v: f64| v - 0.5);
    let b = bt.transpose().unwrap();
    let n = a.nrows();
    let full = CsrMatrix::new(
        n,
        300,
        (0..=n).map(|i| i * 300).collect(),
        (0..n).flat_map(|_| 0..300u32).collect(),
        vec![1.0; n * 300],
    )
    .unwrap();
    let sparse: CsrMatrix<f64> = generate::uniform(n, 300, 5, 75).unwrap();
    for ring in [Semiring::PlusTimes, Semiring::MinPlus, Semiring::PlusPair] {
        for m in [&full, &sparse] {
            let spec = ProductSpec::new().semiring(ring).mask(m.view(), false);
            let what = format!("{ring}, mask of {} entries", m.nnz());
            check(
                backend,
                &a,
                &bt,
                &spec,
                Transposed::B,
                &format!("{what}, Bᵀ given"),
            );
            let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
            same(
                &backend.multiply_spec(&a, &b, &spec).unwrap(),
                &want,
                ring,
                &what,
            );
        }
    }
}

/// The rows of `parts`, stacked.
fn stacked(parts: &[&CsrMatrix<f64>]) -> CsrMatrix<f64> {
    let mut offsets = vec![0];
    let (mut cols, mut vals) = (Vec::new(), Vec::new());
    for p in parts {
        for i in 0..p.nrows() {
            let (c, v) = p.row(i);
            cols.extend_from_slice(c);
            vals.extend_from_slice(v);
            offsets.push(cols.len());
        }
    }
    CsrMatrix::new(offsets.len() - 1, parts[0].ncols(), offsets, cols, vals).unwrap()
}

fn given_b_every_semiring_and_mask(backend: &Backend) {
    // A 300 × 170, B given as Bᵀ 410 × 170 (rows longer than a warp,
    // negative values); masks of 3 entries a row (dot products) and of 60
    // (row-wise), either complemented.
    let a: CsrMatrix<f64> = generate::uniform(300, 170, 12, 61).unwrap();
    let bt: CsrMatrix<f64> = generate::uniform(410, 170, 40, 62)
        .unwrap()
        .map(|v: f64| v - 0.5);
    let masks = [
        generate::uniform(300, 410, 3, 63).unwrap(),
        generate::uniform(300, 410, 60, 64).unwrap(),
    ];
    for ring in Semiring::ALL {
        let what = format!("{ring} unmasked");
        check(
            backend,
            &a,
            &bt,
            &ProductSpec::new().semiring(ring),
            Transposed::B,
            &what,
        );
        for (m, complement) in masks.iter().flat_map(|m| [(m, false), (m, true)]) {
            let spec = ProductSpec::new().semiring(ring).mask(m.view(), complement);
            let what = format!(
                "{ring}, mask of {} entries, complement {complement}",
                m.nnz()
            );
            check(backend, &a, &bt, &spec, Transposed::B, &what);
        }
    }
    // Pruned rows, then columns, under the sparse mask.
    let m = &masks[0];
    let spec = ProductSpec::new()
        .mask(m.view(), false)
        .prune_below(0.5)
        .keep(1);
    check(backend, &a, &bt, &spec, Transposed::B, "pruned rows");
    check(
        backend,
        &a,
        &bt,
        &spec.prune_columns(),
        Transposed::B,
        "pruned columns",
    );
    // Aᵀ (170 × 300 given) and both.
    let at = a.transpose().unwrap();
    let spec = ProductSpec::new()
        .semiring(Semiring::MinPlus)
        .mask(m.view(), false);
    check(backend, &at, &bt, &spec, Transposed::Both, "Aᵀ·Bᵀ");
    check(
        backend,
        &at,
        &bt.transpose().unwrap(),
        &spec,
        Transposed::A,
        "Aᵀ·B",
    );
}

fn triangles_of_social_graphs_from_l_alone(backend: &Backend) {
    // C⟨L⟩ = L plus.pair Lᵀ from L alone, summed: the triangles SNAP lists
    // for a collaboration network and for Facebook's ego networks
    // combined (an independent count).
    for (graph, triangles) in [("ca-GrQc", 48_260.0), ("ego-Facebook", 1_612_010.0)] {
        let (l, _) = crate::semirings::lower_and_upper(graph);
        let spec = ProductSpec::new()
            .semiring(Semiring::PlusPair)
            .mask(l.view(), false);
        let c = backend
            .multiply_spec_transposed(&l, &l, &spec, Transposed::B)
            .unwrap();
        assert_eq!(c.values().iter().sum::<f64>(), triangles, "{graph}");
        check(backend, &l, &l, &spec, Transposed::B, graph);
    }
}

fn unsorted_rows_of_the_given_transpose() {
    // Bᵀ's rows reversed, one repeating a column: no dot products (they
    // need sorted rows), the same C as from B formed.
    let a: CsrMatrix<f64> = generate::uniform(200, 90, 10, 71).unwrap();
    let bt: CsrMatrix<f64> = generate::uniform(150, 90, 20, 72).unwrap();
    let (n, k, offsets, mut cols, mut vals) = bt.into_parts();
    for i in 0..n {
        cols[offsets[i]..offsets[i + 1]].reverse();
        vals[offsets[i]..offsets[i + 1]].reverse();
    }
    cols[offsets[7] + 1] = cols[offsets[7]];
    let bt = CsrMatrix::new(n, k, offsets, cols, vals).unwrap();
    let m: CsrMatrix<f64> = generate::uniform(200, 150, 2, 73).unwrap();
    let cpu = Backend::Cpu(CpuBackend::with_threads(2).unwrap());
    for ring in [Semiring::PlusTimes, Semiring::PlusPair, Semiring::MaxPlus] {
        let spec = ProductSpec::new().semiring(ring).mask(m.view(), false);
        check(
            &cpu,
            &a,
            &bt,
            &spec,
            Transposed::B,
            &format!("{ring}, Bᵀ unsorted"),
        );
    }
}

fn shapes_at_fault_are_one_line_errors() {
    let a: CsrMatrix<f64> = generate::uniform(20, 9, 3, 81).unwrap();
    let bt: CsrMatrix<f64> = generate::uniform(30, 8, 3, 82).unwrap();
    let cpu = Backend::Cpu(CpuBackend::new());
    let e = cpu
        .multiply_spec_transposed(&a, &bt, &ProductSpec::new(), Transposed::B)
        .unwrap_err()
        .to_string();
    assert!(e.contains("dimension mismatch") && !e.contains('\n'), "{e}");
    let bt: CsrMatrix<f64> = generate::uniform(30, 9, 3, 83).unwrap();
    let m: CsrMatrix<f64> = generate::uniform(20, 9, 3, 84).unwrap();
    let spec = ProductSpec::new().mask(m.view(), false);
    let e = cpu
        .multiply_spec_transposed(&a, &bt, &spec, Transposed::B)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("mask") && e.contains("20") && e.contains("30") && !e.contains('\n'),
        "{e}"
    );
}

fn few_rows_and_unsorted_transposes(backend: &Backend) {
    // One row of A (a breadth-first search's step: on a GPU C's grid is
    // small and B is formed from Bᵀ on the device for the grid's push),
    // and Bᵀ with its rows reversed (sorted first on a GPU), every
    // semiring.
    let bt: CsrMatrix<f64> = generate::uniform(2000, 700, 9, 91)
        .unwrap()
        .map(|v: f64| v - 0.5);
    let row: CsrMatrix<f64> = generate::uniform(1, 700, 40, 92).unwrap();
    let seen: CsrMatrix<f64> = generate::uniform(1, 2000, 300, 93).unwrap();
    let (n, k, offsets, mut cols, mut vals) = bt.clone().into_parts();
    for i in 0..n {
        cols[offsets[i]..offsets[i + 1]].reverse();
        vals[offsets[i]..offsets[i + 1]].reverse();
    }
    let reversed = CsrMatrix::new(n, k, offsets, cols, vals).unwrap();
    let a: CsrMatrix<f64> = generate::uniform(100, 700, 8, 94).unwrap();
    let m: CsrMatrix<f64> = generate::uniform(100, 2000, 5, 95).unwrap();
    for ring in Semiring::ALL {
        let spec = ProductSpec::new().semiring(ring).mask(seen.view(), false);
        check(
            backend,
            &row,
            &bt,
            &spec,
            Transposed::B,
            &format!("{ring}, one row"),
        );
        let spec = ProductSpec::new().semiring(ring).mask(m.view(), false);
        check(
            backend,
            &a,
            &reversed,
            &spec,
            Transposed::B,
            &format!("{ring}, Bᵀ reversed"),
        );
    }
}
