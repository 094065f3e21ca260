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
//! budget.

use crate::common;
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
/// columns kept over all blocks on the host; on one engine and split over
/// two.
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

/// `m` with each row's entries sorted by column.
#[cfg(any(feature = "cuda", feature = "hip"))]
fn sorted(m: &CsrMatrix<f64>) -> CsrMatrix<f64> {
    m.transpose().unwrap().transpose().unwrap()
}
