//! Products computed in one pass, with no symbolic phase
//! (`SymbolicMode::Bound`), on each GPU backend against the reference:
//! rows of 0 to the one pass's limit of products (8 per lane of a group
//! of 4, 8, 16 lanes and a warp), their columns repeated so that runs are
//! summed, in the order the reference sums them, with columns narrow
//! enough to carry a product's place and too wide; a row past the limit,
//! which sends the product to the symbolic phase; many tiles of rows with
//! empty rows among them and a last tile cut short; semirings and integer
//! values; C sized from an estimate (`SymbolicMode::Estimate`), with room
//! to spare, half the room it needs and none, so that the pass runs again;
//! rows pruned as they are written (thresholds, the largest per row with
//! ties; a `keep` per column runs as rows of `Cᵀ`, tested with pruning).
//! Each test checks which path ran (`PhaseTimes::one_pass` and its
//! estimate's flags).

use crate::common;
use spgemm::gpu::{PhaseTimes, SymbolicMode};
use spgemm::semiring::{Prune, Semiring};
use spgemm::{reference, Backend, BackendKind, CsrMatrix};

pub fn trials() -> Vec<libtest_mimic::Trial> {
    let mut trials = Vec::new();
    for (kind, name) in common::BACKENDS {
        if kind == BackendKind::Cpu {
            continue;
        }
        for (test, run) in [
            (
                "rows_up_to_the_limit_and_past_it",
                rows_up_to_the_limit_and_past_it as fn(BackendKind),
            ),
            ("many_tiles_and_empty_rows", many_tiles_and_empty_rows),
            (
                "wide_columns_and_the_order_of_sums",
                wide_columns_and_the_order_of_sums,
            ),
            ("semirings_and_integers", semirings_and_integers),
            (
                "estimates_with_room_and_short",
                estimates_with_room_and_short,
            ),
            ("pruned_as_written", pruned_as_written),
        ] {
            trials.push(common::trial(
                kind,
                format!("{name}::one_pass::{test}"),
                move || run(kind),
            ));
        }
    }
    trials
}

/// Runs `case` on GPU 0 of `kind` under `SymbolicMode::Bound`.
fn on_engine(kind: BackendKind, case: &dyn Fn(&dyn Engine)) {
    let config = spgemm::GpuConfig {
        symbolic: SymbolicMode::Bound,
        ..Default::default()
    };
    on_engine_with(kind, &config, case)
}

/// Runs `case` on GPU 0 of `kind` configured by `config`.
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(unused_variables))]
fn on_engine_with(kind: BackendKind, config: &spgemm::GpuConfig, case: &dyn Fn(&dyn Engine)) {
    let (backend, _) = Backend::select_with(kind, config).unwrap();
    match &backend {
        #[cfg(feature = "cuda")]
        Backend::Cuda(m) => case(&m.engines()[0]),
        #[cfg(feature = "hip")]
        Backend::Hip(m) => case(&m.engines()[0]),
        _ => unreachable!("{kind:?} opened another backend"),
    }
}

/// What the cases need of an engine, whatever its device: a product with
/// whether it ran in one pass (or its phase times), and the device's warp
/// width.
trait Engine {
    fn warp_width(&self) -> usize;
    fn product(&self, a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) -> (CsrMatrix<f64>, bool) {
        let (c, times) = self.timed(a, b);
        (c, times.one_pass)
    }
    fn timed(&self, a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) -> (CsrMatrix<f64>, PhaseTimes);
    fn pruned(
        &self,
        a: &CsrMatrix<f64>,
        b: &CsrMatrix<f64>,
        prune: &Prune<f64>,
    ) -> (CsrMatrix<f64>, bool);
    fn pruned_i64(
        &self,
        a: &CsrMatrix<i64>,
        b: &CsrMatrix<i64>,
        semiring: Semiring,
        prune: &Prune<i64>,
    ) -> (CsrMatrix<i64>, bool);
    fn pruned_f32(
        &self,
        a: &CsrMatrix<f32>,
        b: &CsrMatrix<f32>,
        prune: &Prune<f32>,
    ) -> (CsrMatrix<f32>, bool);
    fn product_i64(
        &self,
        a: &CsrMatrix<i64>,
        b: &CsrMatrix<i64>,
        semiring: Semiring,
    ) -> (CsrMatrix<i64>, bool) {
        self.pruned_i64(a, b, semiring, &Prune::default())
    }
}

/// `a·b` under `semiring` on `e`, pruned as `prune` says: C, and whether
/// it ran in one pass.
fn pruned_on<D: spgemm::device::Device, T: spgemm::Scalar>(
    e: &spgemm::gpu::GpuEngine<D>,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    semiring: Semiring,
    prune: &Prune<T>,
) -> (CsrMatrix<T>, bool) {
    let (ga, gb) = (e.upload(a).unwrap(), e.upload(b).unwrap());
    let (c, times) = e
        .multiply_semiring_pruned(&ga, &gb, semiring, prune)
        .unwrap();
    (e.download(&c).unwrap(), times.one_pass)
}

impl<D: spgemm::device::Device> Engine for spgemm::gpu::GpuEngine<D> {
    fn warp_width(&self) -> usize {
        self.device().properties().warp_width as usize
    }

    fn timed(&self, a: &CsrMatrix<f64>, b: &CsrMatrix<f64>) -> (CsrMatrix<f64>, PhaseTimes) {
        let (ga, gb) = (self.upload(a).unwrap(), self.upload(b).unwrap());
        let (c, times) = self.multiply(&ga, &gb).unwrap();
        (self.download(&c).unwrap(), times)
    }

    fn pruned(
        &self,
        a: &CsrMatrix<f64>,
        b: &CsrMatrix<f64>,
        prune: &Prune<f64>,
    ) -> (CsrMatrix<f64>, bool) {
        pruned_on(self, a, b, Semiring::PlusTimes, prune)
    }

    fn pruned_i64(
        &self,
        a: &CsrMatrix<i64>,
        b: &CsrMatrix<i64>,
        semiring: Semiring,
        prune: &Prune<i64>,
    ) -> (CsrMatrix<i64>, bool) {
        pruned_on(self, a, b, semiring, prune)
    }

    fn pruned_f32(
        &self,
        a: &CsrMatrix<f32>,
        b: &CsrMatrix<f32>,
        prune: &Prune<f32>,
    ) -> (CsrMatrix<f32>, bool) {
        pruned_on(self, a, b, Semiring::PlusTimes, prune)
    }
}

/// Asserts that `got` (C, and whether it ran in one pass) ran in one pass
/// and is `a·b` under `semiring` pruned as `prune` says, as the reference
/// computes it; `what` names the case.
fn assert_pruned<T: spgemm::Scalar>(
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    semiring: Semiring,
    prune: Prune<T>,
    (got, one_pass): (CsrMatrix<T>, bool),
    what: &str,
) {
    use spgemm::semiring::ProductSpec;
    let spec = ProductSpec {
        prune,
        ..ProductSpec::new().semiring(semiring)
    };
    let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
    assert!(one_pass, "{what}: not in one pass");
    assert_eq!(got, want, "{what}");
}

/// `nrows × ncols` from `(row, column, value)` triplets.
fn triplets(nrows: usize, ncols: usize, t: &[(usize, usize, f64)]) -> CsrMatrix<f64> {
    let rows: Vec<usize> = t.iter().map(|e| e.0).collect();
    let cols: Vec<u32> = t.iter().map(|e| e.1 as u32).collect();
    let vals: Vec<f64> = t.iter().map(|e| e.2).collect();
    CsrMatrix::from_triplets(nrows, ncols, &rows, &cols, &vals).unwrap()
}

/// B of `n` rows of 8 columns each (row j: columns 4j..4j+8, so that
/// neighbouring rows share four), small integer values: sums exact in any
/// order.
fn overlapping_rows(n: usize) -> CsrMatrix<f64> {
    let mut t = Vec::new();
    for j in 0..n {
        for c in 0..8 {
            t.push((j, 4 * j + c, ((j + c) % 5) as f64 - 2.0));
        }
    }
    triplets(n, 4 * n + 8, &t)
}

/// A's row i takes `lens[i]` consecutive rows of B from row 3i (so its
/// products, 8 per entry, repeat columns: runs of two summed).
fn rows_of(lens: &[usize], n: usize) -> CsrMatrix<f64> {
    let mut t = Vec::new();
    for (i, &k) in lens.iter().enumerate() {
        for e in 0..k {
            t.push((i, (3 * i + e) % n, ((i + e) % 3) as f64 + 1.0));
        }
    }
    triplets(lens.len(), n, &t)
}

fn rows_up_to_the_limit_and_past_it(kind: BackendKind) {
    on_engine(kind, &|e| {
        // Rows of up to 8 products a lane for groups of 4, 8, 16 lanes
        // and a warp (each product's longest row picks its group).
        let warp = e.warp_width();
        let n = 4 * warp + 64;
        let b = overlapping_rows(n);
        for lanes in [4, 8, 16, warp] {
            let lens: Vec<usize> = (0..=lanes)
                .chain([lanes, lanes - 1, 0, 1, lanes])
                .cycle()
                .take(5000)
                .collect();
            let a = rows_of(&lens, n);
            let want = reference::multiply(&a, &b).unwrap();
            let (got, one_pass) = e.product(&a, &b);
            assert!(one_pass, "rows of up to 8 products a lane run in one pass");
            assert_eq!(got, want, "{lanes} lanes");
        }
        // One row of 8 products more: the symbolic phase for every row.
        let mut past: Vec<usize> = (0..=warp).collect();
        past.push(warp + 1);
        let a = rows_of(&past, n);
        let want = reference::multiply(&a, &b).unwrap();
        let (got, one_pass) = e.product(&a, &b);
        assert!(!one_pass, "a row past the limit runs the symbolic phase");
        assert_eq!(got, want);
    });
}

fn many_tiles_and_empty_rows(kind: BackendKind) {
    on_engine(kind, &|e| {
        // 100,003 rows (tiles of a few rows: the last one short), every
        // seventh empty; columns repeat within rows of C.
        let g = spgemm::generate::uniform::<f64>(100_003, 30_000, 6, 7).unwrap();
        let t: Vec<(usize, usize, f64)> = (0..g.nrows())
            .filter(|i| i % 7 != 3)
            .flat_map(|i| {
                let (cols, vals) = g.row(i);
                cols.iter()
                    .zip(vals)
                    .map(move |(&c, &v)| (i, c as usize, v))
            })
            .collect();
        let a = triplets(g.nrows(), g.ncols(), &t);
        let b = spgemm::generate::uniform::<f64>(30_000, 50_000, 9, 8).unwrap();
        let (got, one_pass) = e.product(&a, &b);
        assert!(one_pass);
        let check = spgemm::verify::check_product(&a, &b, &got).unwrap();
        assert!(check.is_ok(), "{check:?}");
        assert!((0..got.nrows())
            .filter(|i| i % 7 == 3)
            .all(|i| got.row_nnz(i) == 0));
    });
}

fn wide_columns_and_the_order_of_sums(kind: BackendKind) {
    on_engine(kind, &|e| {
        // Values of many bits, so that sums taken in another order than
        // the reference's (each row's products by column, stably: A's
        // entries in order, then B's) differ in their last bits; the
        // columns of B's last half of rows past 2²⁷ (too wide for a
        // product's place beside them, whatever the lanes a row), so that
        // warps of narrow rows, of wide rows and of both run.
        let warp = e.warp_width();
        let n = 4 * warp + 64;
        let narrow = overlapping_rows(n).map(|v| v / 3.0 + 0.1);
        let stretch = 1usize << 27;
        let t: Vec<(usize, usize, f64)> = (0..n)
            .flat_map(|j| {
                let (cols, vals) = narrow.row(j);
                cols.iter().zip(vals).map(move |(&c, &v)| {
                    let c = c as usize;
                    (j, if j >= n / 2 { c + stretch } else { c }, v)
                })
            })
            .collect();
        let wide = triplets(n, 4 * n + 8 + stretch, &t);
        for lanes in [4, 8, 16, warp] {
            let lens: Vec<usize> = (0..5000).map(|i| i % (lanes + 1)).collect();
            let a = rows_of(&lens, n).map(|v| 1.0 / (v + 0.7));
            for b in [&narrow, &wide] {
                let want = reference::multiply(&a, b).unwrap();
                let (got, one_pass) = e.product(&a, b);
                assert!(one_pass, "{lanes} lanes");
                assert_eq!(got, want, "{lanes} lanes, {} columns", b.ncols());
            }
        }
    });
}

fn semirings_and_integers(kind: BackendKind) {
    use spgemm::semiring::ProductSpec;
    on_engine(kind, &|e| {
        let n = 4 * e.warp_width() + 64;
        let lens: Vec<usize> = (0..3000).map(|i| i % (e.warp_width() + 1)).collect();
        let a = rows_of(&lens, n).map(|v| v as i64);
        let b = overlapping_rows(n).map(|v| v as i64);
        for semiring in [Semiring::PlusTimes, Semiring::MinPlus, Semiring::PlusPair] {
            let spec = ProductSpec::new().semiring(semiring);
            let want = reference::multiply_spec(a.view(), b.view(), &spec).unwrap();
            let (got, one_pass) = e.product_i64(&a, &b, semiring);
            assert!(one_pass, "{semiring}");
            assert_eq!(got, want, "{semiring}");
        }
    });
}

fn estimates_with_room_and_short(kind: BackendKind) {
    // Rows of 4 to 16 lanes' products (columns repeated: compression about
    // 1.3), and 100,003 rows of uniform random columns (compression about
    // 1): every product in one pass, sized by the sample's estimate.
    let b = overlapping_rows(4 * 16 + 64);
    let lens: Vec<usize> = (0..20_000).map(|i| (i * 7) % 17).collect();
    let short = rows_of(&lens, b.nrows());
    let a = spgemm::generate::uniform::<f64>(100_003, 30_000, 6, 9).unwrap();
    let wide = spgemm::generate::uniform::<f64>(30_000, 50_000, 9, 10).unwrap();
    for (percent, rerun) in [
        (spgemm::gpu::ESTIMATE_PERCENT, false),
        (50, true),
        (0, true),
    ] {
        let config = spgemm::GpuConfig {
            symbolic: SymbolicMode::Estimate,
            estimate_percent: percent,
            ..Default::default()
        };
        on_engine_with(kind, &config, &|e| {
            let want = reference::multiply(&short, &b).unwrap();
            let (got, times) = e.timed(&short, &b);
            assert!(times.one_pass && times.one_pass_estimated, "{percent}%");
            assert_eq!(times.one_pass_rerun, rerun, "{percent}%: ran again");
            assert_eq!(got, want, "{percent}%");
            let (got, times) = e.timed(&a, &wide);
            assert!(times.one_pass && times.one_pass_estimated, "{percent}%");
            assert_eq!(times.one_pass_rerun, rerun, "{percent}%: ran again");
            let check = spgemm::verify::check_product(&a, &wide, &got).unwrap();
            assert!(check.is_ok(), "{percent}%: {check:?}");
        });
    }
}

fn pruned_as_written(kind: BackendKind) {
    // Rows of up to a warp's reach; small integer values, so that
    // magnitudes tie often (the lower column wins) and some sums cancel.
    let lens: Vec<usize> = (0..6000).map(|i| (i * 5) % 33).collect();
    let b = overlapping_rows(4 * 64 + 64);
    let a = rows_of(&lens, b.nrows());
    let cases: Vec<Prune<f64>> = vec![
        Prune {
            below: Some(2.5),
            ..Prune::default()
        },
        Prune {
            keep: Some(3),
            ..Prune::default()
        },
        Prune {
            below: Some(1.0),
            keep: Some(5),
            columns: false,
        },
        Prune {
            keep: Some(0),
            ..Prune::default()
        },
    ];
    for symbolic in [SymbolicMode::Bound, SymbolicMode::Estimate] {
        let config = spgemm::GpuConfig {
            symbolic,
            ..Default::default()
        };
        on_engine_with(kind, &config, &|e| {
            for prune in &cases {
                let what = format!("{symbolic:?} {prune:?}");
                assert_pruned(
                    &a,
                    &b,
                    Semiring::PlusTimes,
                    *prune,
                    e.pruned(&a, &b, prune),
                    &what,
                );
            }
            // Magnitudes that share their high 32 bits and differ in the
            // low ones (1 + k·2⁻⁴⁰: products and sums still exact), so that
            // the selection of the kept ones must look past the high word.
            let near = |m: &CsrMatrix<f64>| m.map(|v| 1.0 + v * 2f64.powi(-40));
            let (an, bn) = (near(&a), near(&b));
            for keep in [3, 7] {
                let prune = Prune {
                    keep: Some(keep),
                    ..Prune::default()
                };
                let what = format!("{symbolic:?} near 1, keep {keep}");
                assert_pruned(
                    &an,
                    &bn,
                    Semiring::PlusTimes,
                    prune,
                    e.pruned(&an, &bn, &prune),
                    &what,
                );
            }
            let (af, bf) = (a.map(|v| v as f32), b.map(|v| v as f32));
            let prune = Prune {
                below: Some(1.0f32),
                keep: Some(4),
                columns: false,
            };
            let what = format!("{symbolic:?} f32");
            assert_pruned(
                &af,
                &bf,
                Semiring::PlusTimes,
                prune,
                e.pruned_f32(&af, &bf, &prune),
                &what,
            );
            let (ai, bi) = (a.map(|v| v as i64), b.map(|v| v as i64));
            for semiring in [Semiring::PlusTimes, Semiring::MinPlus, Semiring::PlusPair] {
                let prune = Prune {
                    below: Some(2),
                    keep: Some(4),
                    columns: false,
                };
                let got = e.pruned_i64(&ai, &bi, semiring, &prune);
                assert_pruned(
                    &ai,
                    &bi,
                    semiring,
                    prune,
                    got,
                    &format!("{symbolic:?} {semiring}"),
                );
            }
        });
    }
}
