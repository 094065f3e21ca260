//! Breadth-first search by products with a complemented mask on every
//! backend, `f'⟨¬v⟩ = f any_pair A` level after level, against the
//! reference: on a GPU a one-row product is pushed into a dense grid of C
//! masked by the visited set's bitmap, and a mask of a few rows whose
//! products are too many for the grid is made explicit and its entries
//! computed by dot products; both against the reference, with a mask row
//! that repeats columns and operands whose rows are not sorted. The grid
//! by name: every semiring, structural and complemented masks, a row of B
//! longer than a block's tile of products, empty rows of B, A's rows
//! unsorted or repeating a column, C's width not a multiple of a bitmap
//! word. Whole searches (`Backend::bfs_levels`, on a GPU one call with
//! the visited set kept on the device) against a queue over A's rows.

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
        .chain(common::BACKENDS.into_iter().map(|(kind, name)| {
            common::trial(
                kind,
                format!("{name}::bfs::few_rows_on_a_dense_grid"),
                move || few_rows_on_a_dense_grid(kind),
            )
        }))
        .chain(common::BACKENDS.into_iter().map(|(kind, name)| {
            common::trial(
                kind,
                format!("{name}::bfs::levels_of_a_whole_search"),
                move || levels_of_a_whole_search(kind),
            )
        }))
        .collect()
}

/// Each vertex's level from `source` by a queue over A's rows (−1 where
/// no path leads): the oracle of the searches by products.
fn levels_by_queue(a: &CsrMatrix<f64>, source: usize) -> Vec<i32> {
    let mut levels = vec![-1; a.nrows()];
    levels[source] = 0;
    let mut queue = std::collections::VecDeque::from([source]);
    while let Some(k) = queue.pop_front() {
        let (lo, hi) = (a.row_offsets()[k], a.row_offsets()[k + 1]);
        for &j in &a.col_indices()[lo..hi] {
            if levels[j as usize] < 0 {
                levels[j as usize] = levels[k] + 1;
                queue.push_back(j as usize);
            }
        }
    }
    levels
}

/// Whole searches (`Backend::bfs_levels`) against a queue: every square
/// real matrix from its first, middle and last vertex, seeded R-MAT and
/// Erdős–Rényi graphs; a graph with rows unsorted and repeating columns
/// and self loops, 33 vertices (no whole bitmap word); a graph without
/// edges; a rectangular matrix and a source past the last vertex as
/// one-line errors.
fn levels_of_a_whole_search(kind: BackendKind) {
    let (backend, _) = Backend::select(kind).unwrap();
    let mut graphs: Vec<(String, CsrMatrix<f64>)> = common::real_matrices()
        .into_iter()
        .map(|name| {
            let a = common::load(&name);
            (name, a)
        })
        .filter(|(_, a)| a.nrows() == a.ncols())
        .collect();
    graphs.push(("R-MAT 12".into(), generate::rmat(12, 8, 5).unwrap()));
    graphs.push((
        "Erdős–Rényi 5,000 × 2".into(),
        generate::erdos_renyi(5000, 2, 8).unwrap(),
    ));
    let mut deepest = 0;
    for (name, a) in &graphs {
        let n = a.nrows();
        for source in [0, n / 2, n - 1] {
            let want = levels_by_queue(a, source);
            let got = backend.bfs_levels(a, source).unwrap();
            assert_eq!(got, want, "{name} from {source}");
            deepest = deepest.max(*want.iter().max().unwrap());
        }
    }
    assert!(deepest > 100, "the deepest search has {deepest} levels");
    // 0 → {5, 2, 5} unsorted with a repeat, a chain 5 → 6 → … → 32 with
    // self loops, 1 unreached, 3 → 0.
    let mut rows_of: Vec<Vec<u32>> = vec![Vec::new(); 33];
    rows_of[0] = vec![5, 2, 5];
    rows_of[3] = vec![0];
    for (v, row) in rows_of.iter_mut().enumerate().skip(5).take(27) {
        *row = vec![v as u32 + 1, v as u32];
    }
    let odd = rows(33, &rows_of);
    for source in [0, 3, 1, 32] {
        let got = backend.bfs_levels(&odd, source).unwrap();
        assert_eq!(got, levels_by_queue(&odd, source), "from {source}");
    }
    assert_eq!(backend.bfs_levels(&odd, 0).unwrap()[32], 28);
    let empty = rows(40, &vec![Vec::new(); 40]);
    let mut alone = vec![-1; 40];
    alone[39] = 0;
    assert_eq!(backend.bfs_levels(&empty, 39).unwrap(), alone);
    let e = backend.bfs_levels(&odd, 33).unwrap_err();
    assert_eq!(
        e.to_string(),
        "graph: source vertex 33 is not one of the graph's 33 vertices"
    );
    let wide = rows(34, &rows_of);
    let e = backend.bfs_levels(&wide, 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "graph: the adjacency matrix is 33x34, not square"
    );
}

/// The `rows × n` matrix whose row `i` holds `entries[i]` in that order.
fn with_values(n: usize, entries: &[Vec<(u32, f64)>]) -> CsrMatrix<f64> {
    let mut offsets = vec![0];
    for r in entries {
        offsets.push(offsets[offsets.len() - 1] + r.len());
    }
    let (cols, values) = entries.concat().into_iter().unzip();
    CsrMatrix::new(entries.len(), n, offsets, cols, values).unwrap()
}

/// Products of two rows of A (one unsorted, one wide) by a 2,000-column B
/// under structural and complemented masks, every semiring, against the
/// reference. Values are small integers, so that every order of adding
/// them gives the same sums. B's row 5 holds every column (more products
/// than a block's tile), every 17th row of B is empty.
fn few_rows_on_a_dense_grid(kind: BackendKind) {
    let (backend, _) = Backend::select(kind).unwrap();
    let n = 2000usize;
    let mut next = common::xorshift(9);
    let b_rows: Vec<Vec<(u32, f64)>> = (0..n)
        .map(|r| match r {
            5 => (0..n as u32).map(|c| (c, f64::from(c % 5 + 1))).collect(),
            _ if r % 17 == 0 => Vec::new(),
            _ => {
                let mut cols: Vec<u32> = (0..r * 7 % 23).map(|_| next(n)).collect();
                cols.sort_unstable();
                cols.dedup();
                cols.into_iter()
                    .map(|c| (c, f64::from(c % 3 + 1)))
                    .collect()
            }
        })
        .collect();
    let b = with_values(n, &b_rows);
    let wide: Vec<(u32, f64)> = (0..n as u32).step_by(5).map(|c| (c, 2.0)).collect();
    let unsorted = vec![
        (40, 1.0),
        (5, 3.0),
        (17, 2.0),
        (0, 1.0),
        (9, 4.0),
        (34, 1.0),
    ];
    let a = with_values(n, &[unsorted.clone(), wide.clone()]);
    let mut repeated = unsorted;
    repeated.push((9, 2.0));
    let a_repeats = with_values(n, &[repeated, wide]);
    let mask = rows(
        n,
        &[
            (0..n as u32).step_by(7).collect(),
            (0..n as u32).step_by(3).collect(),
        ],
    );
    for ring in Semiring::ALL {
        for complement in [false, true] {
            let spec = ProductSpec::new()
                .semiring(ring)
                .mask(mask.view(), complement);
            let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
            assert!(want.nnz() > 500, "{ring}: {} entries", want.nnz());
            let got = backend.multiply_spec(&a, &b, &spec).unwrap();
            assert_eq!(got, want, "{ring}, complemented {complement}");
            if complement {
                let want = reference::multiply_spec(a_repeats.view(), b.view(), &spec).unwrap();
                let got = backend.multiply_spec(&a_repeats, &b, &spec).unwrap();
                assert_eq!(got, want, "{ring}, A's row repeating a column");
            }
        }
    }
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
