//! The GPU side of `spgemm bench`, written once over the `Device` trait for
//! every GPU backend: device-event times and phases, the product within a
//! memory budget, and several devices against one.

use super::bench::{median, time};
use super::CliError;
use serde::Serialize;
use spgemm::gpu::{GpuEngine, MultiGpu, PhaseTimes};
use spgemm::{CsrMatrix, Scalar};
use spgemm_core::device::Device;
use std::collections::BTreeMap;
use std::time::Instant;

/// Device-event times of one matrix.
pub struct GpuRun<T> {
    /// Median milliseconds of the whole product.
    pub median_ms: f64,
    /// Median milliseconds of each phase.
    pub phases_ms: BTreeMap<&'static str, f64>,
    /// Largest extra device memory of any run, bytes.
    pub peak_bytes: u64,
    /// The last result, on the host.
    pub c: CsrMatrix<T>,
    /// Milliseconds to compile or load the kernels.
    pub kernels_ready_ms: f64,
    /// How the timed runs found C's row sizes: `exact` (a symbolic
    /// phase), `bound` or `estimate` (one pass into room for nprod(C) or
    /// for an estimate of nnz(C)), `estimate, rerun` (the estimate fell
    /// short and the pass ran again), `mixed` when the runs differed.
    pub symbolic: &'static str,
}

/// Times `C = A·B` on `engine` with device events: transfers excluded, C's
/// allocation included; `warmup` untimed runs, then `reps` timed ones.
pub fn time_engine<D: Device, T: Scalar>(
    engine: &GpuEngine<D>,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    warmup: usize,
    reps: usize,
) -> Result<GpuRun<T>, CliError> {
    let t = Instant::now();
    engine.prepare::<T>()?;
    let kernels_ready_ms = t.elapsed().as_secs_f64() * 1e3;
    let (ga, gb) = (engine.upload(a)?, engine.upload(b)?);
    for _ in 0..warmup {
        engine.multiply(&ga, &gb)?;
    }
    let mut runs = Vec::new();
    let mut last = None;
    for _ in 0..reps.max(1) {
        let (c, t) = engine.multiply(&ga, &gb)?;
        runs.push(t);
        last = Some(c);
    }
    let phase = |f: fn(&PhaseTimes) -> f64| median(runs.iter().map(f).collect());
    let mut phases_ms = BTreeMap::new();
    phases_ms.insert("setup", phase(|t| t.setup_ms));
    phases_ms.insert("symbolic", phase(|t| t.symbolic_ms));
    phases_ms.insert("numeric", phase(|t| t.numeric_ms));
    Ok(GpuRun {
        median_ms: phase(|t| t.total_ms),
        phases_ms,
        peak_bytes: runs.iter().map(|t| t.peak_bytes as u64).max().unwrap_or(0),
        symbolic: symbolic_path(&runs),
        c: engine.download(&last.expect("at least one run"))?,
        kernels_ready_ms,
    })
}

/// [`GpuRun::symbolic`] of `runs`.
fn symbolic_path(runs: &[PhaseTimes]) -> &'static str {
    let path = |t: &PhaseTimes| match (t.one_pass, t.one_pass_estimated, t.one_pass_rerun) {
        (false, _, _) => "exact",
        (true, false, _) => "bound",
        (true, true, false) => "estimate",
        (true, true, true) => "estimate, rerun",
    };
    let first = runs.first().map_or("exact", path);
    if runs.iter().all(|t| path(t) == first) {
        first
    } else {
        "mixed"
    }
}

/// The product within a device-memory budget, against the unbounded one.
#[derive(Serialize, Debug)]
pub struct Chunked {
    budget_bytes: usize,
    chunks: usize,
    /// Median wall-clock milliseconds, transfers included.
    median_ms: f64,
    /// The unbounded product, measured the same way.
    unbounded_ms: f64,
    /// Whether both results have the same structure.
    same_structure: bool,
}

/// `--memory-budget`: the chunked product against the unbounded one, both
/// host to host.
pub fn chunked<D: Device, T: Scalar>(
    engine: &GpuEngine<D>,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    budget: usize,
    (warmup, reps): (usize, usize),
) -> Result<Chunked, CliError> {
    let (median_ms, (c, chunks)) =
        time(warmup, reps, || Ok(engine.multiply_chunked(a, b, budget)?))?;
    let (unbounded_ms, full) = time(warmup, reps, || Ok(engine.multiply_host(a, b)?))?;
    println!(
        "{:<26} budget {} MiB: {chunks} chunks, {median_ms:.3} ms vs unbounded {unbounded_ms:.3} ms (ratio {:.2})",
        "",
        budget >> 20,
        median_ms / unbounded_ms
    );
    Ok(Chunked {
        budget_bytes: budget,
        chunks,
        median_ms,
        unbounded_ms,
        same_structure: c.same_structure(&full),
    })
}

/// Several devices against the first one alone.
#[derive(Serialize, Debug)]
pub struct Devices {
    /// Device names in order.
    devices: Vec<String>,
    /// Rows of A (and C) per device.
    rows: Vec<usize>,
    /// Median wall-clock milliseconds on all devices at once (operands
    /// already on the devices, C left there, as for one device).
    median_ms: f64,
    /// The same on the first device alone.
    single_ms: f64,
    /// `single_ms / median_ms`.
    speedup: f64,
    /// Whether C has the same structure as on one device.
    same_structure: bool,
    /// Largest |difference| of C's values from one device's, over C's
    /// largest |value| (0 when identical; summation order varies with
    /// shared-memory atomics).
    max_relative_difference: f64,
}

/// `--devices` with more than one device: the product on all of them
/// against the first alone, wall-clock, and the results compared.
pub fn devices<D: Device, T: Scalar>(
    m: &MultiGpu<D>,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    single: &CsrMatrix<T>,
    (warmup, reps): (usize, usize),
) -> Result<Devices, CliError> {
    let ops = m.upload(a, b)?;
    let (median_ms, blocks) = time(warmup, reps, || Ok(m.multiply(&ops)?))?;
    let c = m.download(&blocks)?;
    drop(blocks);
    let first = &m.engines()[0];
    let (ga, gb) = (first.upload(a)?, first.upload(b)?);
    let (single_ms, _) = time(warmup, reps, || Ok(first.multiply(&ga, &gb)?))?;
    let same_structure = c.same_structure(single);
    let max_relative_difference = if same_structure {
        let scale = single
            .values()
            .iter()
            .fold(0.0f64, |s, v| s.max(v.to_f64().abs()));
        let diff = c
            .values()
            .iter()
            .zip(single.values())
            .fold(0.0f64, |s, (x, y)| s.max((x.to_f64() - y.to_f64()).abs()));
        if scale > 0.0 {
            diff / scale
        } else {
            diff
        }
    } else {
        f64::INFINITY
    };
    let r = Devices {
        devices: m
            .engines()
            .iter()
            .map(|e| e.device().properties().name.clone())
            .collect(),
        rows: ops.rows().iter().map(|r| r.len()).collect(),
        median_ms,
        single_ms,
        speedup: single_ms / median_ms,
        same_structure,
        max_relative_difference,
    };
    println!(
        "{:<26} {} devices: {median_ms:.3} ms vs one {single_ms:.3} ms (speedup {:.2}x), rows {:?}, same structure: {same_structure}, max relative difference {max_relative_difference:.1e}",
        "",
        r.devices.len(),
        r.speedup,
        r.rows
    );
    Ok(r)
}
