//! Breadth-first search by products with a complemented mask on every
//! backend, `f'⟨¬v⟩ = f any_pair A` level after level, against the
//! reference: on a GPU a one-row mask is made explicit and its entries
//! computed by dot products (the excluded products never formed), where
//! the grid of a larger mask falls back to the product and the mask's
//! entries dropped; both against the reference, with a mask row that
//! repeats columns and operands whose rows are not sorted (which take the
//! product's path).

use crate::common;
use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{generate, reference, Backend, BackendKind, CsrMatrix};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    common::BACKENDS
        .into_iter()
        .map(|(kind, name)| {
            common::trial(
                kind,
                format!("{name}::bfs::levels_by_complemented_masks"),
                move || levels_by_complemented_masks(kind),
            )
        })
        .collect()
}

/// The `rows × n` matrix whose row `i` holds `cols[i]` (values 1).
fn rows(n: usize, cols: &[Vec<u32>]) -> CsrMatrix<f64> {
    let mut offsets = vec![0];
    for r in cols {
        offsets.push(offsets[offsets.len() - 1] + r.len());
    }
    let flat: Vec<u32> = cols.concat();
    let ones = vec![1.0; flat.len()];
    CsrMatrix::new(cols.len(), n, offsets, flat, ones).unwrap()
}

fn levels_by_complemented_masks(kind: BackendKind) {
    let (backend, _) = Backend::select(kind).unwrap();
    let road: CsrMatrix<f64> = common::load("luxembourg_osm");
    let rmat: CsrMatrix<f64> = generate::rmat(12, 8, 71).unwrap();
    for (name, a) in [("luxembourg_osm", &road), ("R-MAT 12", &rmat)] {
        let n = a.nrows();
        let mut visited = vec![0u32];
        let mut frontier = rows(n, &[vec![0]]);
        let mut levels = 0;
        while frontier.nnz() > 0 && levels < 40 {
            let seen = rows(n, &[visited.clone()]);
            let spec = ProductSpec::new()
                .semiring(Semiring::AnyPair)
                .mask(seen.view(), true);
            let want = reference::multiply_spec(frontier.view(), a.view(), &spec).unwrap();
            let got = backend.multiply_spec(&frontier, a, &spec).unwrap();
            assert_eq!(got, want, "{name}, level {levels}");
            visited.extend_from_slice(want.col_indices());
            visited.sort_unstable();
            frontier = want;
            levels += 1;
        }
        assert!(levels > 3, "{name}: {levels} levels");
    }
    // Three rows, one of them repeating columns, under min_plus: the
    // explicit complement (grid 3 × 4,096) against the reference.
    let f = rows(
        rmat.nrows(),
        &[vec![0, 5, 9], vec![], (0..600).step_by(3).collect()],
    );
    let mut repeats: Vec<u32> = (0..900).step_by(2).collect();
    repeats.extend((0..900).step_by(4));
    repeats.sort_unstable();
    let mask = rows(rmat.nrows(), &[vec![1, 2, 3], repeats, vec![]]);
    let spec = ProductSpec::new()
        .semiring(Semiring::MinPlus)
        .mask(mask.view(), true);
    let want = reference::multiply_spec(f.view(), rmat.view(), &spec).unwrap();
    assert_eq!(backend.multiply_spec(&f, &rmat, &spec).unwrap(), want);
    // The frontier's row unsorted: the product's path, the same C.
    let unsorted =
        CsrMatrix::new(1, rmat.nrows(), vec![0, 3], vec![9, 0, 5], vec![1.0; 3]).unwrap();
    let m1 = rows(rmat.nrows(), &[vec![1, 2, 3]]);
    let spec1 = ProductSpec::new()
        .semiring(Semiring::AnyPair)
        .mask(m1.view(), true);
    let want = reference::multiply_spec(unsorted.view(), rmat.view(), &spec1).unwrap();
    assert_eq!(
        backend.multiply_spec(&unsorted, &rmat, &spec1).unwrap(),
        want
    );
}
