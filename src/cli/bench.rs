//! `spgemm bench`: median time, GFLOPS and phases per matrix, optionally
//! side by side with SciPy in the same run, and checked against the reference.

use super::bench_gpu::{Chunked, Devices};
use super::source::{MatrixSource, Operands};
use super::whole_job::{self, PythonJob};
use super::{open_backend, python, CliError, Common};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use spgemm::gpu::SortVariant;
use spgemm::{Backend, CsrMatrix, GpuConfig, Scalar};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

/// `$gpu` with `$m` bound to the devices (`MultiGpu`) of whichever GPU
/// backend `$backend` is, else `$cpu_body` with the CPU backend matched by
/// `$cpu`: one generic body for every vendor.
macro_rules! with_gpu {
    ($backend:expr, $m:ident => $gpu:expr, $cpu:pat => $cpu_body:expr) => {
        match $backend {
            Backend::Cpu($cpu) => $cpu_body,
            #[cfg(feature = "cuda")]
            Backend::Cuda($m) => $gpu,
            #[cfg(feature = "hip")]
            Backend::Hip($m) => $gpu,
        }
    };
}

/// The real matrix bundled with the repository, used when no file is named.
pub const BUNDLED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/matrices/bcsstk16.mtx.gz");

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Products: A (C = A·A, or A·Aᵀ for rectangular A) or A+B (C = A·B;
    /// B's rows must equal A's columns), each a .mtx, .mtx.gz, .npz or
    /// gen:... source; the bundled bcsstk16 when none.
    pub(super) files: Vec<Operands>,
    /// Time the user's whole job per product instead: read the files,
    /// multiply host to host (transfers included), write C to a temporary
    /// file; with --compare scipy-cupy (GPU) or scipy (CPU), the same job
    /// in Python in the same run.
    #[arg(long)]
    whole_job: bool,
    #[command(flatten)]
    pub common: Common,
    /// Timed runs per matrix (the median is reported).
    #[arg(long, default_value_t = 10)]
    pub(super) reps: usize,
    /// Untimed runs before timing.
    #[arg(long, default_value_t = 1)]
    pub(super) warmup: usize,
    /// Check each result against the reference product.
    #[arg(long)]
    pub(super) check: bool,
    /// Under `mpirun -n P`: time the distributed product (rank 0 reads and
    /// scatters, the ranks multiply) and, in the same run, the same
    /// product on rank 0 alone; per phase, bytes moved per rank.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    pub(super) distributed: bool,
    /// With --distributed: auto, 1d or 2d.
    #[cfg(feature = "mpi")]
    #[arg(long, default_value = "auto")]
    pub(super) algorithm: spgemm::distributed::Choice,
    /// With --distributed, 1D rows: messages, shared (B read in place
    /// from the node's shared memory; every rank on one node) or auto
    /// (shared on one node where some rank references at least half of
    /// the rows of B other ranks hold).
    #[cfg(feature = "mpi")]
    #[arg(long, default_value = "auto")]
    pub(super) fetch: spgemm::distributed::Fetch,
    /// With --distributed: A, B and C stay on the ranks' GPUs (1D rows,
    /// B's rows moved GPU to GPU), timed beside rank 0's GPU alone and all
    /// --devices in one process, operands on the devices.
    #[cfg(all(feature = "mpi", any(feature = "cuda", feature = "hip")))]
    #[arg(long, requires = "distributed")]
    pub(super) resident: bool,
    /// With --resident: how B's rows move between GPUs, each timed
    /// (nccl: NCCL, NVIDIA only; rccl: RCCL, AMD only; host: staged
    /// through pinned host memory).
    #[cfg(all(feature = "mpi", any(feature = "cuda", feature = "hip")))]
    #[arg(long, value_enum, value_delimiter = ',', default_value = "host")]
    pub(super) exchange: Vec<super::mpi_resident::Exchange>,
    /// Check only this many rows against the reference (half the rows with
    /// the most products, half evenly spaced), for products too large for
    /// the full sequential reference.
    #[arg(long, conflicts_with = "check")]
    check_rows: Option<usize>,
    /// Also time another library on the same matrices in the same run.
    #[arg(long, value_enum)]
    pub(super) compare: Option<Compare>,
    #[command(flatten)]
    pub(super) semiring: super::bench_semiring::SemiringArgs,
    /// CPU backend: largest number of columns of C for the dense
    /// accumulator (hash accumulator above it).
    #[arg(long)]
    dense_cutoff: Option<usize>,
    /// GPU backends: how the numeric step sorts rows: auto (per table and
    /// bin), bitonic (the whole hash table, DCU §5.3), rank (condense, then
    /// rank sort, OpSparse §5.6.2), condense-bitonic (condense, then bitonic
    /// sort of the entries only), register (the register-aware reg-sort of
    /// short rows in both phases: no hash table, a sorting network in
    /// registers; auto elsewhere), register-hash (the register-aware
    /// reg-hash: each lane inserts an even share of a short row's products
    /// from registers; auto elsewhere).
    #[arg(long, default_value = "auto")]
    sort: SortVariant,
    /// GPU backends: also run the product within this device-memory budget
    /// (bytes; suffixes K, M, G), in chunks of rows, and report the time
    /// against the unbounded product (both wall-clock, transfers included);
    /// with --whole-job, run the whole job's product within it.
    #[arg(long, value_parser = parse_bytes)]
    memory_budget: Option<usize>,
    /// Write the results as a JSON array to this file (.json).
    #[arg(long)]
    pub(super) json: Option<PathBuf>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(super) enum Compare {
    /// SciPy's `A @ B` (scipy.sparse, through python3); with --whole-job,
    /// SciPy's mmread, `A @ B` and mmwrite.
    Scipy,
    /// SuiteSparse:GraphBLAS's plus-times `mxm` on all the host's cores
    /// (python-graphblas, through python3).
    Graphblas,
    /// With --whole-job: SciPy's mmread and mmwrite around CuPy's `A @ B`
    /// on the GPU (uploads and download included).
    ScipyCupy,
    /// cuSPARSE's SpGEMM in this process on the same GPU (backend cuda).
    Cusparse,
    /// rocSPARSE's SpGEMM in this process on the same GPU (backend hip).
    Rocsparse,
}

/// One line of results; the JSON output is an array of these.
#[derive(Serialize, Debug)]
struct Record {
    matrix: String,
    /// The product computed: `A·A`, `A·Aᵀ` (rectangular A) or `A·B`.
    product: &'static str,
    backend: String,
    device: String,
    precision: &'static str,
    rows: usize,
    cols: usize,
    nnz: usize,
    nprod: u64,
    nnz_c: usize,
    compression_ratio: f64,
    reps: usize,
    median_ms: f64,
    gflops: f64,
    /// Median milliseconds of each phase, measured in separate runs.
    phases_ms: BTreeMap<&'static str, f64>,
    /// Extra device memory at the peak, bytes (GPU backends).
    peak_memory_bytes: Option<u64>,
    compared: Option<Compared>,
    check: Option<String>,
    chunked: Option<Chunked>,
    /// `--devices` with several devices: all of them against the first.
    devices: Option<Devices>,
    /// GPU backends: milliseconds to compile the kernels (first use) or load
    /// them from the on-disk cache; near zero after the first matrix of a run.
    kernels_ready_ms: Option<f64>,
    /// GPU backends: the least time the product could take, bound by
    /// device memory.
    bandwidth_floor: Option<BandwidthFloor>,
    /// GPU backends: the kernel table's name (`--table`) and how rows past
    /// its last shared-memory table were computed (`--long-rows`), and the
    /// bins' accumulators (`--accumulator`), and how long rows were cut
    /// between blocks (`--slices`).
    kernel_table: Option<String>,
    long_rows: Option<&'static str>,
    accumulator: Option<&'static str>,
    slices: Option<&'static str>,
    /// GPU backends: how C's row sizes were found in the timed runs
    /// (`--symbolic`): `exact` (a symbolic phase), `bound` or `estimate`
    /// (one pass), `estimate, rerun` (its estimate fell short), `mixed`.
    symbolic: Option<&'static str>,
}

/// Parses a byte count with an optional K, M or G suffix (powers of 1024).
pub fn parse_bytes(s: &str) -> Result<usize, String> {
    let (num, mult) = match s.trim().chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1usize << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("'{s}' is not a byte count (e.g. 2G, 512M)"))
}

/// A product's bandwidth floor: the bytes it must move (A and B read once,
/// C written once) over the device memory's bandwidth, measured once per
/// run with a device-to-device copy.
#[derive(Serialize, Debug)]
struct BandwidthFloor {
    bytes: u128,
    device_bandwidth_gbs: f64,
    floor_ms: f64,
    /// Our median time over the floor.
    times_floor: f64,
}

#[derive(Serialize, Debug, Default)]
struct Compared {
    library: String,
    median_ms: f64,
    gflops: f64,
    nnz_c: usize,
    /// Our speed over theirs (their time / our time).
    speedup: f64,
    /// Median milliseconds of the library's phases, where it has them.
    phases_ms: BTreeMap<&'static str, f64>,
    /// The library's extra device memory at the peak, bytes.
    peak_memory_bytes: Option<u64>,
}

pub fn median(mut t: Vec<f64>) -> f64 {
    t.sort_by(f64::total_cmp);
    let n = t.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        t[n / 2]
    } else {
        (t[n / 2 - 1] + t[n / 2]) / 2.0
    }
}

/// Runs `f` `warmup` times, then `reps` timed times; median milliseconds and the last result.
pub fn time<R>(
    warmup: usize,
    reps: usize,
    mut f: impl FnMut() -> Result<R, CliError>,
) -> Result<(f64, R), CliError> {
    for _ in 0..warmup {
        f()?;
    }
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let r = f()?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        last = Some(r);
    }
    Ok((median(times), last.expect("at least one run")))
}

pub fn run<T: Scalar>(args: &BenchArgs) -> Result<(), CliError> {
    #[cfg(feature = "mpi")]
    if args.distributed {
        return super::mpi_run::bench::<T>(args);
    }
    if let Some(path) = &args.json {
        spgemm::files::check_output(path, false)?;
    }
    // The whole job's product runs within the budget, as `spgemm multiply
    // --memory-budget` does; otherwise the budget is a second, chunked run.
    let options = GpuConfig {
        sort: args.sort,
        memory_budget: args.memory_budget.filter(|_| args.whole_job),
        ..GpuConfig::default()
    };
    let backend = match (
        open_backend(&args.common, options, args.common.verbose)?,
        args.dense_cutoff,
    ) {
        (Backend::Cpu(cpu), Some(n)) => Backend::Cpu(cpu.with_dense_cutoff(n)),
        (b, _) => b,
    };
    let files = if args.files.is_empty() {
        vec![Operands {
            a: MatrixSource::File(PathBuf::from(BUNDLED)),
            b: None,
        }]
    } else {
        args.files.clone()
    };
    check_compare(&backend, args)?;
    if args.semiring.any() {
        if args.whole_job {
            return Err(CliError::Compare(
                "--semiring, --mask-self and --triangles time the product, not the whole job"
                    .into(),
            ));
        }
        return super::bench_semiring::run::<T>(&backend, &files, args);
    }
    if args.whole_job {
        return run_whole_jobs::<T>(&backend, &files, args);
    }
    let bar = if files.len() > 1 {
        let b = ProgressBar::new(files.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let mut records = Vec::new();
    // Measured once per run: each product's bandwidth floor is against it.
    let bandwidth = backend.memory_bandwidth()?;
    if let Some(bw) = bandwidth {
        println!("device memory bandwidth: {:.0} GB/s (a device-to-device copy, read and write counted); floor = bytes of A and B read once and C written once / that bandwidth; x floor = median ms / floor", bw / 1e9);
    }
    let columns = Columns {
        compared: args.compare.is_some(),
        floor: bandwidth.is_some(),
    };
    columns.print_header(matches!(backend, Backend::Cpu(_)));
    for ops in &files {
        bar.set_message(ops.name());
        let r = bench_one::<T>(&backend, ops, args, bandwidth)?;
        bar.suspend(|| columns.print_row(&r));
        records.push(r);
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Some(c) = records.iter().filter_map(|r| r.compared.as_ref()).next() {
        let speedups: Vec<f64> = records
            .iter()
            .filter_map(|r| r.compared.as_ref().map(|c| c.speedup))
            .collect();
        let geo = (speedups.iter().map(|s| s.ln()).sum::<f64>() / speedups.len() as f64).exp();
        let min = speedups.iter().copied().fold(f64::INFINITY, f64::min);
        println!(
            "geomean speedup over {}: {geo:.2}x (min {min:.2}x over {} matrices)",
            c.library,
            speedups.len()
        );
    }
    write_json(args, &records)
}

/// `--json`: the records as a JSON array.
pub(super) fn write_json(args: &BenchArgs, records: &impl Serialize) -> Result<(), CliError> {
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(records).map_err(|e| CliError::Output {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        std::fs::write(path, text + "\n").map_err(|e| CliError::Output {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// A comparison that cannot run here is an error, before anything runs.
fn check_compare(backend: &Backend, args: &BenchArgs) -> Result<(), CliError> {
    let gpu = !matches!(backend, Backend::Cpu(_));
    let why = match (args.compare, args.whole_job) {
        (Some(Compare::ScipyCupy), false) => {
            "--compare scipy-cupy compares whole jobs: add --whole-job"
        }
        (Some(Compare::ScipyCupy), true) if !gpu => {
            "--compare scipy-cupy needs a GPU backend (on the CPU backend use --compare scipy)"
        }
        (Some(Compare::Scipy), true) if gpu => {
            "--whole-job on a GPU backend compares with --compare scipy-cupy"
        }
        (Some(Compare::Cusparse | Compare::Rocsparse | Compare::Graphblas), true) => {
            "--whole-job compares with Python (--compare scipy-cupy or scipy)"
        }
        (Some(Compare::Cusparse), _) if backend.name() != "cuda" => {
            "--compare cusparse needs --backend cuda"
        }
        (Some(Compare::Rocsparse), _) if backend.name() != "hip" => {
            "--compare rocsparse needs --backend hip"
        }
        _ => return Ok(()),
    };
    Err(CliError::Compare(why.into()))
}

fn run_whole_jobs<T: Scalar>(
    backend: &Backend,
    files: &[Operands],
    args: &BenchArgs,
) -> Result<(), CliError> {
    let python = match args.compare {
        Some(Compare::Scipy) => Some(PythonJob::Scipy),
        Some(Compare::ScipyCupy) => Some(PythonJob::ScipyCupy),
        _ => None,
    };
    if args.memory_budget.is_some() && matches!(backend, Backend::Cpu(_)) {
        eprintln!("--memory-budget applies to GPU backends only");
    }
    let bandwidth = backend.pinned_bandwidth()?;
    if let Some((up, down)) = bandwidth {
        println!(
            "pinned bandwidth: {:.1} GB/s host to device, {:.1} GB/s device to host",
            up / 1e9,
            down / 1e9
        );
    }
    whole_job::print_header();
    let mut records = Vec::new();
    for ops in files {
        let runs = (args.warmup, args.reps);
        let r = whole_job::run::<T>(backend, ops, args.common.seed, runs, python, bandwidth)?;
        whole_job::print_row(&r);
        records.push(r);
    }
    write_json(args, &records)
}

/// The table's optional columns: the compared library's time and the
/// speedup (with --compare), the bandwidth floor (GPU backends).
struct Columns {
    compared: bool,
    floor: bool,
}

impl Columns {
    fn print_header(&self, cpu: bool) {
        let mut what = vec![
            "C = A·A per matrix (A·Aᵀ when rectangular, A·B for A+B)".to_string(),
            if cpu {
                "median ms: our product on the CPU (inputs in host memory), over --reps runs"
            } else {
                "median ms: our product on the device, kernels only (inputs already there), over --reps runs"
            }
            .to_string(),
            "GFLOPS = 2·nprod / time".to_string(),
        ];
        if self.compared {
            what.push("other ms: the compared library's, same run; speedup = other / ours".into());
        }
        println!("{}", what.join("; "));
        let mut header = format!(
            "{:<26} {:>9} {:>10} {:>13} {:>11} {:>6} {:>10} {:>8}",
            "matrix", "rows", "nnz", "nprod", "nnz(C)", "ratio", "median ms", "GFLOPS"
        );
        if self.compared {
            header += &format!(" {:>10} {:>8}", "other ms", "speedup");
        }
        if self.floor {
            header += &format!(" {:>9} {:>8}", "floor ms", "x floor");
        }
        println!("{header}");
    }

    fn print_row(&self, r: &Record) {
        let mut row = format!(
            "{:<26} {:>9} {:>10} {:>13} {:>11} {:>6.2} {:>10.3} {:>8.2}",
            r.matrix, r.rows, r.nnz, r.nprod, r.nnz_c, r.compression_ratio, r.median_ms, r.gflops
        );
        if self.compared {
            let (other, speed) = r.compared.as_ref().map_or(("-".into(), "-".into()), |c| {
                (format!("{:.3}", c.median_ms), format!("{:.2}x", c.speedup))
            });
            row += &format!(" {other:>10} {speed:>8}");
        }
        if self.floor {
            let (floor, times) = r
                .bandwidth_floor
                .as_ref()
                .map_or(("-".into(), "-".into()), |f| {
                    (
                        format!("{:.3}", f.floor_ms),
                        format!("{:.1}x", f.times_floor),
                    )
                });
            row += &format!(" {floor:>9} {times:>8}");
        }
        println!("{row}");
        print_details(r);
    }
}

/// The lines under a product's row: its phases, its check, its kernels.
fn print_details(r: &Record) {
    let phases: Vec<String> = r
        .phases_ms
        .iter()
        .map(|(k, v)| format!("{k} {v:.3} ms"))
        .collect();
    if !phases.is_empty() {
        println!("{:<26} phases: {}", "", phases.join(", "));
    }
    if let Some(c) = &r.check {
        println!("{:<26} check: {c}", "");
    }
    if let Some(k) = r.kernels_ready_ms {
        println!(
            "{:<26} kernels ready in {k:.1} ms (compiled, or loaded from the cache); table {}, long rows {}, accumulator {}, slices {}, symbolic {}",
            "",
            r.kernel_table.as_deref().unwrap_or("-"),
            r.long_rows.unwrap_or("-"),
            r.accumulator.unwrap_or("-"),
            r.slices.unwrap_or("-"),
            r.symbolic.unwrap_or("-")
        );
    }
}

fn bench_one<T: Scalar>(
    backend: &Backend,
    ops: &Operands,
    args: &BenchArgs,
    bandwidth: Option<f64>,
) -> Result<Record, CliError> {
    let (a, b, product): (CsrMatrix<T>, _, _) = ops.load(args.common.seed)?;
    let b = b.as_ref().unwrap_or(&a);
    let stats = spgemm::stats::product_stats(&a, b)?;
    #[allow(unused_mut)] // set by GPU backends only
    let mut phases_ms = BTreeMap::new();
    #[allow(unused_mut)] // set by GPU backends only
    let mut kernels_ready_ms = None;
    #[allow(unused_mut)] // set by GPU backends only
    let mut kernel_table = None;
    #[allow(unused_mut)] // set by GPU backends only
    let mut symbolic = None;
    let (median_ms, c, peak_memory_bytes) = with_gpu!(backend, m => {
        let r = super::bench_gpu::time_engine(&m.engines()[0], &a, b, args.warmup, args.reps)?;
        phases_ms = r.phases_ms;
        symbolic = Some(r.symbolic);
        kernels_ready_ms = Some(r.kernels_ready_ms);
        kernel_table = Some(m.engines()[0].table::<T>()?.name);
        (r.median_ms, r.c, Some(r.peak_bytes))
    }, cpu => {
        let (total, c) = time(args.warmup, args.reps, || Ok(cpu.multiply(&a, b)?))?;
        let (sym, plan) = time(0, args.reps, || Ok(cpu.symbolic(&a, b)?))?;
        let (num, _) = time(0, args.reps, || Ok(cpu.numeric(&plan, &a, b)?))?;
        phases_ms.insert("symbolic", sym);
        phases_ms.insert("numeric", num);
        (total, c, None)
    });
    let check = if args.check {
        match spgemm::verify::check_product(&a, b, &c)? {
            Ok(()) => Some("ok".to_string()),
            Err(mismatch) => {
                return Err(CliError::Check {
                    matrix: ops.name(),
                    mismatch,
                })
            }
        }
    } else if let Some(n) = args.check_rows {
        let rows = sample_rows(&stats.nprod, n);
        match spgemm::verify::check_rows(&a, b, &c, &rows)? {
            Ok(()) => Some(format!("ok ({} sampled rows)", rows.len())),
            Err(mismatch) => {
                return Err(CliError::Check {
                    matrix: ops.name(),
                    mismatch,
                })
            }
        }
    } else {
        None
    };
    let compared = match args.compare {
        Some(peer @ (Compare::Scipy | Compare::Graphblas)) => {
            let peer = if peer == Compare::Scipy {
                python::Peer::Scipy
            } else {
                python::Peer::Graphblas
            };
            let s = python_product(peer, ops, &a, args)?;
            Some(Compared {
                library: s.version,
                median_ms: s.median_ms,
                nnz_c: s.nnz_c,
                ..Default::default()
            })
        }
        Some(library @ (Compare::Cusparse | Compare::Rocsparse)) => {
            compare_vendor(backend, library, &a, b, args, &ops.name())
        }
        Some(Compare::ScipyCupy) | None => None,
    }
    .map(|mut c| {
        c.gflops = spgemm::stats::gflops(stats.total_nprod, c.median_ms / 1e3);
        c.speedup = c.median_ms / median_ms;
        c
    });
    let bandwidth_floor = bandwidth.map(|bw| {
        let bytes = spgemm::stats::bandwidth_floor_bytes(
            (a.nrows(), a.nnz()),
            (b.nrows(), b.nnz()),
            (c.nrows(), c.nnz()),
            std::mem::size_of::<T>(),
        );
        let floor_ms = bytes as f64 / bw * 1e3;
        BandwidthFloor {
            bytes,
            device_bandwidth_gbs: bw / 1e9,
            floor_ms,
            times_floor: median_ms / floor_ms,
        }
    });
    Ok(Record {
        matrix: ops.name(),
        product,
        backend: backend.name().into(),
        device: backend.device(),
        precision: T::NAME,
        rows: a.nrows(),
        cols: a.ncols(),
        nnz: a.nnz(),
        nprod: stats.total_nprod,
        nnz_c: c.nnz(),
        compression_ratio: spgemm::stats::compression_ratio(stats.total_nprod, c.nnz()),
        reps: args.reps,
        median_ms,
        gflops: spgemm::stats::gflops(stats.total_nprod, median_ms / 1e3),
        phases_ms,
        peak_memory_bytes,
        compared,
        check,
        chunked: chunked(backend, &a, b, args)?,
        devices: devices(backend, &a, b, &c, args)?,
        kernels_ready_ms,
        bandwidth_floor,
        long_rows: kernel_table.as_ref().map(|_| args.common.long_rows.name()),
        accumulator: kernel_table
            .as_ref()
            .map(|_| args.common.accumulator.name()),
        slices: kernel_table.as_ref().map(|_| args.common.slices.name()),
        kernel_table,
        symbolic,
    })
}

/// `peer`'s product on the same files (generated matrices written to
/// temporary files first).
fn python_product<T: Scalar>(
    peer: python::Peer,
    ops: &Operands,
    a: &CsrMatrix<T>,
    args: &BenchArgs,
) -> Result<python::PythonTiming, CliError> {
    let mut tmp = Vec::new();
    let mut path = |src: &MatrixSource, m: Option<&CsrMatrix<T>>| -> Result<PathBuf, CliError> {
        match src {
            MatrixSource::File(p) => Ok(p.clone()),
            MatrixSource::Gen(_) => {
                let p = std::env::temp_dir().join(format!(
                    "spgemm-bench-{}-{}.mtx",
                    std::process::id(),
                    tmp.len()
                ));
                match m {
                    Some(m) => spgemm::files::write(&p, m, None)?,
                    None => spgemm::files::write(&p, &src.load::<T>(args.common.seed)?, None)?,
                }
                tmp.push(p.clone());
                Ok(p)
            }
        }
    };
    let pa = path(&ops.a, Some(a));
    let pb = match (&pa, &ops.b) {
        (Ok(_), Some(b)) => Some(path(b, None)),
        _ => None,
    };
    let r = match (pa, pb.transpose()) {
        (Ok(pa), Ok(pb)) => {
            python::product(peer, &pa, pb.as_deref(), args.reps, args.warmup, T::NAME)
        }
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    for p in tmp {
        let _ = std::fs::remove_file(p);
    }
    r
}

/// `n` rows to check: half with the most products, half evenly spaced.
fn sample_rows(nprod: &[u64], n: usize) -> Vec<usize> {
    let mut by_work: Vec<usize> = (0..nprod.len()).collect();
    by_work.sort_unstable_by_key(|&i| std::cmp::Reverse(nprod[i]));
    let mut rows: Vec<usize> = by_work.into_iter().take(n / 2).collect();
    let step = (nprod.len() / (n - n / 2).max(1)).max(1);
    rows.extend((0..nprod.len()).step_by(step).take(n - n / 2));
    rows.sort_unstable();
    rows.dedup();
    rows
}

/// The vendor's library (cuSPARSE for cuda, rocSPARSE for hip) on the same
/// GPU, in this process.
fn compare_vendor<T: Scalar>(
    backend: &Backend,
    library: Compare,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    args: &BenchArgs,
    name: &str,
) -> Option<Compared> {
    let (warmup, reps) = (args.warmup, args.reps);
    match (backend, library) {
        #[cfg(feature = "cuda")]
        (Backend::Cuda(m), Compare::Cusparse) => summarize(
            library,
            name,
            spgemm_cuda::cusparse::time(m.engines()[0].device(), a, b, warmup, reps),
        ),
        #[cfg(feature = "hip")]
        (Backend::Hip(m), Compare::Rocsparse) => summarize(
            library,
            name,
            spgemm_hip::rocsparse::time(m.engines()[0].device(), a, b, warmup, reps),
        ),
        _ => {
            // Refused by `check_compare` before anything ran.
            let _ = (a, b, warmup, reps, name);
            None
        }
    }
}

/// Medians of a vendor library's runs, or `None` (with the reason on
/// stderr) when it failed.
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(dead_code))]
fn summarize(
    library: Compare,
    name: &str,
    runs: Result<Vec<spgemm::gpu::VendorRun>, spgemm_core::device::DeviceError>,
) -> Option<Compared> {
    let runs = match runs {
        Ok(r) if !r.is_empty() => r,
        Ok(_) => return None,
        Err(e) => {
            eprintln!("{library:?} comparison failed for {name}: {e}");
            return None;
        }
    };
    let mut phases_ms = BTreeMap::new();
    for (i, (phase, _)) in runs[0].phases_ms.iter().enumerate() {
        phases_ms.insert(
            *phase,
            median(runs.iter().map(|r| r.phases_ms[i].1).collect()),
        );
    }
    Some(Compared {
        library: format!("{library:?}").to_lowercase(),
        median_ms: median(runs.iter().map(|r| r.ms).collect()),
        nnz_c: runs[0].nnz_c,
        phases_ms,
        peak_memory_bytes: runs.iter().map(|r| r.peak_bytes as u64).max(),
        ..Default::default()
    })
}

/// `--memory-budget`: the chunked product against the unbounded one.
fn chunked<T: Scalar>(
    backend: &Backend,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    args: &BenchArgs,
) -> Result<Option<Chunked>, CliError> {
    let Some(budget) = args.memory_budget else {
        return Ok(None);
    };
    let runs = (args.warmup, args.reps);
    with_gpu!(backend, m => {
        super::bench_gpu::chunked(&m.engines()[0], a, b, budget, runs).map(Some)
    }, _ => {
        let _ = (a, b, runs, budget);
        eprintln!("--memory-budget applies to GPU backends only");
        Ok(None)
    })
}

/// `--devices` with more than one device: all of them against the first.
fn devices<T: Scalar>(
    backend: &Backend,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    single: &CsrMatrix<T>,
    args: &BenchArgs,
) -> Result<Option<Devices>, CliError> {
    let runs = (args.warmup, args.reps);
    with_gpu!(backend, m => {
        if m.engines().len() > 1 {
            super::bench_gpu::devices(m, a, b, single, runs).map(Some)
        } else {
            Ok(None)
        }
    }, _ => {
        if args.common.devices.len() > 1 {
            eprintln!("--devices with several devices applies to GPU backends only");
        }
        let _ = (a, b, single, runs);
        Ok(None)
    })
}
