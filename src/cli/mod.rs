//! Command-line interface: argument definitions and dispatch.

mod bench;
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(dead_code))]
// used by the GPU features
mod bench_gpu;
mod bench_search;
mod bench_semiring;
mod distributed;
mod info;
#[cfg(all(feature = "mpi", any(feature = "cuda", feature = "hip")))]
mod mpi_resident;
#[cfg(feature = "mpi")]
mod mpi_run;
mod product_options;
mod progress;
mod ptap;
mod python;
mod report;
mod source;
mod whole_job;

use clap::{Args, Parser, Subcommand, ValueEnum};
use source::MatrixSource;
use spgemm::gpu::{Accumulator, LongRows, SliceSplit, SymbolicMode};
use spgemm::table::TableConfig;
use spgemm::{Backend, BackendKind, Bool, GpuConfig, Scalar};
use std::path::PathBuf;
use std::time::Instant;

/// Errors of the command-line program.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A library error.
    #[error(transparent)]
    Spgemm(#[from] spgemm::Error),
    /// A core error (I/O, parsing).
    #[error(transparent)]
    Core(#[from] spgemm_core::Error),
    /// A result failed its check against the reference.
    #[error("{matrix}: result differs from the reference: {mismatch}")]
    Check {
        /// Matrix name.
        matrix: String,
        /// The first difference.
        mismatch: spgemm_core::verify::Mismatch,
    },
    /// A product reduced to one value differs from the reference's C
    /// reduced.
    #[error("{matrix}: reduced value {got} differs from the reference's {expected}")]
    Reduced {
        /// Matrix name.
        matrix: String,
        /// The value computed.
        got: f64,
        /// The reference's.
        expected: f64,
    },
    /// A comparison asked for cannot run (wrong backend, Python, SciPy or
    /// CuPy missing or failing).
    #[error("comparison: {0}")]
    Compare(String),
    /// An argument is malformed (a generator spec).
    #[error("{0}")]
    Argument(String),
    /// Writing a report failed.
    #[error("output {path}: {message}")]
    Output {
        /// File.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// Sparse matrix-matrix multiplication (SpGEMM) on GPUs and CPUs.
#[derive(Parser, Debug)]
#[command(name = "spgemm", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// C = A·B (without B: A·A, or A·Aᵀ for a rectangular A), written as
    /// .mtx, .mtx.gz or .npz by the output's extension.
    Multiply(MultiplyArgs),
    /// Time C = A·A (A·Aᵀ for rectangular A, A·B for A+B) per product, or
    /// the whole job (read, multiply, write) with --whole-job.
    Bench(bench::BenchArgs),
    /// Shape, field, symmetry, row-length histogram, products and
    /// compression ratio of A·A (A·Aᵀ for a rectangular A).
    Info(info::InfoArgs),
    /// Write a synthetic matrix (stencil, R-MAT, Erdős–Rényi, long rows) as
    /// .mtx, .mtx.gz or .npz.
    Gen(GenArgs),
    /// Results of several `bench --json` runs side by side: table and SVG chart.
    Report(report::ReportArgs),
    /// Predict a distributed product over P ranks from the structure
    /// alone: bytes each rank sends and receives, memory and products, 1D
    /// and 2D, for P up to thousands (no MPI needed).
    PlanDistributed(distributed::PlanArgs),
    /// The Galerkin product Pᵀ·A·P (or R·A·P) of algebraic multigrid:
    /// its setup and a re-setup with A's values, timed apart.
    Ptap(ptap::PtapArgs),
}

/// Options shared by the commands that multiply.
#[derive(Args, Debug, Clone)]
struct Common {
    /// Backend: auto (best present), cpu, cuda or hip.
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// Value type: f64 or f32, or i64 or i32 for integer values (counts,
    /// weights; files of other values are refused at the first value that
    /// is not an integer of the type), or bool (`multiply` only: 0 and 1,
    /// or a pattern file; + is or, × is and).
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
    /// Say which backend runs the product and why (on standard error).
    #[arg(short, long)]
    verbose: bool,
    /// Seed for generated matrices (`gen:` sources).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// GPU backends: device ordinals to use together, e.g. 0,1 (A's rows
    /// are split between them by products, B is copied to each).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    devices: Vec<usize>,
    /// GPU backends: kernel table: device (the device's own: the DCU
    /// paper's on gfx906, derived elsewhere), derived, v100-paper, dcu-paper.
    #[arg(long, default_value = "device")]
    table: TableConfig,
    /// GPU backends: rows past the last shared-memory table: auto, dense,
    /// sorted-hash (DCU kernel 8), in-place-hash (DCU kernel 9), ranked
    /// (bitmaps in shared memory ranking columns, values in C).
    #[arg(long, default_value = "auto")]
    long_rows: LongRows,
    /// GPU backends: accumulators of the bins: auto (dense in shared memory
    /// where C is narrow enough, ranked bitmaps where only its bitmap fits,
    /// short rows without repeated columns sorted without a hash table,
    /// hash tables elsewhere), unranked (the same without the ranked
    /// bitmaps), dense-hash (nor the sorted rows), hash (hash tables
    /// everywhere), packed (auto with B packed into words of columns in
    /// the symbolic hash tables when that cuts its entries by over 15%).
    #[arg(long, default_value = "auto")]
    accumulator: Accumulator,
    /// GPU backends: how the global paths that split a long row between
    /// blocks (--long-rows dense, sorted-hash) cut it: entries (equal
    /// stretches of A's entries) or products (about equal products).
    #[arg(long, default_value = "entries")]
    slices: SliceSplit,
    /// GPU backends: how C's row sizes are found: exact (a symbolic phase
    /// counts them), bound (no symbolic phase: rows of at most 8 products
    /// per lane of a warp are computed into room for their products,
    /// counted and placed in one pass; other products run exact), estimate
    /// (bound's one pass into room for the nnz(C) that a sample of rows
    /// estimates, run again into exact room when it falls short), auto
    /// (bound for rows of at most 32 products, for rows of at most 128
    /// whose sampled compression ratio is at most 2.5 and for longer rows
    /// whose ratio is at most 1.25; estimate where only its room fits the
    /// device).
    #[arg(long, default_value = "auto")]
    symbolic: SymbolicMode,
    /// GPU backends: the room that --symbolic estimate gives C, in percent
    /// of the estimated nnz(C) (below 100 it falls short on purpose).
    #[arg(long, default_value_t = spgemm::gpu::ESTIMATE_PERCENT)]
    estimate_percent: u32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Precision {
    F32,
    F64,
    I32,
    I64,
    Bool,
}

/// The error for `--precision bool` outside `spgemm multiply`.
fn booleans_multiply_only() -> CliError {
    CliError::Argument(
        "--precision bool runs with `spgemm multiply` only (not --distributed, bench or ptap)"
            .into(),
    )
}

#[derive(Args, Debug)]
struct MultiplyArgs {
    /// A: a .mtx, .mtx.gz or .npz file, or a generator such as gen:stencil7:32.
    a: MatrixSource,
    /// B, as A (without B: A·A, or A·Aᵀ when A is not square).
    b: Option<MatrixSource>,
    /// Output file for C (.mtx, .mtx.gz to compress, or .npz).
    #[arg(short, long)]
    output: PathBuf,
    /// Also write the times of the steps (read, upload, product, download,
    /// write; milliseconds) as JSON to this file (.json).
    #[arg(long)]
    timings: Option<PathBuf>,
    /// GPU backends: device memory to use per device (bytes; suffixes K,
    /// M, G); larger products run in chunks of rows. Default: the free
    /// device memory.
    #[arg(long, value_parser = bench::parse_bytes)]
    memory_budget: Option<usize>,
    /// Run over the ranks of `mpirun -n P spgemm multiply ... --distributed`:
    /// rank 0 reads and scatters A's and B's rows, each rank multiplies on
    /// its GPU (the node-local rank picks one of --devices) or the CPU,
    /// rank 0 gathers and writes C.
    #[cfg(feature = "mpi")]
    #[arg(long)]
    distributed: bool,
    /// With --distributed: auto (the algorithm whose busiest rank moves
    /// the fewest bytes of A and B), 1d (rows of B fetched) or 2d (sparse
    /// SUMMA on a square number of ranks).
    #[cfg(feature = "mpi")]
    #[arg(long, default_value = "auto")]
    algorithm: spgemm::distributed::Choice,
    /// With --distributed, 1D rows: how a rank reads other ranks' rows of
    /// B: messages (fetched and assembled into B̂), shared (read in place
    /// from the node's shared memory: every rank on one node; 1D under
    /// --algorithm auto) or auto (shared on one node where some rank
    /// references at least half of the rows of B other ranks hold).
    #[cfg(feature = "mpi")]
    #[arg(long, default_value = "auto")]
    fetch: spgemm::distributed::Fetch,
    /// With --distributed: A, B and C stay on the ranks' GPUs between
    /// reading and writing (1D rows, B's rows moved GPU to GPU by
    /// --exchange).
    #[cfg(all(feature = "mpi", any(feature = "cuda", feature = "hip")))]
    #[arg(long, requires = "distributed")]
    resident: bool,
    /// With --resident: nccl (NVIDIA, feature nccl), rccl (AMD, feature
    /// rccl) or host (staged through pinned host memory and MPI).
    #[cfg(all(feature = "mpi", any(feature = "cuda", feature = "hip")))]
    #[arg(long, value_enum, default_value = "host")]
    exchange: mpi_resident::Exchange,
    #[command(flatten)]
    product: product_options::ProductOptions,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct GenArgs {
    /// Generator: stencil7:N, stencil27:N, fem27:N:DOF, poisson7:N, sa-p:N,
    /// sa-pt:N, rmat:SCALE:EDGE_FACTOR[:A:B:C],
    /// er:ROWS:PER_ROW, longrows:ROWS:SHORT:NLONG:LONG (with or without `gen:`).
    spec: String,
    /// Output file (.mtx, .mtx.gz or .npz).
    #[arg(short, long)]
    output: PathBuf,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        #[cfg(feature = "mpi")]
        Command::Multiply(a) if a.distributed && !a.product.is_plain() => Err(CliError::Argument(
            "--semiring, --mask, --prune and --keep do not run with --distributed".into(),
        )),
        #[cfg(feature = "mpi")]
        Command::Multiply(a) if a.distributed => match a.common.precision {
            Precision::F64 => mpi_run::multiply::<f64>(&a),
            Precision::F32 => mpi_run::multiply::<f32>(&a),
            Precision::I64 => mpi_run::multiply::<i64>(&a),
            Precision::I32 => mpi_run::multiply::<i32>(&a),
            Precision::Bool => Err(booleans_multiply_only()),
        },
        Command::Multiply(a) => match a.common.precision {
            Precision::F64 => multiply::<f64>(&a),
            Precision::F32 => multiply::<f32>(&a),
            Precision::I64 => multiply::<i64>(&a),
            Precision::I32 => multiply::<i32>(&a),
            Precision::Bool => multiply::<Bool>(&a),
        },
        Command::Bench(a) => match a.common.precision {
            Precision::F64 => bench::run::<f64>(&a),
            Precision::F32 => bench::run::<f32>(&a),
            Precision::I64 => bench::run::<i64>(&a),
            Precision::I32 => bench::run::<i32>(&a),
            Precision::Bool => Err(booleans_multiply_only()),
        },
        Command::Info(a) => info::run(&a),
        Command::Report(a) => report::run(&a),
        Command::PlanDistributed(a) => distributed::plan(&a),
        Command::Ptap(a) => match a.common.precision {
            Precision::F64 => ptap::run::<f64>(&a),
            Precision::F32 => ptap::run::<f32>(&a),
            Precision::I64 => ptap::run::<i64>(&a),
            Precision::I32 => ptap::run::<i32>(&a),
            Precision::Bool => Err(booleans_multiply_only()),
        },
        Command::Gen(a) => {
            spgemm::files::check_output(&a.output, true)?;
            let spec = if a.spec.starts_with("gen:") {
                a.spec.clone()
            } else {
                format!("gen:{}", a.spec)
            };
            let src: MatrixSource = spec.parse().map_err(CliError::Argument)?;
            let m = src.load::<f64>(a.seed)?;
            spgemm::files::write(&a.output, &m, None)?;
            eprintln!(
                "wrote {} ({}x{}, {} entries)",
                a.output.display(),
                m.nrows(),
                m.ncols(),
                m.nnz()
            );
            Ok(())
        }
    }
}

/// Opens the backend with `options` (its device list from `common`) and
/// tells the user which one and why when `verbose`, or when `auto` fell
/// back to the CPU although a GPU backend was compiled in.
fn open_backend(common: &Common, options: GpuConfig, verbose: bool) -> Result<Backend, CliError> {
    let options = GpuConfig {
        devices: common.devices.clone(),
        table: common.table,
        long_rows: common.long_rows,
        accumulator: common.accumulator,
        slices: common.slices,
        symbolic: common.symbolic,
        estimate_percent: common.estimate_percent,
        ..options
    };
    let (backend, why) = Backend::select_with(common.backend, &options)?;
    let fell_back = matches!(backend, Backend::Cpu(_))
        && common.backend == BackendKind::Auto
        && cfg!(any(feature = "cuda", feature = "hip"));
    if verbose || fell_back {
        eprintln!(
            "backend: {} on {} ({why})",
            backend.name(),
            backend.device()
        );
    }
    if matches!(backend, Backend::Cpu(_)) {
        if common.table != TableConfig::default() {
            eprintln!("--table applies to GPU backends only");
        }
        if common.long_rows != LongRows::default() {
            eprintln!("--long-rows applies to GPU backends only");
        }
        if common.accumulator != Accumulator::default() {
            eprintln!("--accumulator applies to GPU backends only");
        }
        if common.slices != SliceSplit::default() {
            eprintln!("--slices applies to GPU backends only");
        }
        if common.symbolic != SymbolicMode::default() {
            eprintln!("--symbolic applies to GPU backends only");
        }
        if common.estimate_percent != spgemm::gpu::ESTIMATE_PERCENT {
            eprintln!("--estimate-percent applies to GPU backends only");
        }
    }
    Ok(backend)
}

fn multiply<T: Scalar>(args: &MultiplyArgs) -> Result<(), CliError> {
    let options = GpuConfig {
        memory_budget: args.memory_budget,
        ..GpuConfig::default()
    };
    spgemm::files::check_output(&args.output, true)?;
    if let Some(path) = &args.timings {
        spgemm::files::check_output(path, false)?;
    }
    let plain = args.product.is_plain();
    let backend = open_backend(&args.common, options, args.common.verbose)?;
    let t = Instant::now();
    let a = args.a.load::<T>(args.common.seed)?;
    let mask = args.product.load_mask::<T>(args.common.seed)?;
    let b = match &args.b {
        Some(s) => Some(s.load::<T>(args.common.seed)?),
        // A·Aᵀ for a rectangular A alone, as `bench` and `info` do.
        None if a.nrows() != a.ncols() => {
            eprintln!(
                "A is {}x{}, not square: computing C = A·Aᵀ (give B for another product)",
                a.nrows(),
                a.ncols()
            );
            Some(a.transpose()?)
        }
        None => None,
    };
    let read_ms = ms(t);
    let b_ref = b.as_ref().unwrap_or(&a);
    let mut what = match &args.b {
        Some(_) => "A·B",
        None if b.is_some() => "A·Aᵀ",
        None => "A·A",
    }
    .to_string();
    let stats = spgemm::stats::product_stats(&a, b_ref)?;
    let step = progress::Step::new("multiplying", None, false);
    let (c, times) = if plain {
        step.spin(|| backend.multiply_timed(&a, b_ref))?
    } else {
        what = format!("{what} ({})", args.product.describe());
        let (c, multiply_ms) =
            step.spin(|| args.product.multiply(&backend, &a, b_ref, mask.as_ref()))?;
        let times = spgemm::gpu::HostTimes {
            multiply_ms,
            ..Default::default()
        };
        (c, times)
    };
    let t = Instant::now();
    let step = progress::Step::new(
        format!("writing {}", args.output.display()),
        Some(c.nnz() as u64),
        false,
    );
    let report = |done: u64| step.set(done);
    spgemm::files::write(&args.output, &c, Some(&report))?;
    drop(step);
    let write_ms = ms(t);
    let secs = times.multiply_ms / 1e3;
    eprintln!(
        "C = {}: {}x{}, nnz(C) {}, nprod {}, compression ratio {:.2}, {:.2} GFLOPS; read {}, upload {}, product {}, download {}, write {}; wrote {}",
        what,
        c.nrows(),
        c.ncols(),
        c.nnz(),
        stats.total_nprod,
        spgemm::stats::compression_ratio(stats.total_nprod, c.nnz()),
        spgemm::stats::gflops(stats.total_nprod, secs),
        duration(read_ms),
        duration(times.upload_ms),
        duration(times.multiply_ms),
        duration(times.download_ms),
        duration(write_ms),
        args.output.display()
    );
    if let Some(path) = &args.timings {
        let json = serde_json::json!({
            "backend": backend.name(),
            "device": backend.device(),
            "precision": T::NAME,
            "nnz_a": a.nnz(),
            "nnz_b": b_ref.nnz(),
            "nnz_c": c.nnz(),
            "nprod": stats.total_nprod,
            "read_ms": read_ms,
            "upload_ms": times.upload_ms,
            "product_ms": times.multiply_ms,
            "download_ms": times.download_ms,
            "write_ms": write_ms,
        });
        std::fs::write(path, format!("{json:#}\n")).map_err(|e| CliError::Output {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    }
    Ok(())
}

/// Milliseconds since `t`.
fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// `12.3 ms` below a second, `1.23 s` above.
fn duration(ms: f64) -> String {
    if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1e3)
    }
}
