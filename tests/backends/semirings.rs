//! Semirings, masks and pruning on the CPU backend against the sequential
//! reference (`reference::multiply_spec`), on the repository's real
//! matrices and seeded random ones, with the dense and the hash
//! accumulator; hard cases by name. The reference itself is checked
//! against SuiteSparse:GraphBLAS in `python/tests/test_semirings.py`.

use crate::common;
use spgemm::gpu::{LongRows, SortVariant};
use spgemm::semiring::{ProductSpec, Semiring};
use spgemm::{
    generate, reference, BackendKind, BackendKind::Cpu, CpuBackend, CsrMatrix, GpuConfig,
};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let tests: [(&str, fn()); 13] = [
        (
            "random_products_every_semiring_and_mask",
            random_products_every_semiring_and_mask,
        ),
        (
            "real_matrices_min_plus_and_masked_counts",
            real_matrices_min_plus_and_masked_counts,
        ),
        (
            "pruning_matches_the_reference",
            pruning_matches_the_reference,
        ),
        (
            "empty_mask_rows_and_empty_products",
            empty_mask_rows_and_empty_products,
        ),
        (
            "complement_of_every_column_is_empty",
            complement_of_every_column_is_empty,
        ),
        ("unsorted_mask_rows", unsorted_mask_rows),
        ("long_mask_rows_are_searched", long_mask_rows_are_searched),
        ("triangles_of_ca_grqc", triangles_of_ca_grqc),
        (
            "wide_products_with_long_and_short_rows",
            wide_products_with_long_and_short_rows,
        ),
        ("scattered_rows_fetched_ahead", scattered_rows_fetched_ahead),
        ("pruned_columns", pruned_columns),
        (
            "bad_specs_are_one_line_errors",
            bad_specs_are_one_line_errors,
        ),
        (
            "complemented_masks_on_every_backend",
            complemented_masks_on_every_backend,
        ),
    ];
    let mut trials: Vec<_> = tests
        .into_iter()
        .map(|(name, f)| common::trial(Cpu, format!("cpu::semirings::{name}"), f))
        .collect();
    for (kind, name) in [(BackendKind::Cuda, "cuda"), (BackendKind::Hip, "hip")] {
        trials.push(common::trial(
            kind,
            format!("{name}::semirings::unmasked_semirings_by_the_product_kernels"),
            move || unmasked_semirings_by_the_product_kernels(kind),
        ));
        trials.push(common::trial(
            kind,
            format!("{name}::semirings::products_split_over_two_engines"),
            move || products_split_over_two_engines(kind),
        ));
    }
    trials
}

/// Every semiring without a mask on a GPU backend, by the product's own
/// kernels compiled with the semiring, against the reference exactly
/// (every `⊕` but `+` is exact in any order, and `plus_pair` counts are
/// exact): rectangular operands with zeros (false for `lor_land`), R-MAT
/// hubs, a C wider than the dense accumulators; every long-row kernel and
/// the register sort; pruning after.
fn unmasked_semirings_by_the_product_kernels(kind: BackendKind) {
    let a: CsrMatrix<f64> = generate::uniform(300, 170, 12, 21).unwrap();
    let a = a.map(|v| if v < 0.2 { 0.0 } else { v - 0.4 });
    let b: CsrMatrix<f64> = generate::rmat(9, 16, 22).unwrap();
    let end = b.row_offsets()[170];
    let b = CsrMatrix::new(
        170,
        512,
        b.row_offsets()[..171].to_vec(),
        b.col_indices()[..end].to_vec(),
        b.values().iter().map(|v| v - 0.5).take(end).collect(),
    )
    .unwrap();
    let g: CsrMatrix<f64> = generate::rmat(12, 16, 24).unwrap();
    let g = g.map(|v| v - 0.3);
    let wide: CsrMatrix<f64> = generate::uniform(200, 70_000, 300, 25).unwrap();
    let tall = wide.transpose().unwrap();
    let products: [(&str, &CsrMatrix<f64>, &CsrMatrix<f64>); 3] = [
        ("random", &a, &b),
        ("R-MAT", &g, &g),
        ("wide", &wide, &tall),
    ];
    // plus_times without a mask is the plain product, tested on its own.
    let rings = Semiring::ALL
        .into_iter()
        .filter(|&r| r != Semiring::PlusTimes);
    for (long_rows, sort) in [
        (LongRows::Auto, SortVariant::Auto),
        (LongRows::Dense, SortVariant::Register),
        (LongRows::SortedHash, SortVariant::Bitonic),
        (LongRows::InPlaceHash, SortVariant::CondenseRank),
    ] {
        let config = GpuConfig {
            long_rows,
            sort,
            ..GpuConfig::default()
        };
        let (gpu, _) = spgemm::Backend::select_with(kind, &config).unwrap();
        for (name, x, y) in products {
            for ring in rings.clone() {
                let spec = ProductSpec::new().semiring(ring);
                let want = reference::multiply_spec(x.view(), y.view(), &spec).unwrap();
                let got = gpu.multiply_spec(x, y, &spec).unwrap();
                assert_eq!(got, want, "{name} {ring} ({long_rows:?}, {sort:?})");
            }
        }
    }
    let (gpu, _) = spgemm::Backend::select(kind).unwrap();
    let counts = ProductSpec::new().semiring(Semiring::PlusPair);
    for spec in [
        counts.keep(3),
        counts.prune_below(2.0),
        counts.keep(2).prune_columns(),
        ProductSpec::new().semiring(Semiring::MinPlus).keep(4),
    ] {
        let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
        assert_eq!(
            gpu.multiply_spec(&a, &b, &spec).unwrap(),
            want,
            "{:?}",
            spec.prune
        );
    }
}

/// C's structure equal to `want`'s and its values too (within rounding for
/// `plus_times`, whose sums may run in another order on a GPU).
pub(crate) fn assert_close(
    got: &CsrMatrix<f64>,
    want: &CsrMatrix<f64>,
    ring: Semiring,
    what: &str,
) {
    assert_eq!(got.row_offsets(), want.row_offsets(), "{what} {ring}: rows");
    assert_eq!(
        got.col_indices(),
        want.col_indices(),
        "{what} {ring}: columns"
    );
    let bad = got.values().iter().zip(want.values()).position(|(&x, &y)| {
        !(x == y
            || (x.is_nan() && y.is_nan())
            || (ring == Semiring::PlusTimes && (x - y).abs() <= 1e-12 * (1.0 + y.abs())))
    });
    assert_eq!(bad, None, "{what} {ring}: values");
}

/// Every kind of semiring product split over two engines (both on GPU 0:
/// the same splitting and stacking as two GPUs): unmasked, under a mask of
/// its own, under A as the mask, and complemented, against the reference;
/// R-MAT rows of very different work land in their places.
fn products_split_over_two_engines(kind: BackendKind) {
    let options = GpuConfig {
        devices: vec![0, 0],
        ..GpuConfig::default()
    };
    let (gpu, _) = spgemm::Backend::select_with(kind, &options).unwrap();
    let g: CsrMatrix<f64> = generate::rmat(11, 16, 61).unwrap();
    let g = g.map(|v| v - 0.3);
    let m = mask_for(g.nrows(), g.ncols(), 40, 62);
    let specs = [
        ProductSpec::new().semiring(Semiring::MinPlus),
        ProductSpec::new()
            .semiring(Semiring::MaxTimes)
            .mask(m.view(), false),
        ProductSpec::new()
            .semiring(Semiring::PlusPair)
            .mask(g.view(), false),
        ProductSpec::new()
            .semiring(Semiring::PlusTimes)
            .mask(m.view(), true),
    ];
    for spec in &specs {
        let want = reference::multiply_spec(g.view(), g.view(), spec).unwrap();
        let got = gpu.multiply_spec(&g, &g, spec).unwrap();
        let what = format!("two engines, mask {:?}", spec.mask.map(|m| m.complement()));
        assert_close(&got, &want, spec.semiring, &what);
    }
}

/// The strictly lower triangle L of real matrix `name`'s structure
/// (values 1) and its transpose.
pub(crate) fn lower_and_upper(name: &str) -> (CsrMatrix<f64>, CsrMatrix<f64>) {
    let g: CsrMatrix<f64> = common::load(name);
    let (mut rows, mut cols) = (Vec::new(), Vec::new());
    for i in 0..g.nrows() {
        for &j in g.row(i).0.iter().filter(|&&j| (j as usize) < i) {
            rows.push(i);
            cols.push(j);
        }
    }
    let l = CsrMatrix::from_triplets(g.nrows(), g.ncols(), &rows, &cols, &vec![1.0; rows.len()])
        .unwrap();
    let u = l.transpose().unwrap();
    (l, u)
}

/// The two accumulators: a slot per column, and hashing (cut-off 0).
fn backends() -> [CpuBackend; 2] {
    [
        CpuBackend::with_threads(2).unwrap(),
        CpuBackend::with_threads(3).unwrap().with_dense_cutoff(0),
    ]
}

/// Both accumulators against the reference, exactly: each row's products
/// are combined in the order they are produced in both.
fn check(a: &CsrMatrix<f64>, b: &CsrMatrix<f64>, spec: &ProductSpec<'_, f64>, what: &str) {
    let want = reference::multiply_spec(a.view(), b.view(), spec).unwrap();
    for cpu in backends() {
        let got = cpu.multiply_spec(a, b, spec).unwrap();
        assert_eq!(
            got.row_offsets(),
            want.row_offsets(),
            "{what}: row offsets (cut-off {})",
            cpu.dense_cutoff()
        );
        assert_eq!(got.col_indices(), want.col_indices(), "{what}: columns");
        let same = got
            .values()
            .iter()
            .zip(want.values())
            .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()));
        assert!(same, "{what}: values (cut-off {})", cpu.dense_cutoff());
    }
}

/// A mask for `a·b`: seeded random entries, about `per_row` a row.
pub(crate) fn mask_for(nrows: usize, ncols: usize, per_row: usize, seed: u64) -> CsrMatrix<f64> {
    generate::uniform(nrows, ncols, per_row, seed).unwrap()
}

fn random_products_every_semiring_and_mask() {
    // Rectangular, rows longer than a warp, negative values.
    let a: CsrMatrix<f64> = generate::uniform(300, 170, 12, 1).unwrap();
    let b: CsrMatrix<f64> = generate::uniform(170, 410, 40, 2).unwrap();
    let b = CsrMatrix::new(
        b.nrows(),
        b.ncols(),
        b.row_offsets().to_vec(),
        b.col_indices().to_vec(),
        b.values().iter().map(|v| v - 0.5).collect(),
    )
    .unwrap();
    let m = mask_for(300, 410, 60, 3);
    for ring in Semiring::ALL {
        check(
            &a,
            &b,
            &ProductSpec::new().semiring(ring),
            &format!("{ring}"),
        );
        for complement in [false, true] {
            let spec = ProductSpec::new().semiring(ring).mask(m.view(), complement);
            check(&a, &b, &spec, &format!("{ring}, complement {complement}"));
        }
    }
}

fn real_matrices_min_plus_and_masked_counts() {
    for name in common::real_matrices() {
        let a: CsrMatrix<f64> = common::load(&name);
        let b = common::partner(&a);
        // The sequential reference sorts every product: the largest
        // products (over a million) are left to the conformance suite.
        if spgemm::stats::product_stats(a.view(), b.view())
            .unwrap()
            .total_nprod
            > 1_000_000
        {
            continue;
        }
        check(
            &a,
            &b,
            &ProductSpec::new().semiring(Semiring::MinPlus),
            &name,
        );
        // Paths of two hops that close onto an edge of A (triangles) when
        // A is square; a random mask otherwise.
        let m = if a.nrows() == a.ncols() {
            a.clone()
        } else {
            mask_for(a.nrows(), b.ncols(), 4, 9)
        };
        let spec = ProductSpec::new()
            .semiring(Semiring::PlusPair)
            .mask(m.view(), false);
        check(&a, &b, &spec, &format!("{name}, plus_pair ⟨M⟩"));
        let spec = ProductSpec::new()
            .semiring(Semiring::AnyPair)
            .mask(m.view(), true);
        check(&a, &b, &spec, &format!("{name}, any_pair ⟨¬M⟩"));
    }
}

fn pruning_matches_the_reference() {
    let a: CsrMatrix<f64> = generate::erdos_renyi(500, 9, 4).unwrap();
    let m = mask_for(500, 500, 30, 5);
    for (below, keep) in [
        (Some(0.5), None),
        (None, Some(3)),
        (Some(0.2), Some(5)),
        (None, Some(0)),
    ] {
        let mut spec = ProductSpec::new();
        spec.prune.below = below;
        spec.prune.keep = keep;
        check(&a, &a, &spec, &format!("prune {below:?} {keep:?}"));
        let masked = spec.semiring(Semiring::MaxTimes).mask(m.view(), true);
        check(
            &a,
            &a,
            &masked,
            &format!("max_times ⟨¬M⟩ prune {below:?} {keep:?}"),
        );
    }
    let spec = ProductSpec::new().keep(2);
    let c = CpuBackend::new().multiply_spec(&a, &a, &spec).unwrap();
    assert!((0..c.nrows()).all(|i| c.row(i).0.len() <= 2));
}

fn empty_mask_rows_and_empty_products() {
    // Rows 0 and 2 of the mask are empty; row 1 of A has no entries.
    let a = CsrMatrix::new(3, 3, vec![0, 2, 2, 3], vec![0, 2, 1], vec![1.0, 2.0, 3.0]).unwrap();
    let m = CsrMatrix::new(3, 3, vec![0, 0, 2, 2], vec![0, 1], vec![1.0, 1.0]).unwrap();
    for complement in [false, true] {
        let spec = ProductSpec::new()
            .semiring(Semiring::MinPlus)
            .mask(m.view(), complement);
        check(&a, &a, &spec, &format!("complement {complement}"));
    }
    let spec = ProductSpec::new().mask(m.view(), false);
    let c = CpuBackend::new().multiply_spec(&a, &a, &spec).unwrap();
    assert_eq!(
        c.nnz(),
        0,
        "the only mask row with entries is A's empty row"
    );
}

fn complement_of_every_column_is_empty() {
    let a: CsrMatrix<f64> = generate::erdos_renyi(200, 5, 6).unwrap();
    let full = CsrMatrix::new(
        200,
        200,
        (0..=200).map(|i| i * 200).collect(),
        (0..200 * 200).map(|k| (k % 200) as u32).collect(),
        vec![1.0; 200 * 200],
    )
    .unwrap();
    for cpu in backends() {
        let c = cpu
            .multiply_spec(&a, &a, &ProductSpec::new().mask(full.view(), true))
            .unwrap();
        assert_eq!(c.nnz(), 0);
        let c = cpu
            .multiply_spec(&a, &a, &ProductSpec::new().mask(full.view(), false))
            .unwrap();
        assert_eq!(c, cpu.multiply(&a, &a).unwrap(), "⟨all⟩ is no mask");
    }
}

fn unsorted_mask_rows() {
    let a: CsrMatrix<f64> = generate::erdos_renyi(64, 6, 7).unwrap();
    let m: CsrMatrix<f64> = mask_for(64, 64, 20, 8);
    let reversed: Vec<u32> = (0..64)
        .flat_map(|i| m.row(i).0.iter().rev().copied().collect::<Vec<_>>())
        .collect();
    let unsorted = CsrMatrix::new(
        64,
        64,
        m.row_offsets().to_vec(),
        reversed,
        m.values().to_vec(),
    )
    .unwrap();
    for complement in [false, true] {
        let sorted = ProductSpec::new().mask(m.view(), complement);
        let spec = ProductSpec::new().mask(unsorted.view(), complement);
        check(&a, &a, &spec, "unsorted mask");
        let want = reference::multiply_spec(a.view(), a.view(), &sorted).unwrap();
        assert_eq!(
            CpuBackend::new().multiply_spec(&a, &a, &spec).unwrap(),
            want
        );
    }
}

fn long_mask_rows_are_searched() {
    // Rows of few products against masks of nearly every column: the mask
    // rows (sorted) are searched rather than marked; one unsorted row is
    // marked.
    let a: CsrMatrix<f64> = generate::erdos_renyi(300, 2, 11).unwrap();
    let b: CsrMatrix<f64> = generate::erdos_renyi(300, 3, 12).unwrap();
    let mut m: CsrMatrix<f64> = mask_for(300, 300, 250, 13);
    let first = m.row(0).0.len();
    let mut cols = m.col_indices().to_vec();
    cols[..first].reverse();
    m = CsrMatrix::new(
        300,
        300,
        m.row_offsets().to_vec(),
        cols,
        m.values().to_vec(),
    )
    .unwrap();
    for ring in [Semiring::PlusTimes, Semiring::AnyPair, Semiring::MinPlus] {
        for complement in [false, true] {
            let spec = ProductSpec::new().semiring(ring).mask(m.view(), complement);
            check(&a, &b, &spec, &format!("{ring}, complement {complement}"));
        }
    }
}

fn triangles_of_ca_grqc() {
    // C⟨L⟩ = L plus.pair Lᵀ summed: 48,260 triangles, as SNAP lists for
    // this collaboration network.
    let (l, u) = lower_and_upper("ca-GrQc");
    let spec = ProductSpec::new()
        .semiring(Semiring::PlusPair)
        .mask(l.view(), false);
    for cpu in backends() {
        let c = cpu.multiply_spec(&l, &u, &spec).unwrap();
        assert_eq!(c.values().iter().sum::<f64>(), 48260.0);
    }
    check(&l, &u, &spec, "ca-GrQc triangles");
}

fn wide_products_with_long_and_short_rows() {
    // C wider than 2¹⁵ columns: rows of over a thousand products take a
    // slot per column, short ones a hash table, in one product.
    let n = 40_000;
    let er: CsrMatrix<f64> = generate::erdos_renyi(n, 3, 14).unwrap();
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let (c, v) = er.row(i);
        rows.extend(std::iter::repeat_n(i, c.len()));
        cols.extend_from_slice(c);
        vals.extend_from_slice(v);
    }
    for i in [0usize, 17, 39_999] {
        for k in 0..500u32 {
            rows.push(i);
            cols.push(k.wrapping_mul(2_654_435_761) % n as u32);
            vals.push(1.0 + f64::from(k));
        }
    }
    let a = CsrMatrix::from_triplets(n, n, &rows, &cols, &vals).unwrap();
    let m = mask_for(n, n, 40, 15);
    for complement in [false, true] {
        let spec = ProductSpec::new()
            .semiring(Semiring::MaxPlus)
            .mask(m.view(), complement);
        check(&a, &a, &spec, &format!("max_plus, complement {complement}"));
    }
    check(&a, &a, &ProductSpec::new().keep(5), "keep 5");
    check(
        &a,
        &a,
        &ProductSpec::new().semiring(Semiring::MinPlus),
        "min_plus",
    );
}

fn scattered_rows_fetched_ahead() {
    // A random matrix wide enough that its columns lie, on average, more
    // than 65,536 rows from the diagonal: B's rows are prefetched.
    let n = (1 << 18) + 4096;
    let a: CsrMatrix<f64> = generate::erdos_renyi(n, 3, 31).unwrap();
    let m = mask_for(n, n, 2, 32);
    for (ring, complement) in [(Semiring::AnyPair, true), (Semiring::MinPlus, false)] {
        let spec = ProductSpec::new()
            .semiring(ring)
            .mask(m.view(), complement)
            .keep(8);
        check(&a, &a, &spec, &format!("{ring}, complement {complement}"));
    }
}

fn pruned_columns() {
    // Rectangular, so that rows and columns differ; with and without masks.
    let a: CsrMatrix<f64> = generate::uniform(120, 90, 9, 41).unwrap();
    let b: CsrMatrix<f64> = generate::uniform(90, 150, 11, 42).unwrap();
    let m = mask_for(120, 150, 40, 43);
    for (below, keep) in [(Some(0.5), None), (None, Some(2)), (Some(0.3), Some(4))] {
        let mut spec = ProductSpec::new().prune_columns();
        spec.prune.below = below;
        spec.prune.keep = keep;
        check(&a, &b, &spec, &format!("columns {below:?} {keep:?}"));
        let masked = spec.semiring(Semiring::MaxTimes).mask(m.view(), false);
        check(
            &a,
            &b,
            &masked,
            &format!("max_times ⟨M⟩ columns {below:?} {keep:?}"),
        );
        let c = CpuBackend::new().multiply_spec(&a, &b, &spec).unwrap();
        if let Some(k) = keep {
            let ct = c.transpose().unwrap();
            assert!((0..ct.nrows()).all(|j| ct.row(j).0.len() <= k));
        }
    }
}

fn bad_specs_are_one_line_errors() {
    let a: CsrMatrix<f64> = generate::erdos_renyi(10, 3, 1).unwrap();
    let m = CsrMatrix::<f64>::zeros(10, 11).unwrap();
    let e = CpuBackend::new()
        .multiply_spec(&a, &a, &ProductSpec::new().mask(m.view(), false))
        .unwrap_err()
        .to_string();
    assert_eq!(e, "the mask is 10x11 but the product is 10x10");
    let e = CpuBackend::new()
        .multiply_spec(&a, &a, &ProductSpec::new().prune_below(-1.0))
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least 0") && !e.contains('\n'), "{e}");
    let b = CsrMatrix::<f64>::zeros(3, 3).unwrap();
    let e = CpuBackend::new()
        .multiply_spec(&a, &b, &ProductSpec::new().semiring(Semiring::MinPlus))
        .unwrap_err()
        .to_string();
    assert!(e.contains("dimension mismatch"), "{e}");
}

fn complemented_masks_on_every_backend() {
    // Through the facade, the CPU runs every spec; a GPU backend (where one
    // is built and present) runs a complemented mask to the same result.
    let a: CsrMatrix<f64> = generate::erdos_renyi(50, 4, 2).unwrap();
    let cpu = spgemm::Backend::Cpu(CpuBackend::new());
    let spec = ProductSpec::new()
        .semiring(Semiring::MinPlus)
        .mask(a.view(), true);
    assert_eq!(
        cpu.multiply_spec(&a, &a, &spec).unwrap(),
        reference::multiply_spec(a.view(), a.view(), &spec).unwrap()
    );
    if let Ok((gpu, _)) = spgemm::Backend::select(spgemm::BackendKind::Auto) {
        if gpu.name() != "cpu" {
            assert_eq!(
                gpu.multiply_spec(&a, &a, &spec).unwrap(),
                cpu.multiply_spec(&a, &a, &spec).unwrap()
            );
            let plain = gpu.multiply_spec(&a, &a, &ProductSpec::new()).unwrap();
            assert_eq!(
                plain.col_indices(),
                cpu.multiply(&a, &a).unwrap().col_indices()
            );
        }
    }
}
