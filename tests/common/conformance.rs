//! The conformance suite, written once and run on every backend by the
//! `backends` test binary ([`CASES`]): every case runs the backend and the
//! reference on the same input and compares them (structure exactly,
//! values to rounding).

use spgemm::{generate, CsrMatrix, Scalar};

/// Something that multiplies: a backend under test.
pub trait Multiplier {
    /// `C = A·B` in `f64`.
    fn multiply_f64(
        &self,
        a: &CsrMatrix<f64>,
        b: &CsrMatrix<f64>,
    ) -> Result<CsrMatrix<f64>, String>;
    /// `C = A·B` in `f32`.
    fn multiply_f32(
        &self,
        a: &CsrMatrix<f32>,
        b: &CsrMatrix<f32>,
    ) -> Result<CsrMatrix<f32>, String>;
}

impl Multiplier for spgemm::Backend {
    fn multiply_f64(
        &self,
        a: &CsrMatrix<f64>,
        b: &CsrMatrix<f64>,
    ) -> Result<CsrMatrix<f64>, String> {
        self.multiply(a, b).map_err(|e| e.to_string())
    }
    fn multiply_f32(
        &self,
        a: &CsrMatrix<f32>,
        b: &CsrMatrix<f32>,
    ) -> Result<CsrMatrix<f32>, String> {
        self.multiply(a, b).map_err(|e| e.to_string())
    }
}

/// Value types the suite runs in.
pub trait TestScalar: Scalar {
    fn run(
        m: &dyn Multiplier,
        a: &CsrMatrix<Self>,
        b: &CsrMatrix<Self>,
    ) -> Result<CsrMatrix<Self>, String>;
}
impl TestScalar for f64 {
    fn run(
        m: &dyn Multiplier,
        a: &CsrMatrix<f64>,
        b: &CsrMatrix<f64>,
    ) -> Result<CsrMatrix<f64>, String> {
        m.multiply_f64(a, b)
    }
}
impl TestScalar for f32 {
    fn run(
        m: &dyn Multiplier,
        a: &CsrMatrix<f32>,
        b: &CsrMatrix<f32>,
    ) -> Result<CsrMatrix<f32>, String> {
        m.multiply_f32(a, b)
    }
}

/// Multiplies with the backend and checks the result against the reference.
pub fn check<T: TestScalar>(
    m: &dyn Multiplier,
    what: &str,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
) -> CsrMatrix<T> {
    let c = T::run(m, a, b).unwrap_or_else(|e| panic!("{what}: backend failed: {e}"));
    match spgemm::verify::check_product(a, b, &c).expect("reference") {
        Ok(()) => c,
        Err(mismatch) => panic!("{what}: {mismatch}"),
    }
}

/// A matrix from `(row, col, value)` triplets.
pub fn triplets<T: Scalar>(
    nrows: usize,
    ncols: usize,
    entries: &[(usize, u32, f64)],
) -> CsrMatrix<T> {
    let r: Vec<usize> = entries.iter().map(|e| e.0).collect();
    let c: Vec<u32> = entries.iter().map(|e| e.1).collect();
    let v: Vec<T> = entries.iter().map(|e| T::from_f64(e.2)).collect();
    CsrMatrix::from_triplets(nrows, ncols, &r, &c, &v).expect("triplets")
}

/// One case of the suite, run on a backend.
pub type Case = fn(&dyn Multiplier);

/// Every case of the suite, by name: each multiplies with the backend
/// given and panics on a mismatch with the reference.
pub const CASES: &[(&str, Case)] = &[
    ("every_real_matrix_f64", every_real_matrix_f64),
    ("real_matrices_f32", real_matrices_f32),
    (
        "seeded_random_square_and_rectangular",
        seeded_random_square_and_rectangular,
    ),
    ("empty_matrix", empty_matrix),
    (
        "zero_rows_and_zero_inner_dimension",
        zero_rows_and_zero_inner_dimension,
    ),
    ("empty_rows_between_full_ones", empty_rows_between_full_ones),
    ("single_entry_rows", single_entry_rows),
    (
        "hypersparse_rows_mostly_empty_or_single",
        hypersparse_rows_mostly_empty_or_single,
    ),
    ("one_dense_row", one_dense_row),
    (
        "rows_longer_than_the_largest_shared_table",
        rows_longer_than_the_largest_shared_table,
    ),
    ("rectangular_a_times_b", rectangular_a_times_b),
    (
        "banded_rows_bounded_by_their_reach",
        banded_rows_bounded_by_their_reach,
    ),
    (
        "banded_rows_in_their_windows_with_holes",
        banded_rows_in_their_windows_with_holes,
    ),
    (
        "rows_sharing_their_columns_counted_once",
        rows_sharing_their_columns_counted_once,
    ),
    ("pattern_and_symmetric_files", pattern_and_symmetric_files),
    (
        "explicit_zeros_in_input_are_kept",
        explicit_zeros_in_input_are_kept,
    ),
    (
        "values_that_cancel_stay_as_explicit_zeros",
        values_that_cancel_stay_as_explicit_zeros,
    ),
    (
        "duplicates_and_unsorted_columns_in_input",
        duplicates_and_unsorted_columns_in_input,
    ),
    (
        "dimension_mismatch_is_an_error",
        dimension_mismatch_is_an_error,
    ),
];

/// `diagonals` diagonals from `-(diagonals / 2)` of an `n × ncols` matrix
/// (rows clipped at its edges), values from `seed`.
fn banded(n: usize, ncols: usize, diagonals: usize, seed: u64) -> CsrMatrix<f64> {
    banded_with_holes(n, ncols, diagonals, 0, seed)
}

/// [`banded`] with each entry left out with probability `holes` / 1000
/// (from `seed`, as the values): rows of C with gaps between their first
/// and last columns.
pub fn banded_with_holes(
    n: usize,
    ncols: usize,
    diagonals: usize,
    holes: u32,
    seed: u64,
) -> CsrMatrix<f64> {
    let mut next = crate::common::xorshift(seed);
    let half = diagonals / 2;
    let entries: Vec<(usize, u32, f64)> = (0..n)
        .flat_map(|i| {
            (i.saturating_sub(half)..(i + diagonals - half).min(ncols)).map(move |j| (i, j))
        })
        .filter_map(|(i, j)| {
            let kept = holes == 0 || next(1000) >= holes;
            kept.then(|| (i, j as u32, 1.0 + f64::from(next(1000)) / 1000.0))
        })
        .collect();
    triplets(n, ncols, &entries)
}

/// `x` with `extra` entries added (value 0.5).
fn with_entries(x: &CsrMatrix<f64>, extra: &[(usize, u32)]) -> CsrMatrix<f64> {
    let mut all: Vec<(usize, u32, f64)> = Vec::new();
    for i in 0..x.nrows() {
        let (cols, vals) = x.row(i);
        all.extend(cols.iter().zip(vals).map(|(&j, &v)| (i, j, v)));
    }
    all.extend(extra.iter().map(|&(i, j)| (i, j, 0.5)));
    triplets(x.nrows(), x.ncols(), &all)
}

/// Banded products, whose rows the GPU's symbolic binning bounds by the
/// columns their products can reach (B's bandwidths around the first and
/// last column of A's row) rather than by their products: 17 diagonals
/// squared (289 products, at most 33 entries a row); one row reaching far
/// above its diagonal and one far below, which widen every row's bound;
/// the same rows unsorted (no bound then); empty rows; a rectangular
/// product of 33 diagonals by 17.
fn banded_rows_bounded_by_their_reach(m: &dyn Multiplier) {
    // Large enough for the bound (2^25 products and more).
    let a = banded(160_000, 160_000, 17, 1);
    check(m, "17 diagonals squared", &a, &a);
    let far = with_entries(&a, &[(80_000, 159_999)]);
    check(m, "one row reaching far above", &far, &far);
    let low = with_entries(&a, &[(140_000, 0), (159_999, 3)]);
    check(m, "rows reaching far below", &low, &low);
    let (nr, nc, off, cols, vals) = low.clone().into_parts();
    let (mut cols_r, mut vals_r): (Vec<u32>, Vec<f64>) = (Vec::new(), Vec::new());
    for i in 0..nr {
        cols_r.extend(cols[off[i]..off[i + 1]].iter().rev());
        vals_r.extend(vals[off[i]..off[i + 1]].iter().rev());
    }
    let unsorted = CsrMatrix::new(nr, nc, off, cols_r, vals_r).unwrap();
    assert!(!unsorted.is_sorted());
    check(m, "rows unsorted", &unsorted, &unsorted);
    // Every tenth row empty.
    let mut kept: Vec<(usize, u32, f64)> = Vec::new();
    for i in (0..a.nrows()).filter(|i| i % 10 != 0) {
        let (cols, vals) = a.row(i);
        kept.extend(cols.iter().zip(vals).map(|(&j, &v)| (i, j, v)));
    }
    let holes: CsrMatrix<f64> = triplets(a.nrows(), a.ncols(), &kept);
    check(m, "empty rows", &holes, &holes);
    let tall = banded(80_000, 160_000, 33, 3);
    let wide = banded(160_000, 250_000, 17, 2);
    check(m, "33 diagonals times 17, rectangular", &tall, &wide);
}

/// Banded products whose rows of C the GPU holds in their windows (the
/// columns between the first of A's row less B's lower bandwidth and its
/// last plus the upper, within a table's slots: a column's slot is its
/// order, no hash and no sort): a fifth of the entries of 17 and of 25
/// diagonals left out, so that rows of C have gaps and vary in length
/// within their windows and take several bins; the first and last rows,
/// whose windows the matrix's edges clip.
fn banded_rows_in_their_windows_with_holes(m: &dyn Multiplier) {
    // Large enough for the bandwidths (2^25 products and more).
    let a = banded_with_holes(220_000, 220_000, 17, 200, 4);
    check(m, "17 diagonals with holes squared", &a, &a);
    let b = banded_with_holes(90_000, 90_000, 25, 200, 5);
    check(m, "25 diagonals with holes squared", &b, &b);
}

/// A square matrix of `nodes` nodes, node `v` owning `dofs[v % dofs.len()]`
/// rows and as many columns (its degrees of freedom), each of its rows
/// holding every column of `v` and of `neighbors` nodes drawn from
/// `seed`: runs of rows with the same columns, as a finite-element
/// matrix's nodes have. Every fifth node's second row has its last column
/// moved one further (as long as the row before, differing only at its
/// end), and rows of `empty` (a step) have no entries.
pub fn node_blocked(
    nodes: usize,
    dofs: &[usize],
    neighbors: usize,
    empty: usize,
) -> CsrMatrix<f64> {
    let mut next = crate::common::xorshift(7);
    let mut start = vec![0usize; nodes + 1];
    for v in 0..nodes {
        start[v + 1] = start[v] + dofs[v % dofs.len()];
    }
    let n = start[nodes];
    let mut entries: Vec<(usize, u32, f64)> = Vec::new();
    for v in 0..nodes {
        let mut adjacent: Vec<usize> = (0..neighbors).map(|_| next(nodes) as usize).collect();
        adjacent.push(v);
        adjacent.sort_unstable();
        adjacent.dedup();
        let columns: Vec<usize> = adjacent
            .iter()
            .flat_map(|&u| start[u]..start[u + 1])
            .collect();
        for i in (start[v]..start[v + 1]).filter(|i| i % empty != 0) {
            let moved = v % 5 == 0 && i == start[v] + 1 && columns.last() < Some(&(n - 1));
            for (k, &j) in columns.iter().enumerate() {
                let j = if moved && k + 1 == columns.len() {
                    j + 1
                } else {
                    j
                };
                entries.push((i, j as u32, 1.0 + f64::from(next(1000)) / 1000.0));
            }
        }
    }
    triplets(n, n, &entries)
}

/// Products of matrices whose rows come in runs with the same columns,
/// whose rows of C then have the same columns too, so that the GPU's
/// symbolic phase counts only the first row of each run and its numeric
/// phase computes up to four rows of a run together, and up to three
/// rows of B's runs: nodes of 1 to 40
/// rows (runs across words of 32 rows), rows as long as the row before
/// that differ only in their last column, empty rows; the same rows
/// unsorted, every row reversed (runs unchanged) and every other row
/// reversed (the same columns in another order, no run); a rectangular
/// product by a random B. Large enough (2^25 products and more) for the
/// runs to be found.
fn rows_sharing_their_columns_counted_once(m: &dyn Multiplier) {
    let a = node_blocked(10_000, &[3, 3, 1, 40, 2, 0, 6], 2, 101);
    check(m, "nodes of 1 to 40 rows, squared", &a, &a);
    for every in [1, 2] {
        let (nr, nc, off, cols, vals) = a.clone().into_parts();
        let (mut cols_r, mut vals_r): (Vec<u32>, Vec<f64>) = (Vec::new(), Vec::new());
        for i in 0..nr {
            let (c, v) = (&cols[off[i]..off[i + 1]], &vals[off[i]..off[i + 1]]);
            if i % every == 0 {
                cols_r.extend(c.iter().rev());
                vals_r.extend(v.iter().rev());
            } else {
                cols_r.extend(c);
                vals_r.extend(v);
            }
        }
        let unsorted = CsrMatrix::new(nr, nc, off, cols_r, vals_r).unwrap();
        assert!(!unsorted.is_sorted());
        check(m, &format!("every {every} rows reversed"), &unsorted, &a);
    }
    let b = generate::uniform::<f64>(a.ncols(), 50_000, 24, 5).unwrap();
    check(m, "nodes times a random B", &a, &b);
}

fn every_real_matrix_f64(m: &dyn Multiplier) {
    for name in crate::common::real_matrices() {
        let a = crate::common::load::<f64>(&name);
        let b = crate::common::partner(&a);
        check(m, &name, &a, &b);
    }
}

fn real_matrices_f32(m: &dyn Multiplier) {
    for name in ["bcsstk16", "c-39", "lp_ship04l", "ca-GrQc", "mbeacxc"] {
        let a = crate::common::load::<f32>(name);
        let b = crate::common::partner(&a);
        check(m, name, &a, &b);
    }
}

fn seeded_random_square_and_rectangular(m: &dyn Multiplier) {
    for (seed, (rows, inner, cols, per_row)) in [
        (97, 131, 89, 5),
        (1000, 1000, 1000, 12),
        (257, 3000, 64, 40),
        (4096, 777, 20000, 3),
        (300, 300, 300, 150),
    ]
    .into_iter()
    .enumerate()
    {
        let a = generate::uniform::<f64>(rows, inner, per_row, seed as u64).unwrap();
        let b = generate::uniform::<f64>(inner, cols, per_row, seed as u64 + 100).unwrap();
        check(m, &format!("random {rows}x{inner}x{cols}"), &a, &b);
        let a32 = a.map(|v| v as f32);
        let b32 = b.map(|v| v as f32);
        check(m, &format!("random f32 {rows}x{inner}x{cols}"), &a32, &b32);
    }
}

fn empty_matrix(m: &dyn Multiplier) {
    let a = CsrMatrix::<f64>::zeros(40, 40).unwrap();
    let c = check(m, "empty", &a, &a);
    assert_eq!(c.nnz(), 0);
}

fn zero_rows_and_zero_inner_dimension(m: &dyn Multiplier) {
    let a = CsrMatrix::<f64>::zeros(0, 7).unwrap();
    let b = generate::uniform::<f64>(7, 9, 3, 1).unwrap();
    assert_eq!(check(m, "0 rows", &a, &b).shape(), (0, 9));
    let a = CsrMatrix::<f64>::zeros(5, 0).unwrap();
    let b = CsrMatrix::<f64>::zeros(0, 3).unwrap();
    let c = check(m, "inner 0", &a, &b);
    assert_eq!((c.shape(), c.nnz()), ((5, 3), 0));
}

fn empty_rows_between_full_ones(m: &dyn Multiplier) {
    let full = generate::uniform::<f64>(200, 200, 20, 3).unwrap();
    let a = full.clone().retain(|i, _, _| i % 3 == 0);
    check(m, "empty rows", &a, &full);
}

fn single_entry_rows(m: &dyn Multiplier) {
    let a = generate::uniform::<f64>(500, 400, 1, 4).unwrap();
    let b = generate::uniform::<f64>(400, 300, 25, 5).unwrap();
    check(m, "single-entry rows", &a, &b);
}

/// Most rows empty, most of the rest a single entry (a hypersparse matrix
/// of 2^17 rows and 2^16 entries, as its square and times a B with
/// unsorted rows and repeated columns, so that single entries of A meet
/// rows of B that are not C's rows as they stand), with explicit zeros.
fn hypersparse_rows_mostly_empty_or_single(m: &dyn Multiplier) {
    let n = 1usize << 17;
    let mut next = crate::common::xorshift(0x005e_ed0f_4a11);
    let e: Vec<(usize, u32, f64)> = (0..n / 2)
        .map(|k| {
            let v = if k % 97 == 0 {
                0.0
            } else {
                1.0 + (k % 7) as f64
            };
            (next(n) as usize, next(n), v)
        })
        .collect();
    let a = triplets::<f64>(n, n, &e);
    assert!(a.row_offsets().windows(2).filter(|w| w[1] == w[0]).count() > n / 2);
    let c = check(m, "hypersparse squared", &a, &a);
    assert!(c.nnz() > 0);
    // B: every row reversed and its first entry repeated.
    let (nr, nc, off, cols, vals) = a.clone().into_parts();
    let (mut o2, mut c2, mut v2) = (vec![0usize], vec![], vec![]);
    for i in 0..nr {
        for p in (off[i]..off[i + 1]).rev() {
            c2.push(cols[p]);
            v2.push(vals[p]);
        }
        if off[i + 1] > off[i] {
            c2.push(cols[off[i]]);
            v2.push(0.5);
        }
        o2.push(c2.len());
    }
    let messy = CsrMatrix::new(nr, nc, o2, c2, v2).unwrap();
    check(
        m,
        "hypersparse times unsorted rows with repeats",
        &a,
        &messy,
    );
}

fn one_dense_row(m: &dyn Multiplier) {
    let n = 600u32;
    let mut e: Vec<(usize, u32, f64)> = (0..n).map(|j| (7usize, j, 1.0 + j as f64)).collect();
    e.extend((0..n as usize).map(|i| (i, (i as u32 * 7) % n, 2.0)));
    let a = triplets::<f64>(n as usize, n as usize, &e);
    check(m, "dense row", &a, &a);
}

fn rows_longer_than_the_largest_shared_table(m: &dyn Multiplier) {
    // A few rows with 70,000 distinct output columns each: beyond
    // every shared-memory table (Hopper's largest holds ~58,000 keys).
    let a = generate::short_and_long_rows::<f64>(100_000, 2, 3, 700, 11).unwrap();
    let b = generate::uniform::<f64>(100_000, 100_000, 180, 12).unwrap();
    let c = check(m, "long rows", &a, &b);
    assert!(
        c.max_row_nnz() > 60_000,
        "longest row of C has {}",
        c.max_row_nnz()
    );
}

fn rectangular_a_times_b(m: &dyn Multiplier) {
    let a = generate::uniform::<f64>(33, 1500, 30, 6).unwrap();
    let b = generate::uniform::<f64>(1500, 71, 4, 7).unwrap();
    assert_eq!(check(m, "33x1500 · 1500x71", &a, &b).shape(), (33, 71));
}

fn pattern_and_symmetric_files(m: &dyn Multiplier) {
    for name in ["bcspwr10", "ca-GrQc", "karate", "494_bus", "nos4"] {
        let a = crate::common::load::<f64>(name);
        check(m, name, &a, &a);
    }
}

fn explicit_zeros_in_input_are_kept(m: &dyn Multiplier) {
    let a = triplets::<f64>(3, 3, &[(0, 0, 0.0), (0, 1, 2.0), (1, 1, 0.0), (2, 0, 1.0)]);
    let c = check(m, "explicit zeros", &a, &a);
    assert!(c.values().contains(&0.0));
}

fn values_that_cancel_stay_as_explicit_zeros(m: &dyn Multiplier) {
    // Row 0 of A·B = 1·[1 1] + 1·[-1 1] = [0 2]: column 0 cancels exactly.
    let a = triplets::<f64>(1, 2, &[(0, 0, 1.0), (0, 1, 1.0)]);
    let b = triplets::<f64>(2, 2, &[(0, 0, 1.0), (0, 1, 1.0), (1, 0, -1.0), (1, 1, 1.0)]);
    let c = check(m, "cancellation", &a, &b);
    assert_eq!(
        (c.col_indices(), c.values()),
        (&[0u32, 1][..], &[0.0, 2.0][..])
    );
    assert_eq!(c.drop_explicit_zeros().nnz(), 1);
}

fn duplicates_and_unsorted_columns_in_input(m: &dyn Multiplier) {
    let sorted = generate::uniform::<f64>(300, 300, 10, 8).unwrap();
    // Reverse every row and split each entry into two halves.
    let (nr, nc, off, cols, vals) = sorted.clone().into_parts();
    let (mut o2, mut c2, mut v2) = (vec![0usize], vec![], vec![]);
    for i in 0..nr {
        for p in (off[i]..off[i + 1]).rev() {
            c2.extend([cols[p], cols[p]]);
            v2.extend([vals[p] * 0.25, vals[p] * 0.75]);
        }
        o2.push(c2.len());
    }
    let messy = CsrMatrix::new(nr, nc, o2, c2, v2).unwrap();
    assert!(!messy.is_sorted());
    let c = check(m, "duplicates and unsorted", &messy, &messy);
    let clean = check(m, "sorted", &sorted, &sorted);
    assert!(c.same_structure(&clean));
}

fn dimension_mismatch_is_an_error(m: &dyn Multiplier) {
    let a = generate::uniform::<f64>(10, 20, 2, 1).unwrap();
    let e = m.multiply_f64(&a, &a).unwrap_err();
    assert!(
        e.contains("dimension mismatch") && e.contains("10x20"),
        "{e}"
    );
}
