//! Integer values (`i64`, `i32`) on every backend: the plain product and
//! every semiring, unmasked, masked and complemented, exactly equal to the
//! reference on the same integers, and the reference equal to its own
//! product in `f64` on values small enough for `f64` to hold every sum
//! exactly (an oracle that shares none of the integer code's arithmetic).

use crate::common;
use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{generate, reference, Backend, BackendKind, CsrMatrix, Scalar};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    common::BACKENDS
        .into_iter()
        .flat_map(|(kind, name)| {
            [
                common::trial(
                    kind,
                    format!("{name}::integers::every_semiring_and_mask_in_i64_and_i32"),
                    move || every_semiring_and_mask(kind),
                ),
                common::trial(
                    kind,
                    format!("{name}::integers::sums_past_two_to_the_53"),
                    move || sums_past_f64(kind),
                ),
            ]
        })
        .collect()
}

/// Small integers in −4..=4, zeros included (false for `lor_land`).
fn small_integers(m: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    m.map(|v| (v * 9.0).floor() - 4.0)
}

/// A product's name, A, B and the mask, values integers held in `f64`.
type Operands = (&'static str, CsrMatrix<f64>, CsrMatrix<f64>, CsrMatrix<f64>);

/// The operands: random rectangular rows longer than a warp, R-MAT hubs,
/// and a C wider than the dense accumulators (their hash tables), each
/// with its mask.
fn operands() -> Vec<Operands> {
    let a = small_integers(&generate::uniform(300, 170, 12, 51).unwrap());
    let b = small_integers(&generate::uniform(170, 410, 40, 52).unwrap());
    let m: CsrMatrix<f64> = generate::uniform(300, 410, 60, 53).unwrap();
    let g = small_integers(&generate::rmat(11, 16, 54).unwrap());
    let short = small_integers(&generate::uniform(100, 1000, 20, 55).unwrap());
    let wide = small_integers(&generate::uniform(1000, 70_000, 30, 56).unwrap());
    let mw: CsrMatrix<f64> = generate::uniform(100, 70_000, 600, 57).unwrap();
    vec![
        ("random", a, b, m),
        ("R-MAT", g.clone(), g.clone(), g),
        ("wide", short, wide, mw),
    ]
}

fn every_semiring_and_mask(kind: BackendKind) {
    let (backend, _) = Backend::select(kind).unwrap();
    for (name, a, b, m) in operands() {
        check_type::<i64>(&backend, name, &a, &b, &m);
        check_type::<i32>(&backend, name, &a, &b, &m);
    }
}

fn check_type<T: Scalar>(
    backend: &Backend,
    name: &str,
    a: &CsrMatrix<f64>,
    b: &CsrMatrix<f64>,
    m: &CsrMatrix<f64>,
) {
    let to = |x: &CsrMatrix<f64>| x.map(|v| T::try_from_f64(v).expect("a small integer"));
    let (ai, bi, mi) = (to(a), to(b), m.map(|_| T::ONE));
    let what = |ring: Semiring, mask: &str| format!("{name} {} {ring} {mask}", T::NAME);
    let plain = backend.multiply(&ai, &bi).unwrap();
    assert_eq!(
        plain,
        reference::multiply(ai.view(), bi.view()).unwrap(),
        "{}",
        what(Semiring::PlusTimes, "plain")
    );
    for ring in Semiring::ALL {
        for (mask, spec_i, spec_f) in [
            (
                "unmasked",
                ProductSpec::new().semiring(ring),
                ProductSpec::new().semiring(ring),
            ),
            (
                "masked",
                ProductSpec::new().semiring(ring).mask(mi.view(), false),
                ProductSpec::new().semiring(ring).mask(m.view(), false),
            ),
            (
                "complemented",
                ProductSpec::new().semiring(ring).mask(mi.view(), true),
                ProductSpec::new().semiring(ring).mask(m.view(), true),
            ),
        ] {
            let want = reference::multiply_spec(ai.view(), bi.view(), &spec_i).unwrap();
            let oracle = reference::multiply_spec(a.view(), b.view(), &spec_f).unwrap();
            assert_eq!(
                want.map(|v| v.to_f64()),
                oracle,
                "reference against f64: {}",
                what(ring, mask)
            );
            assert!(want.nnz() > 0, "{}: C is empty", what(ring, mask));
            let got = backend.multiply_spec(&ai, &bi, &spec_i).unwrap();
            assert_eq!(got, want, "{}", what(ring, mask));
        }
    }
}

/// Sums that `f64` rounds but `i64` holds exactly (2⁵² + 2⁵² + 1 on a
/// row of three products; a row of 100 products), plain and by min, max
/// and pair; an `i32` sum past 2³⁰.
fn sums_past_f64(kind: BackendKind) {
    let (backend, _) = Backend::select(kind).unwrap();
    let big = 1i64 << 52;
    // Row 0: three products 2⁵², 2⁵², 1; row 1: 100 products of 2⁴⁶ + 1.
    let mut rows = vec![0, 0, 0];
    let mut cols = vec![0u32, 1, 2];
    let mut vals = vec![big, big, 1];
    for k in 0..100u32 {
        rows.push(1);
        cols.push(3 + k);
        vals.push((1 << 46) + 1);
    }
    let a = CsrMatrix::from_triplets(2, 103, &rows, &cols, &vals).unwrap();
    let b = CsrMatrix::from_triplets(
        103,
        1,
        &(0..103).collect::<Vec<_>>(),
        &[0u32; 103],
        &[1i64; 103],
    )
    .unwrap();
    let c = backend.multiply(&a, &b).unwrap();
    assert_eq!(c.values(), &[(1 << 53) + 1, 100 * ((1 << 46) + 1)]);
    for (ring, want) in [
        (Semiring::MinPlus, [2, (1 << 46) + 2]),
        (Semiring::MaxPlus, [big + 1, (1 << 46) + 2]),
        (Semiring::PlusPair, [3, 100]),
    ] {
        let spec = ProductSpec::new().semiring(ring);
        let c = backend.multiply_spec(&a, &b, &spec).unwrap();
        assert_eq!(c.values(), &want, "{ring}");
    }
    // i32: 3 · (2¹⁵ − 1) · 2¹⁴ = 1,610,563,584 (past 2³⁰).
    let v32: Vec<i32> = (0..vals.len())
        .map(|p| if p < 3 { (1 << 15) - 1 } else { 1 })
        .collect();
    let a32 = CsrMatrix::from_triplets(2, 103, &rows, &cols, &v32).unwrap();
    let b32 = b.map(|_| 1i32 << 14);
    let c = backend.multiply(&a32, &b32).unwrap();
    assert_eq!(c.values(), &[3 * ((1 << 29) - (1 << 14)), 100 << 14]);
}
