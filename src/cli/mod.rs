//! Command-line interface: argument definitions and dispatch.

mod bench;
#[cfg_attr(not(any(feature = "cuda", feature = "hip")), allow(dead_code))]
// used by the GPU features
mod bench_gpu;
mod info;
mod report;
mod scipy;
mod source;

use clap::{Args, Parser, Subcommand, ValueEnum};
use source::MatrixSource;
use spgemm::gpu::{Accumulator, LongRows};
use spgemm::table::TableConfig;
use spgemm::{Backend, BackendKind, GpuOptions, Scalar};
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
    /// Writing a report failed.
    #[error("{path}: {message}")]
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
    /// C = A·B (B defaults to A), written as Matrix Market.
    Multiply(MultiplyArgs),
    /// Time C = A·A (A·Aᵀ for rectangular A) per matrix.
    Bench(bench::BenchArgs),
    /// Size, row-length histogram, products and compression ratio of A·A.
    Info(info::InfoArgs),
    /// Write a synthetic matrix (stencil, R-MAT, Erdős–Rényi, long rows).
    Gen(GenArgs),
    /// Results of several `bench --json` runs side by side: table and SVG chart.
    Report(report::ReportArgs),
}

/// Options shared by the commands that multiply.
#[derive(Args, Debug, Clone)]
struct Common {
    /// Backend: auto (best present), cpu, cuda or hip.
    #[arg(long, default_value = "auto")]
    backend: BackendKind,
    /// Value precision.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
    /// Seed for generated matrices (`gen:` sources).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// GPU backends: device ordinals to use together, e.g. 0,1 (A's rows
    /// are split between them by products, B is copied to each).
    #[arg(long, value_delimiter = ',', default_value = "0")]
    devices: Vec<usize>,
    /// GPU backends: kernel table: device (the device's own: the DCU
    /// paper's on gfx906, derived elsewhere), derived, v100-paper, dcu-paper.
    #[arg(long, default_value = "device", value_parser = parse_table)]
    table: TableConfig,
    /// GPU backends: rows past the last shared-memory table: auto, dense,
    /// sorted-hash (DCU kernel 8), in-place-hash (DCU kernel 9).
    #[arg(long, default_value = "auto", value_parser = parse_long_rows)]
    long_rows: LongRows,
    /// GPU backends: accumulators of the bins: auto (dense in shared memory
    /// where C is narrow enough, hash tables elsewhere), hash.
    #[arg(long, default_value = "auto", value_parser = parse_accumulator)]
    accumulator: Accumulator,
}

fn parse_table(s: &str) -> Result<TableConfig, String> {
    TableConfig::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = TableConfig::ALL.iter().map(|c| c.name()).collect();
        format!("unknown kernel table '{s}' (one of: {})", names.join(", "))
    })
}

fn parse_accumulator(s: &str) -> Result<Accumulator, String> {
    Accumulator::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Accumulator::ALL.iter().map(|c| c.name()).collect();
        format!("unknown accumulator '{s}' (one of: {})", names.join(", "))
    })
}

fn parse_long_rows(s: &str) -> Result<LongRows, String> {
    LongRows::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = LongRows::ALL.iter().map(|c| c.name()).collect();
        format!(
            "unknown long-row variant '{s}' (one of: {})",
            names.join(", ")
        )
    })
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Precision {
    F32,
    F64,
}

#[derive(Args, Debug)]
struct MultiplyArgs {
    /// A: a .mtx or .mtx.gz file, or a generator such as gen:stencil7:32.
    a: MatrixSource,
    /// B (defaults to A).
    b: Option<MatrixSource>,
    /// Output file for C (.mtx, or .mtx.gz to compress).
    #[arg(short, long)]
    output: PathBuf,
    /// GPU backends: device memory to use per device (bytes; suffixes K,
    /// M, G); larger products run in chunks of rows. Default: the free
    /// device memory.
    #[arg(long, value_parser = bench::parse_bytes)]
    memory_budget: Option<usize>,
    #[command(flatten)]
    common: Common,
}

#[derive(Args, Debug)]
struct GenArgs {
    /// Generator: stencil7:N, stencil27:N, rmat:SCALE:EDGE_FACTOR,
    /// er:ROWS:PER_ROW, longrows:ROWS:SHORT:NLONG:LONG (with or without `gen:`).
    spec: String,
    /// Output file (.mtx or .mtx.gz).
    #[arg(short, long)]
    output: PathBuf,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Multiply(a) => match a.common.precision {
            Precision::F64 => multiply::<f64>(&a),
            Precision::F32 => multiply::<f32>(&a),
        },
        Command::Bench(a) => match a.common.precision {
            Precision::F64 => bench::run::<f64>(&a),
            Precision::F32 => bench::run::<f32>(&a),
        },
        Command::Info(a) => info::run(&a),
        Command::Report(a) => report::run(&a),
        Command::Gen(a) => {
            let spec = if a.spec.starts_with("gen:") {
                a.spec.clone()
            } else {
                format!("gen:{}", a.spec)
            };
            let src: MatrixSource = spec
                .parse()
                .map_err(|m: String| spgemm_core::Error::Unsupported(m))?;
            let m = src.load::<f64>(a.seed)?;
            spgemm::mtx::write_path(&a.output, &m)?;
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
/// tells the user which one and why.
fn open_backend(common: &Common, options: GpuOptions) -> Result<Backend, CliError> {
    let options = GpuOptions {
        devices: common.devices.clone(),
        table: common.table,
        long_rows: common.long_rows,
        accumulator: common.accumulator,
        ..options
    };
    let (backend, why) = Backend::select_with(common.backend, &options)?;
    eprintln!(
        "backend: {} on {} ({why})",
        backend.name(),
        backend.device()
    );
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
    }
    Ok(backend)
}

fn multiply<T: Scalar>(args: &MultiplyArgs) -> Result<(), CliError> {
    let options = GpuOptions {
        memory_budget: args.memory_budget,
        ..GpuOptions::default()
    };
    let backend = open_backend(&args.common, options)?;
    let a = args.a.load::<T>(args.common.seed)?;
    let b = match &args.b {
        Some(s) => Some(s.load::<T>(args.common.seed)?),
        None => None,
    };
    let b_ref = b.as_ref().unwrap_or(&a);
    let stats = spgemm::stats::product_stats(&a, b_ref)?;
    let start = Instant::now();
    let c = backend.multiply(&a, b_ref)?;
    let secs = start.elapsed().as_secs_f64();
    spgemm::mtx::write_path(&args.output, &c)?;
    eprintln!(
        "C = A·B: {}x{}, nnz(C) {}, nprod {}, compression ratio {:.2}, {:.3} ms, {:.2} GFLOPS; wrote {}",
        c.nrows(),
        c.ncols(),
        c.nnz(),
        stats.total_nprod,
        spgemm::stats::compression_ratio(stats.total_nprod, c.nnz()),
        secs * 1e3,
        spgemm::stats::gflops(stats.total_nprod, secs),
        args.output.display()
    );
    Ok(())
}
