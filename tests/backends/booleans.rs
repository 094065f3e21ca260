//! Boolean matrices (`Bool`) on every backend against the reference
//! computed on booleans (OR for `+`, AND for `·`), and the reference
//! against an independent count in `i32`: every semiring, unmasked, under a
//! mask and its complement, pruned (threshold, `k` per row and per column),
//! reduced to one value, with stored false values; the real matrices of
//! the repository (true where positive) and seeded random ones longer than
//! a warp; on a GPU the engines' own calls refuse booleans by name. On the
//! CPU also `.npz` and `.mtx` files written and read back.

use crate::common;
use spgemm::semiring::{ProductSpec, Prune, Semiring};
use spgemm::{generate, reference, Backend, BackendKind, Bool, CsrMatrix, Transposed};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut trials = Vec::new();
    for (kind, name) in common::BACKENDS {
        trials.push(common::trial(
            kind,
            format!("{name}::booleans::every_semiring_mask_and_pruning"),
            move || every_semiring_mask_and_pruning(&Backend::select(kind).unwrap().0),
        ));
        trials.push(common::trial(
            kind,
            format!("{name}::booleans::real_matrices"),
            move || real_matrices(&Backend::select(kind).unwrap().0),
        ));
    }
    trials.push(common::trial(
        BackendKind::Cpu,
        "cpu::booleans::files_round_trip".into(),
        files_round_trip,
    ));
    for (kind, name) in [(BackendKind::Cuda, "cuda"), (BackendKind::Hip, "hip")] {
        trials.push(common::trial(
            kind,
            format!("{name}::booleans::engines_refuse_them"),
            move || engines_refuse_them(&Backend::select(kind).unwrap().0),
        ));
    }
    trials
}

/// `m` as booleans, true where above `cut` (the others stored false).
fn bits(m: &CsrMatrix<f64>, cut: f64) -> CsrMatrix<Bool> {
    m.map(|v| Bool::new(v > cut))
}

/// The plain product counted in `i32` over the true entries: true where
/// some product of two trues meets (`lor_land`), independently of `Bool`'s
/// arithmetic.
fn counted(a: &CsrMatrix<Bool>, b: &CsrMatrix<Bool>) -> CsrMatrix<Bool> {
    let i = |m: &CsrMatrix<Bool>| m.map(|v| i32::from(v.get()));
    reference::multiply(&i(a), &i(b))
        .unwrap()
        .map(|v| Bool::new(v > 0))
}

fn every_semiring_mask_and_pruning(backend: &Backend) {
    let a = bits(&generate::uniform::<f64>(260, 150, 14, 51).unwrap(), 0.8);
    let b = bits(&generate::uniform::<f64>(150, 330, 10, 52).unwrap(), 0.8);
    let g = bits(&generate::rmat::<f64>(9, 10, 53).unwrap(), 0.7);
    let m = bits(&generate::uniform::<f64>(260, 330, 40, 54).unwrap(), 0.0);
    // Generated values lie in [0.5, 1.5): about a third stored false.
    for m in [&a, &b, &g] {
        assert!(m.values().iter().any(|v| !v.get()), "stored false values");
    }
    assert_eq!(
        reference::multiply(&a, &b).unwrap(),
        counted(&a, &b),
        "the reference's plus_times on booleans"
    );
    assert_eq!(backend.multiply(&a, &b).unwrap(), counted(&a, &b), "plain");
    assert_eq!(backend.multiply(&g, &g).unwrap(), counted(&g, &g), "R-MAT");
    let prunes = [
        Prune::default(),
        Prune {
            below: Some(Bool::TRUE),
            keep: None,
            columns: false,
        },
        Prune {
            below: None,
            keep: Some(3),
            columns: false,
        },
        Prune {
            below: Some(Bool::TRUE),
            keep: Some(2),
            columns: true,
        },
    ];
    for s in Semiring::ALL {
        for mask in [None, Some(false), Some(true)] {
            for prune in prunes {
                let mut spec = ProductSpec::new().semiring(s);
                if let Some(complement) = mask {
                    spec = spec.mask(m.view(), complement);
                }
                let spec = ProductSpec { prune, ..spec };
                let what = format!("{s:?} mask {mask:?} {prune:?}");
                let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
                let got = backend.multiply_spec(&a, &b, &spec).unwrap();
                assert_eq!(got, want, "{what}");
                // A·Bᵀ with Bᵀ given.
                let bt = b.transpose().unwrap();
                let got = backend
                    .multiply_spec_transposed(&a, &bt, &spec, Transposed::B)
                    .unwrap();
                assert_eq!(got, want, "{what} transposed");
                let total = backend.reduce_spec(&a, &b, &spec, None).unwrap();
                assert_eq!(total, s.reduce(want.values()), "{what} reduced");
            }
        }
    }
}

fn real_matrices(backend: &Backend) {
    for name in common::real_matrices() {
        let a = bits(&common::load::<f64>(&name), 0.0);
        // The larger ones' complemented products are slow on CI's cores.
        if a.nnz() > 100_000 {
            continue;
        }
        let b = common::partner(&a);
        assert_eq!(backend.multiply(&a, &b).unwrap(), counted(&a, &b), "{name}");
        // Square: under A's complement; else A·Aᵀ unmasked.
        let bt = a.transpose().unwrap();
        let (b, spec) = if a.nrows() == a.ncols() {
            (
                &a,
                ProductSpec::new()
                    .semiring(Semiring::MinPlus)
                    .mask(a.view(), true),
            )
        } else {
            (&bt, ProductSpec::new().semiring(Semiring::MinPlus))
        };
        let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
        assert_eq!(
            backend.multiply_spec(&a, b, &spec).unwrap(),
            want,
            "{name} min_plus"
        );
    }
}

fn files_round_trip() {
    let a = bits(&generate::uniform::<f64>(70, 90, 6, 55).unwrap(), 1.0);
    assert!(a.values().iter().any(|v| !v.get()), "stored false values");
    for file in ["bools.npz", "bools.mtx", "bools.mtx.gz"] {
        let path = common::temp_file("booleans", file);
        spgemm::files::write(&path, &a, None).unwrap();
        let back: CsrMatrix<Bool> = spgemm::files::read(&path, &Default::default()).unwrap();
        assert_eq!(back, a, "{file}");
        // Read as integers: 0 and 1.
        let ints: CsrMatrix<i32> = spgemm::files::read(&path, &Default::default()).unwrap();
        assert_eq!(ints, a.map(|v| i32::from(v.get())), "{file} as i32");
    }
    // Values other than 0 and 1 are not booleans: refused by line.
    let path = common::temp_file("booleans", "two.mtx");
    std::fs::write(
        &path,
        "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 1\n2 2 2\n",
    )
    .unwrap();
    let err = spgemm::files::read::<Bool>(&path, &Default::default()).unwrap_err();
    assert!(err.to_string().contains("line 4"), "{err}");
}

#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(unused_variables))]
fn engines_refuse_them(backend: &Backend) {
    let a = bits(&generate::uniform::<f64>(40, 40, 5, 56).unwrap(), 0.5);
    let err: Option<String> = match backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda(m) => m.engines()[0].upload(&a).err().map(|e| e.to_string()),
        #[cfg(feature = "hip")]
        Backend::Hip(m) => m.engines()[0].upload(&a).err().map(|e| e.to_string()),
        _ => None,
    };
    let err = err.expect("a GPU engine refuses booleans");
    assert!(err.contains("do not take bool values"), "{err}");
}
