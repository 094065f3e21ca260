//! Conversions with sprs, faer and nalgebra-sparse: every real matrix of
//! `data/matrices` round-trips exactly through each, borrowed views
//! multiply to the same C as our own matrices while reading the other
//! library's arrays in place, and what does not fit is an error.

use crate::common;

use faer::sparse::{SparseRowMat, SymbolicSparseRowMat};
use spgemm::error::Error;
use spgemm::interop::CsrCow;
use spgemm::{Backend, BackendKind, CsrMatrix, CsrView};

/// The real matrices, rows sorted (the other libraries require it), and a
/// random rectangular one larger than a warp.
fn matrices() -> Vec<(String, CsrMatrix<f64>)> {
    let mut all: Vec<_> = common::real_matrices()
        .into_iter()
        .map(|n| {
            let a: CsrMatrix<f64> = common::load(&n);
            (n, a.sort_and_sum_duplicates())
        })
        .collect();
    let r = spgemm::generate::uniform::<f64>(300, 170, 9, 7).unwrap();
    all.push(("uniform 300x170".into(), r));
    all
}

fn product(a: CsrView<'_, f64>, b: CsrView<'_, f64>) -> CsrMatrix<f64> {
    Backend::select(BackendKind::Cpu)
        .unwrap()
        .0
        .multiply(a, b)
        .unwrap()
}

#[test]
fn sprs_round_trips_and_its_views_are_read_in_place() {
    for (name, a) in matrices() {
        let ours: sprs::CsMatI<f64, u32, usize> = a.clone().try_into().unwrap();
        let view = CsrView::try_from(&ours).unwrap();
        assert_eq!(
            view.col_indices().as_ptr(),
            ours.indices().as_ptr(),
            "{name}"
        );
        let b = common::partner(&a);
        assert_eq!(
            product(view, b.view()),
            product(a.view(), b.view()),
            "{name}"
        );
        assert_eq!(CsrMatrix::try_from(ours).unwrap(), a, "{name}");
        let wide = sprs::CsMat::<f64>::try_from(&a).unwrap();
        assert_eq!(
            CsrMatrix::try_from(wide.to_csc()).unwrap(),
            a,
            "{name} through CSC"
        );
        assert_eq!(CsrMatrix::try_from(wide).unwrap(), a, "{name}");
    }
    let csc = sprs::CsMatI::<f64, u32, usize>::eye_csc(3);
    assert!(matches!(
        CsrView::try_from(csc.view()),
        Err(Error::StructureMismatch(_))
    ));
}

#[test]
fn faer_round_trips_with_either_index_type_and_borrows_what_it_can() {
    for (name, a) in matrices() {
        let b = common::partner(&a);
        let want = product(a.view(), b.view());
        let narrow: SparseRowMat<u32, f64> = a.clone().try_into().unwrap();
        let cow = CsrCow::try_from(narrow.as_ref()).unwrap();
        assert_eq!(
            cow.view().col_indices().as_ptr(),
            narrow.symbolic().col_idx().as_ptr()
        );
        assert_eq!(product(cow.view(), b.view()), want, "{name}");
        assert_eq!(CsrMatrix::try_from(narrow).unwrap(), a, "{name}");
        let wide: SparseRowMat<usize, f64> = a.clone().try_into().unwrap();
        let cow = CsrCow::try_from(wide.as_ref()).unwrap();
        assert_eq!(
            cow.view().row_offsets().as_ptr(),
            wide.symbolic().row_ptr().as_ptr()
        );
        assert_eq!(product(cow.view(), b.view()), want, "{name}");
        assert_eq!(CsrMatrix::try_from(wide).unwrap(), a, "{name}");
    }
}

#[test]
fn faer_rows_stored_apart_are_gathered() {
    // Row 0 holds 1 of its 2 slots, row 1 starts after a gap.
    let sym = SymbolicSparseRowMat::<u32>::new_checked(
        2,
        3,
        vec![0, 2, 4],
        Some(vec![1, 2]),
        vec![2, 9, 0, 1],
    );
    let m = SparseRowMat::new(sym, vec![1.0f64, 99.0, 2.0, 3.0]);
    let want = CsrMatrix::new(2, 3, vec![0, 1, 3], vec![2, 0, 1], vec![1.0, 2.0, 3.0]).unwrap();
    assert_eq!(CsrCow::try_from(m.as_ref()).unwrap().into_matrix(), want);
    assert_eq!(CsrMatrix::try_from(m).unwrap(), want);
}

#[test]
fn sizes_past_faers_u32_are_errors_not_truncations() {
    let wide = CsrMatrix::<f64>::zeros(1, 3_000_000_000).unwrap();
    let e = SparseRowMat::<u32, f64>::try_from(wide.clone()).unwrap_err();
    assert!(
        matches!(
            e,
            Error::TooLarge {
                value: 3_000_000_000,
                ..
            }
        ),
        "{e}"
    );
    assert!(SparseRowMat::<usize, f64>::try_from(wide).is_ok());
}

#[test]
fn nalgebra_round_trips_and_its_offsets_are_read_in_place() {
    for (name, a) in matrices() {
        let theirs: nalgebra_sparse::CsrMatrix<f64> = a.clone().try_into().unwrap();
        let cow = CsrCow::try_from(&theirs).unwrap();
        assert_eq!(
            cow.view().row_offsets().as_ptr(),
            theirs.row_offsets().as_ptr()
        );
        assert_eq!(cow.view().values().as_ptr(), theirs.values().as_ptr());
        let b = common::partner(&a);
        assert_eq!(
            product(cow.view(), b.view()),
            product(a.view(), b.view()),
            "{name}"
        );
        assert_eq!(CsrMatrix::try_from(theirs).unwrap(), a, "{name}");
    }
}

#[test]
fn unsorted_rows_are_refused_by_the_sorted_only_libraries() {
    let a = CsrMatrix::new(1, 3, vec![0, 2], vec![2, 0], vec![1.0f64, 2.0]).unwrap();
    let unsorted = |e: Error| {
        matches!(
            e,
            Error::UnsortedRow {
                row: 0,
                prev: 2,
                col: 0
            }
        )
    };
    assert!(unsorted(
        sprs::CsMatI::<f64, u32, usize>::try_from(a.clone()).unwrap_err()
    ));
    assert!(unsorted(sprs::CsMat::<f64>::try_from(&a).unwrap_err()));
    assert!(unsorted(
        nalgebra_sparse::CsrMatrix::<f64>::try_from(a.clone()).unwrap_err()
    ));
    // faer takes unsorted rows.
    let f: SparseRowMat<u32, f64> = a.clone().try_into().unwrap();
    assert_eq!(CsrMatrix::try_from(f).unwrap(), a);
}

#[test]
fn the_library_guide_shows_the_interop_example_as_it_is_built() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let guide = std::fs::read_to_string(root.join("docs/library.md")).unwrap();
    let example = std::fs::read_to_string(root.join("examples/interop.rs")).unwrap();
    let body = &example[example.find("use spgemm::interop").unwrap()..];
    assert!(
        guide.contains(body),
        "docs/library.md differs from examples/interop.rs"
    );
}
