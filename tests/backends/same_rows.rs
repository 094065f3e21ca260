//! Rows of A with the columns of the row before them, counted once by the
//! GPU's symbolic phase: on each GPU backend, the rows whose count it took
//! from the row before (`PhaseTimes::rows_counted_once`) are exactly those
//! the rule names where the symbolic phase is heavy enough to look for
//! them, and none where it is not or where no row repeats its neighbour;
//! C against the reference each time. The numeric phase computes a few
//! rows of each run together: every semiring, `f32` values and a pruned
//! product (whose kernels take the runs' rows one by one) on the same
//! runs, against the reference.

use crate::common;
use crate::common::conformance::node_blocked;
use spgemm::gpu::PhaseTimes;
use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::verify::check_product;
use spgemm::{reference, Backend, BackendKind, CsrMatrix};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    common::BACKENDS
        .into_iter()
        .filter(|(kind, _)| *kind != BackendKind::Cpu)
        .flat_map(|(kind, name)| {
            [
                common::trial(
                    kind,
                    format!("{name}::same_rows::the_rows_the_rule_names_are_counted_once"),
                    move || the_rows_the_rule_names_are_counted_once(kind),
                ),
                common::trial(
                    kind,
                    format!("{name}::same_rows::runs_under_every_semiring_f32_and_pruning"),
                    move || runs_under_every_semiring_f32_and_pruning(kind),
                ),
            ]
        })
        .collect()
}

/// The runs' rows computed together under every semiring but plus-times,
/// with `f32` values and with a pruned product, against the reference.
fn runs_under_every_semiring_f32_and_pruning(kind: BackendKind) {
    let nodes = node_blocked(10_000, &[3, 3, 1, 40, 2, 0, 6], 2, 101);
    every_semiring_f32_and_pruning(kind, &nodes);
}

/// `a·a` on GPU 0 of `kind` against the reference: under every semiring
/// but plus-times (exact in any order of the sum: compared exactly, on
/// `a`'s values less 1.5), with `f32` values, and pruned to 5 entries a
/// row on whole values (`a`'s times 1000, rounded; `a`'s values from 1 to
/// 2: every sum exact, so the kept entries, ties included, are the
/// reference's).
pub fn every_semiring_f32_and_pruning(kind: BackendKind, a: &CsrMatrix<f64>) {
    let shifted = a.map(|v| v - 1.5);
    let (gpu, _) = Backend::select(kind).unwrap();
    for ring in Semiring::ALL
        .into_iter()
        .filter(|&r| r != Semiring::PlusTimes)
    {
        let spec = ProductSpec::new().semiring(ring);
        let want = reference::multiply_spec(shifted.view(), shifted.view(), &spec).unwrap();
        let got = gpu.multiply_spec(&shifted, &shifted, &spec).unwrap();
        assert_eq!(got, want, "{ring}");
    }
    let single: CsrMatrix<f32> = shifted.map(|v| v as f32);
    let c = gpu.multiply(&single, &single).unwrap();
    if let Err(mismatch) = check_product(&single, &single, &c).expect("reference") {
        panic!("f32: {mismatch}");
    }
    let whole = a.map(|v| (v * 1000.0).round());
    let spec = ProductSpec::new().keep(5);
    let want = reference::multiply_spec(whole.view(), whole.view(), &spec).unwrap();
    let got = gpu.multiply_spec(&whole, &whole, &spec).unwrap();
    assert_eq!(got, want, "pruned");
}

/// The rows the rule marks: every row but the first of each word of 32,
/// not empty, with the columns of the row before in the same order.
fn named_by_the_rule(a: &CsrMatrix<f64>) -> usize {
    (1..a.nrows())
        .filter(|&i| i % 32 != 0 && !a.row(i).0.is_empty() && a.row(i).0 == a.row(i - 1).0)
        .count()
}

fn the_rows_the_rule_names_are_counted_once(kind: BackendKind) {
    // Heavy (2^25 products and more): the runs are looked for.
    let nodes = node_blocked(10_000, &[3, 3, 1, 40, 2, 0, 6], 2, 101);
    let expected = named_by_the_rule(&nodes);
    assert!(
        expected > nodes.nrows() / 2,
        "{expected} of {}",
        nodes.nrows()
    );
    // Light: the same structure on fewer nodes is not looked at.
    let few = node_blocked(200, &[3, 3, 1, 40, 2, 0, 6], 2, 101);
    // Heavy, but no row has the columns of the row before.
    let random = spgemm::generate::uniform::<f64>(60_000, 60_000, 24, 3).unwrap();
    assert_eq!(named_by_the_rule(&random), 0);
    for (name, a, counted) in [
        ("nodes", &nodes, expected),
        ("few nodes", &few, 0),
        ("random", &random, 0),
    ] {
        let (c, times) = timed(kind, a);
        assert_eq!(
            times.rows_counted_once, counted,
            "{name}: rows counted once"
        );
        if let Err(mismatch) = check_product(a, a, &c).expect("reference") {
            panic!("{name}: {mismatch}");
        }
    }
}

/// `a·a` on GPU 0 of `kind`, with its phase times.
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(unused_variables))]
fn timed(kind: BackendKind, a: &CsrMatrix<f64>) -> (CsrMatrix<f64>, PhaseTimes) {
    let (backend, _) = Backend::select(kind).unwrap();
    match &backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda(m) => on_engine(&m.engines()[0], a),
        #[cfg(feature = "hip")]
        Backend::Hip(m) => on_engine(&m.engines()[0], a),
        _ => unreachable!("{kind:?} opened another backend"),
    }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
fn on_engine<D: spgemm::device::Device>(
    e: &spgemm::gpu::GpuEngine<D>,
    a: &CsrMatrix<f64>,
) -> (CsrMatrix<f64>, PhaseTimes) {
    let ga = e.upload(a).unwrap();
    let (c, times) = e.multiply(&ga, &ga).unwrap();
    (e.download(&c).unwrap(), times)
}
