//! Pruning of C on every backend against the reference
//! (`reference::multiply_spec`, which prunes each row as
//! `Prune::row` says): thresholds, the `keep` largest per row and per
//! column, ties of magnitude everywhere (small integers, whose sums are
//! exact in any order, so that the kept entries must be exactly the
//! reference's), rows longer than a warp and shorter than `keep`, `keep`
//! 0; plain, semiring, masked and complemented products; `f64`, `f32`,
//! `i64` and `i32`; C pruned on the device by `GpuEngine::prune_device`,
//! and the same products split over two engines (rows pruned on each,
//! columns after stacking) and into blocks of rows within a device-memory
//! budget; after a symbolic phase, rows of every numeric bin (pruned in
//! their tables as they are written, or marked after the numeric phase
//! past the shared tables) under each sort and the DCU paper's table, and
//! rows whose products all have columns of their own (pruned as a warp
//! writes them).

use crate::common;
use spgemm::gpu::{SortVariant, SymbolicMode};
use spgemm::semiring::{ProductSpec, Prune, Semiring};
use spgemm::{generate, reference, Backend, BackendKind, CsrMatrix, GpuConfig, Scalar};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut trials = Vec::new();
    for (kind, name) in common::BACKENDS {
        trials.push(common::trial(
            kind,
            format!("{name}::pruning::ties_rows_columns_and_every_type"),
            move || ties_rows_columns_and_every_type(kind, &[0]),
        ));
        if kind != BackendKind::Cpu {
            trials.push(common::trial(
                kind,
                format!("{name}::pruning::split_over_two_engines"),
                move || ties_rows_columns_and_every_type(kind, &[0, 0]),
            ));
            trials.push(common::trial(
                kind,
                format!("{name}::pruning::in_blocks_within_a_memory_budget"),
                move || in_blocks_within_a_memory_budget(kind),
            ));
            trials.push(common::trial(
                kind,
                format!("{name}::pruning::matrices_on_the_device"),
                move || matrices_on_the_device(kind),
            ));
            trials.push(common::trial(
                kind,
                format!("{name}::pruning::columns_kept_in_rows_of_every_length"),
                move || columns_kept_in_rows_of_every_length(kind),
            ));
            trials.push(common::trial(
                kind,
                format!("{name}::pruning::rows_of_every_bin_after_a_symbolic_phase"),
                move || rows_of_every_bin_after_a_symbolic_phase(kind),
            ));
            trials.push(common::trial(
                kind,
                format!("{name}::pruning::rows_of_distinct_products_after_a_symbolic_phase"),
                move || rows_of_distinct_products_after_a_symbolic_phase(kind),
            ));
        }
    }
    trials
}

/// `m`'s values as nonzero integers in −3..=3: many ties of magnitude.
fn ties(m: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    m.map(|v| {
        let k = (v * 6.0).floor() - 3.0;
        if k >= 0.0 {
            k + 1.0
        } else {
            k
        }
    })
}

/// The prunings tried: a threshold alone, `keep` alone (0 included), both,
/// `keep` past every row's length; each on rows and on columns.
fn prunings<T: Scalar>() -> Vec<Prune<T>> {
    let mut out = Vec::new();
    for (below, keep) in [
        (Some(2.5), None),
        (None, Some(7)),
        (Some(3.0), Some(5)),
        (None, Some(0)),
        (Some(0.0), Some(100_000)),
        (None, Some(1)),
    ] {
        for columns in [false, true] {
            out.push(Prune {
                below: below.map(|t: f64| T::from_f64(if T::INTEGER { t.ceil() } else { t })),
                keep,
                columns,
            });
        }
    }
    out
}

fn ties_rows_columns_and_every_type(kind: BackendKind, devices: &[usize]) {
    let config = GpuConfig {
        devices: devices.to_vec(),
        ..GpuConfig::default()
    };
    let (backend, _) = Backend::select_with(kind, &config).unwrap();
    // Rectangular, rows of 1 to about 140 entries; R-MAT hubs far longer
    // than a warp.
    let a = ties(&generate::uniform::<f64>(260, 150, 14, 31).unwrap());
    let b = ties(&generate::uniform::<f64>(150, 330, 10, 32).unwrap());
    let g = ties(&generate::rmat::<f64>(10, 12, 33).unwrap());
    let m = ties(&generate::uniform::<f64>(260, 330, 40, 34).unwrap());
    on_type::<f64>(&backend, &a, &b, &g, &m);
    on_type::<f32>(&backend, &a, &b, &g, &m);
    on_type::<i64>(&backend, &a, &b, &g, &m);
    on_type::<i32>(&backend, &a, &b, &g, &m);
}

/// The same products with a device-memory budget of 320 KiB, which
/// holds B (at most 119 KiB here) but not C: A's rows go through in
/// blocks sized by the budget (R-MAT's square in 22 in f64 and 13 in i32,
/// A·B in 2 in f64 and 1 in i32), each block pruned on the device,
/// columns kept as rows of `Cᵀ = Bᵀ·Aᵀ` in blocks of Bᵀ's rows; on one
/// engine and split over two.
fn in_blocks_within_a_memory_budget(kind: BackendKind) {
    let a = ties(&generate::uniform::<f64>(260, 150, 14, 31).unwrap());
    let b = ties(&generate::uniform::<f64>(150, 330, 10, 32).unwrap());
    let g = ties(&generate::rmat::<f64>(10, 12, 33).unwrap());
    let m = ties(&generate::uniform::<f64>(260, 330, 40, 34).unwrap());
    for devices in [vec![0], vec![0, 0]] {
        let config = GpuConfig {
            devices,
            memory_budget: Some(320 << 10),
            ..GpuConfig::default()
        };
        let (backend, _) = Backend::select_with(kind, &config).unwrap();
        on_type::<f64>(&backend, &a, &b, &g, &m);
        on_type::<i32>(&backend, &a, &b, &g, &m);
    }
}

fn on_type<T: Scalar>(
    backend: &Backend,
    a: &CsrMatrix<f64>,
    b: &CsrMatrix<f64>,
    g: &CsrMatrix<f64>,
    m: &CsrMatrix<f64>,
) {
    let cast = |x: &CsrMatrix<f64>| x.map(T::from_f64);
    let (a, b, g, m) = (cast(a), cast(b), cast(g), cast(m));
    for prune in prunings::<T>() {
        let specs = [
            ("plain", ProductSpec::new(), &a, &b),
            (
                "min_plus",
                ProductSpec::new().semiring(Semiring::MinPlus),
                &a,
                &b,
            ),
            ("R-MAT", ProductSpec::new(), &g, &g),
            ("masked", ProductSpec::new().mask(m.view(), false), &a, &b),
            (
                "complemented",
                ProductSpec::new()
                    .semiring(Semiring::MaxTimes)
                    .mask(m.view(), true),
                &a,
                &b,
            ),
        ];
        for (name, spec, x, y) in specs {
            let spec = ProductSpec { prune, ..spec };
            let want = reference::multiply_spec(x.view(), y.view(), &spec).unwrap();
            let got = backend.multiply_spec(x, y, &spec).unwrap();
            assert_eq!(got, want, "{name} {} {prune:?}", T::NAME);
        }
    }
}

/// `GpuEngine::prune_device` on a product left on the device, and on a
/// transposed matrix (rows unsorted: columns are searched in full);
/// a negative threshold refused.
fn matrices_on_the_device(kind: BackendKind) {
    let (backend, _) = Backend::select(kind).unwrap();
    match &backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda(e) => on_engine(&e.engines()[0]),
        #[cfg(feature = "hip")]
        Backend::Hip(e) => on_engine(&e.engines()[0]),
        _ => unreachable!("{kind:?} opened another backend"),
    }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
fn on_engine<D: spgemm::device::Device>(e: &spgemm::gpu::GpuEngine<D>) {
    let a = ties(&generate::uniform::<f64>(400, 300, 30, 41).unwrap());
    let ga = e.upload(&a).unwrap();
    let full = reference::multiply(&a, &a.transpose().unwrap()).unwrap();
    for prune in prunings::<f64>() {
        let at = e.transpose_device(&ga).unwrap();
        let (c, _) = e.multiply(&ga, &at).unwrap();
        let got = e.download(&e.prune_device(c, &prune).unwrap()).unwrap();
        let want = spgemm::semiring::pruned(&full, &prune).unwrap();
        assert_eq!(got, want, "product {prune:?}");
        // Aᵀ as it is on the device: rows in no particular order.
        let got = e.prune_device(at, &prune).unwrap();
        assert!(!got.sorted_rows());
        let got = e.download(&got).unwrap();
        let want = spgemm::semiring::pruned(&a.transpose().unwrap(), &prune).unwrap();
        assert_eq!(sorted(&got), want, "transpose {prune:?}");
    }
    let c = e.upload(&a).unwrap();
    let bad = Prune {
        below: Some(-1.0),
        keep: None,
        columns: false,
    };
    let err = e.prune_device(c, &bad).err().expect("negative threshold");
    assert!(err.to_string().contains("at least 0, not -1"), "{err}");
}

/// Columns kept on the device (`GpuEngine::multiply_semiring_pruned`,
/// through `Cᵀ = Bᵀ·Aᵀ` transposed back with its rows sorted), C's rows
/// of every length the sort treats apart: A (3,000 × 6,000) whose row 0
/// holds 100 in columns 0..5,000 and row 1 50 in columns 5,000..6,000,
/// the others 8 entries in 1..=3, times a permutation, so that keeping 2
/// a column gives C a row of 5,000 entries (sorted in global memory), one
/// of 1,000 (a block's shared memory) and short ones (a warp's), the rows
/// sorted and equal to the reference in f64 and i32; the same through
/// the backend, A's and B's transposes formed alike for `A·A`; and
/// `GpuEngine::transpose_device_sorted` of A against the host's.
fn columns_kept_in_rows_of_every_length(kind: BackendKind) {
    let (m, n) = (3_000usize, 6_000usize);
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for j in 0..n {
        rows.push(usize::from(j >= 5_000));
        cols.push(j as u32);
        vals.push(if j < 5_000 { 100.0 } else { 50.0 });
    }
    let noise = generate::uniform::<f64>(m, n, 8, 71).unwrap();
    for i in 2..m {
        let (c, v) = noise.row(i);
        for (&c, &v) in c.iter().zip(v) {
            rows.push(i);
            cols.push(c);
            vals.push((v * 3.0).floor() + 1.0);
        }
    }
    let a = CsrMatrix::from_triplets(m, n, &rows, &cols, &vals).unwrap();
    let perm: Vec<usize> = (0..n).collect();
    let pcols: Vec<u32> = (0..n).map(|j| ((j * 4_999) % n) as u32).collect();
    let p = CsrMatrix::from_triplets(n, n, &perm, &pcols, &vec![1.0; n]).unwrap();
    let square = ties(&generate::uniform::<f64>(2_500, 2_500, 12, 72).unwrap());
    let prune = Prune {
        below: None,
        keep: Some(2),
        columns: true,
    };
    let spec = ProductSpec {
        prune,
        ..ProductSpec::new()
    };
    let (backend, _) = Backend::select(kind).unwrap();
    for (x, y) in [(&a, &p), (&square, &square)] {
        let want = reference::multiply_spec(x.view(), y.view(), &spec).unwrap();
        assert_eq!(backend.multiply_spec(x, y, &spec).unwrap(), want);
        let int = |m: &CsrMatrix<f64>| m.map(|v| v as i32);
        let spec32 = ProductSpec {
            prune: Prune {
                below: None,
                keep: Some(2),
                columns: true,
            },
            ..ProductSpec::new()
        };
        let want = reference::multiply_spec(int(x).view(), int(y).view(), &spec32).unwrap();
        assert_eq!(
            backend.multiply_spec(&int(x), &int(y), &spec32).unwrap(),
            want
        );
    }
    let want = reference::multiply_spec(a.view(), p.view(), &spec).unwrap();
    let lens: Vec<usize> = (0..2).map(|i| want.row(i).0.len()).collect();
    assert_eq!(lens, [5_000, 1_000]);
    match &backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda(e) => columns_on_engine(&e.engines()[0], &a, &p, &want),
        #[cfg(feature = "hip")]
        Backend::Hip(e) => columns_on_engine(&e.engines()[0], &a, &p, &want),
        _ => unreachable!("{kind:?} opened another backend"),
    }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
fn columns_on_engine<D: spgemm::device::Device>(
    e: &spgemm::gpu::GpuEngine<D>,
    a: &CsrMatrix<f64>,
    p: &CsrMatrix<f64>,
    want: &CsrMatrix<f64>,
) {
    let (ga, gp) = (e.upload(a).unwrap(), e.upload(p).unwrap());
    let prune = Prune {
        below: None,
        keep: Some(2),
        columns: true,
    };
    let (c, _) = e
        .multiply_semiring_pruned(&ga, &gp, Semiring::PlusTimes, &prune)
        .unwrap();
    assert!(c.sorted_rows());
    assert_eq!(&e.download(&c).unwrap(), want);
    let at = e.transpose_device_sorted(&ga).unwrap();
    assert!(at.sorted_rows());
    assert_eq!(e.download(&at).unwrap(), a.transpose().unwrap());
}

/// `m` with each row's entries sorted by column.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn sorted(m: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    m.transpose().unwrap().transpose().unwrap()
}

/// A (300 × 4,000) whose row i has max(1, i² / 60) entries (up to 1,490),
/// values in −3..=3 but 0: times `ties` of B (4,000 × 30,000, 16 entries a
/// row), C's rows run from a few entries to about 16,000, past every
/// shared table.
fn graded() -> (CsrMatrix<f64>, CsrMatrix<f64>) {
    let (m, k) = (300usize, 4000usize);
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in 0..m {
        for j in 0..(i * i / 60).max(1) {
            rows.push(i);
            // 2,741 is prime to 4,000: a row's columns are distinct.
            cols.push(((i * 7_919 + j * 2_741) % k) as u32);
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let v = (x >> 61) as f64 - 3.0;
            vals.push(if v >= 0.0 { v + 1.0 } else { v });
        }
    }
    let a = CsrMatrix::from_triplets(m, k, &rows, &cols, &vals).unwrap();
    let b = ties(&generate::uniform::<f64>(k, 30_000, 16, 51).unwrap());
    (a, b)
}

/// Products with a symbolic phase whose rows fall in every numeric bin:
/// those of the shared-memory bins pruned in their tables as they are
/// written (rows of a few lanes, of a warp, of a whole block; tables
/// sorted whole, condensed and ranked, condensed and sorted, and under
/// the register sort), the longest marked after the numeric phase, under
/// the default table and the DCU paper's (a wavefront of 64 a row where
/// warps are 32 wide), against the reference, in `f64`, `f32` and `i64`.
fn rows_of_every_bin_after_a_symbolic_phase(kind: BackendKind) {
    let (a, b) = graded();
    let configs = [
        GpuConfig::default(),
        GpuConfig {
            sort: SortVariant::Bitonic,
            ..GpuConfig::default()
        },
        GpuConfig {
            sort: SortVariant::Register,
            accumulator: spgemm::gpu::Accumulator::Hash,
            ..GpuConfig::default()
        },
        GpuConfig {
            table: spgemm::table::TableConfig::DcuPaper,
            accumulator: spgemm::gpu::Accumulator::Hash,
            ..GpuConfig::default()
        },
    ];
    let prunings = [
        (None, Some(7)),
        (None, Some(100)),
        (None, Some(1_000)),
        (Some(2.5), None),
        (Some(3.0), Some(50)),
        (None, Some(0)),
    ];
    for config in configs {
        let config = GpuConfig {
            symbolic: SymbolicMode::Exact,
            ..config
        };
        let (backend, _) = Backend::select_with(kind, &config).unwrap();
        for (below, keep) in prunings {
            check_every_type(&backend, (&a, &b), (below, keep), &config);
        }
    }
}

/// Rows whose products mostly have columns of their own (A 3,000 × 2¹⁶
/// with 8 entries a row times B with 16: 128 products a row in 2¹⁶
/// columns, about seven rows in eight without a repeated column), which
/// the numeric phase writes a warp a row without a hash table and prunes
/// there; values with many ties of magnitude; `keep` below, near and past
/// the rows' lengths, a threshold, both; in `f64`, `f32` and `i64`,
/// against the reference.
fn rows_of_distinct_products_after_a_symbolic_phase(kind: BackendKind) {
    let n = 1 << 16;
    let a = ties(&generate::uniform::<f64>(3_000, n, 8, 61).unwrap());
    let b = ties(&generate::uniform::<f64>(n, n, 16, 62).unwrap());
    let config = GpuConfig {
        symbolic: SymbolicMode::Exact,
        ..GpuConfig::default()
    };
    let (backend, _) = Backend::select_with(kind, &config).unwrap();
    for (below, keep) in [
        (None, Some(1)),
        (None, Some(17)),
        (None, Some(127)),
        (None, Some(500)),
        (Some(5.0), None),
        (Some(2.0), Some(40)),
    ] {
        check_every_type(&backend, (&a, &b), (below, keep), &config);
    }
}

/// `a·b` row-pruned below `below` (rounded up for integers) and to `keep`
/// a row, in `f64`, `f32` and `i64`, each against the reference.
fn check_every_type(
    backend: &Backend,
    (a, b): (&CsrMatrix<f64>, &CsrMatrix<f64>),
    (below, keep): (Option<f64>, Option<usize>),
    config: &GpuConfig,
) {
    fn rows<T: Scalar>(below: Option<T>, keep: Option<usize>) -> Prune<T> {
        Prune {
            below,
            keep,
            columns: false,
        }
    }
    check_pruned(backend, a, b, rows(below, keep), config);
    let single = |m: &CsrMatrix<f64>| m.map(|v| v as f32);
    let below32 = below.map(|t| t as f32);
    check_pruned(backend, &single(a), &single(b), rows(below32, keep), config);
    let int = |m: &CsrMatrix<f64>| m.map(|v| v as i64);
    let below64 = below.map(|t| t.ceil() as i64);
    check_pruned(backend, &int(a), &int(b), rows(below64, keep), config);
}

fn check_pruned<T: Scalar>(
    backend: &Backend,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    prune: Prune<T>,
    config: &GpuConfig,
) {
    let spec = ProductSpec {
        prune,
        ..ProductSpec::new()
    };
    let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
    let got = backend.multiply_spec(a, b, &spec).unwrap();
    assert_eq!(
        got,
        want,
        "{} {prune:?} sort {:?} table {:?}",
        T::NAME,
        config.sort,
        config.table
    );
}
