//! Products reduced to one scalar (`Backend::reduce_spec`): `⊕` over the
//! entries of `C⟨M⟩ = A ⊕.⊗ op(B)` against the reference's C reduced on
//! the host, on every backend — on a GPU under a structural mask the dot
//! products are reduced on the device and C is never formed. Every
//! semiring, both masks, B given and transposed, long dot products (a
//! block each, past the list's room too), empty and all-missed masks
//! (`⊕`'s identity), integers, and triangle counts against SNAP's.

use crate::common;
use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{
    generate, reference, Backend, BackendKind, CpuBackend, CsrMatrix, Scalar, Transposed,
};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut trials = Vec::new();
    for (kind, name) in [
        (BackendKind::Cpu, "cpu"),
        (BackendKind::Cuda, "cuda"),
        (BackendKind::Hip, "hip"),
    ] {
        let backend = move || match kind {
            BackendKind::Cpu => Backend::Cpu(CpuBackend::with_threads(3).unwrap()),
            _ => Backend::select(kind).unwrap().0,
        };
        let cases: [Case; 4] = [
            ("every_semiring_and_mask", every_semiring_and_mask),
            ("long_dot_products", long_dot_products),
            ("identity_where_nothing_meets", identity_where_nothing_meets),
            ("triangles_and_integer_counts", triangles_and_integer_counts),
        ];
        for (case, run) in cases {
            trials.push(common::trial(
                kind,
                format!("{name}::reduced::{case}"),
                move || run(&backend()),
            ));
        }
    }
    trials
}

/// A named case, run on one backend.
type Case = (&'static str, fn(&Backend));

/// `reduce_spec` on `backend` against the reference's C, formed with B
/// (transposed first where `t` asks) and reduced on the host: exactly,
/// but within rounding for the `plus_times` sums (their order differs).
fn check<T: Scalar>(
    backend: &Backend,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    spec: &ProductSpec<'_, T>,
    t: Option<Transposed>,
    what: &str,
) {
    let formed = t.map(|_| b.transpose().unwrap());
    let want =
        reference::multiply_spec(a.view(), formed.as_ref().unwrap_or(b).view(), spec).unwrap();
    let want = spec.semiring.reduce(want.values());
    let got = backend.reduce_spec(a, b, spec, t).unwrap();
    let (x, y) = (got.to_f64(), want.to_f64());
    let close = x == y
        || (spec.semiring == Semiring::PlusTimes && (x - y).abs() <= 1e-10 * (1.0 + y.abs()));
    assert!(close, "{what}: {got} against {want}");
}

fn every_semiring_and_mask(backend: &Backend) {
    // A 300 × 170, Bᵀ 410 × 170 (rows longer than a warp, negative
    // values); masks of 3 entries a row and of 60, either complemented,
    // and none.
    let a: CsrMatrix<f64> = generate::uniform(300, 170, 12, 61).unwrap();
    let bt: CsrMatrix<f64> = generate::uniform(410, 170, 40, 62)
        .unwrap()
        .map(|v: f64| v - 0.5);
    let b = bt.transpose().unwrap();
    let masks: [CsrMatrix<f64>; 2] = [
        generate::uniform(300, 410, 3, 63).unwrap(),
        generate::uniform(300, 410, 60, 64).unwrap(),
    ];
    for ring in Semiring::ALL {
        let spec = ProductSpec::new().semiring(ring);
        check(backend, &a, &b, &spec, None, &format!("{ring} unmasked"));
        for (m, complement) in masks.iter().flat_map(|m| [(m, false), (m, true)]) {
            let spec = ProductSpec::new().semiring(ring).mask(m.view(), complement);
            let what = format!("{ring}, mask of {}, complement {complement}", m.nnz());
            check(
                backend,
                &a,
                &bt,
                &spec,
                Some(Transposed::B),
                &format!("{what}, Bᵀ given"),
            );
            check(backend, &a, &b, &spec, None, &what);
        }
    }
    // Pruned: C formed, pruned and reduced.
    let spec = ProductSpec::new()
        .mask(masks[0].view(), false)
        .prune_below(0.5);
    check(backend, &a, &b, &spec, None, "pruned");
}

/// Dot products whose shorter side holds hundreds of entries (on a GPU a
/// block each from a list of room 65,536: 78,000 such entries overflow it
/// and the rest take the segments' path), beside short ones.
fn long_dot_products(backend: &Backend) {
    let a: CsrMatrix<f64> = generate::uniform(260, 3000, 700, 71).unwrap();
    let bt: CsrMatrix<f64> = generate::uniform(300, 3000, 700, 74)
        .unwrap()
        .map(|v: f64| v - 0.5);
    let full = CsrMatrix::new(
        260,
        300,
        (0..=260).map(|i| i * 300).collect(),
        (0..260).flat_map(|_| 0..300u32).collect(),
        vec![1.0; 260 * 300],
    )
    .unwrap();
    let sparse: CsrMatrix<f64> = generate::uniform(260, 300, 5, 75).unwrap();
    for ring in [Semiring::PlusTimes, Semiring::MinPlus, Semiring::PlusPair] {
        for m in [&full, &sparse] {
            let spec = ProductSpec::new().semiring(ring).mask(m.view(), false);
            let what = format!("{ring}, mask of {}", m.nnz());
            check(backend, &a, &bt, &spec, Some(Transposed::B), &what);
        }
    }
}

fn identity_where_nothing_meets(backend: &Backend) {
    // B's columns 0..50 are empty: a mask inside them meets nothing, and
    // an empty mask holds nothing; the reduction is ⊕'s identity (+∞ for
    // min, −∞ for max, 0 for plus and or).
    let a: CsrMatrix<f64> = generate::uniform(120, 80, 6, 81).unwrap();
    let right: CsrMatrix<f64> = generate::uniform(80, 150, 9, 82).unwrap();
    let (k, n, offsets, cols, vals) = right.into_parts();
    let b = CsrMatrix::new(
        k,
        n + 50,
        offsets,
        cols.iter().map(|c| c + 50).collect(),
        vals,
    )
    .unwrap();
    let missed: CsrMatrix<f64> = generate::uniform(120, 50, 4, 83).unwrap();
    let missed = CsrMatrix::new(
        120,
        200,
        missed.row_offsets().to_vec(),
        missed.col_indices().to_vec(),
        missed.values().to_vec(),
    )
    .unwrap();
    let empty = CsrMatrix::<f64>::zeros(120, 200).unwrap();
    for ring in Semiring::ALL {
        for (m, what) in [(&missed, "missed"), (&empty, "empty")] {
            let spec = ProductSpec::new().semiring(ring).mask(m.view(), false);
            let got = backend.reduce_spec(&a, &b, &spec, None).unwrap();
            assert_eq!(got, ring.identity::<f64>(), "{ring}, {what} mask");
            check(
                backend,
                &a,
                &b,
                &spec,
                None,
                &format!("{ring}, {what} mask"),
            );
        }
    }
}

fn triangles_and_integer_counts(backend: &Backend) {
    // Σ C⟨L⟩, C = L plus.pair Lᵀ, from L alone: SNAP's counts for a
    // collaboration network and Facebook's ego networks combined (an
    // independent count); in i64 and i32 too.
    for (graph, triangles) in [("ca-GrQc", 48_260i64), ("ego-Facebook", 1_612_010)] {
        let (l, _) = crate::semirings::lower_and_upper(graph);
        let spec = ProductSpec::new()
            .semiring(Semiring::PlusPair)
            .mask(l.view(), false);
        let got = backend
            .reduce_spec(&l, &l, &spec, Some(Transposed::B))
            .unwrap();
        assert_eq!(got, triangles as f64, "{graph}");
        let l64: CsrMatrix<i64> = l.map(|v: f64| v as i64);
        let spec = ProductSpec::new()
            .semiring(Semiring::PlusPair)
            .mask(l64.view(), false);
        let got = backend
            .reduce_spec(&l64, &l64, &spec, Some(Transposed::B))
            .unwrap();
        assert_eq!(got, triangles, "{graph} in i64");
        let l32: CsrMatrix<i32> = l.map(|v: f64| v as i32);
        let spec = ProductSpec::new()
            .semiring(Semiring::PlusPair)
            .mask(l32.view(), false);
        let got = backend
            .reduce_spec(&l32, &l32, &spec, Some(Transposed::B))
            .unwrap();
        assert_eq!(i64::from(got), triangles, "{graph} in i32");
    }
}
