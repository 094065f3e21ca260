//! `spgemm bench --whole-job`: what a user's job costs — read A (and B),
//! multiply on the host's matrices (uploads and downloads included), write
//! C — per step, beside the same job in Python (`--compare scipy-cupy`:
//! SciPy reads and writes, CuPy multiplies on the GPU; `--compare scipy`:
//! SciPy does all three) in the same run, on the same files.

use super::bench::median;
use super::python::{self, PythonTiming};
use super::source::{MatrixSource, Operands};
use super::CliError;
use serde::Serialize;
use spgemm::{Backend, CsrMatrix, Scalar};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Which Python job runs beside ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PythonJob {
    /// SciPy reads, multiplies and writes.
    Scipy,
    /// SciPy reads and writes, CuPy multiplies on the GPU.
    ScipyCupy,
}

/// Median milliseconds of each step of one side's whole job.
#[derive(Serialize, Debug, Clone, Copy, Default)]
pub struct Steps {
    read_ms: f64,
    /// The product with its transfers (ours: upload + product + download).
    multiply_ms: f64,
    write_ms: f64,
    total_ms: f64,
}

impl Steps {
    fn of(runs: &[[f64; 3]]) -> Self {
        let med = |i: usize| median(runs.iter().map(|r| r[i]).collect());
        let (read_ms, multiply_ms, write_ms) = (med(0), med(1), med(2));
        Self {
            read_ms,
            multiply_ms,
            write_ms,
            total_ms: median(runs.iter().map(|r| r.iter().sum()).collect()),
        }
    }
}

/// One matrix's whole job, ours and (optionally) Python's.
#[derive(Serialize, Debug)]
pub struct WholeJob {
    matrix: String,
    product: &'static str,
    backend: String,
    device: String,
    precision: &'static str,
    /// Bytes of the input files and of our output file.
    input_bytes: u64,
    output_bytes: u64,
    nnz_c: usize,
    #[serde(skip)]
    moved: (u64, u64),
    reps: usize,
    ours: Steps,
    /// Our product's parts (medians): upload, kernels, download.
    ours_upload_ms: f64,
    ours_product_ms: f64,
    ours_download_ms: f64,
    /// Whether those parts were timed apart (a whole product on one GPU);
    /// else the product holds all of them and there is no bound.
    apart: bool,
    /// Bytes a host-to-host product must move: A and B up, C down (CSR
    /// arrays), and the bound max(our kernels' time, bytes ÷ the pinned
    /// bandwidth measured in this run), with our product's time over it.
    bytes_moved: u64,
    bound_ms: Option<f64>,
    over_bound: Option<f64>,
    python: Option<Steps>,
    python_version: Option<String>,
    /// Python's time over ours, per step and overall.
    speedup: Option<Steps>,
}

/// A file of `src` to read in the timed job: the file itself, or the
/// generated matrix written once (untimed) to a temporary `.mtx`.
fn as_file<T: Scalar>(
    src: &MatrixSource,
    seed: u64,
    tmp: &mut Vec<PathBuf>,
) -> Result<PathBuf, CliError> {
    match src {
        MatrixSource::File(p) => Ok(p.clone()),
        MatrixSource::Gen(_) => {
            let m: CsrMatrix<T> = src.load(seed)?;
            let p = temp(&format!("{}.mtx", tmp.len()));
            spgemm::files::write(&p, &m, None)?;
            tmp.push(p.clone());
            Ok(p)
        }
    }
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("spgemm-whole-job-{}-{name}", std::process::id()))
}

/// The output's extension: like A's (`.npz`, `.mtx.gz`, else `.mtx`).
fn output_name(a: &Path) -> &'static str {
    let name = a.to_string_lossy();
    if name.ends_with(".npz") {
        "npz"
    } else if name.ends_with(".gz") {
        "mtx.gz"
    } else {
        "mtx"
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Runs the whole job on `ops` `reps` times (after `warmup` untimed
/// products, which compile kernels and allocate pinned buffers), and the
/// Python job as many times when asked.
///
/// # Errors
/// Reading, multiplying, writing; [`CliError::Compare`] when the Python
/// job cannot run.
pub fn run<T: Scalar>(
    backend: &Backend,
    ops: &Operands,
    seed: u64,
    (warmup, reps): (usize, usize),
    python: Option<PythonJob>,
    bandwidth: Option<(f64, f64)>,
) -> Result<WholeJob, CliError> {
    let mut tmp = Vec::new();
    let r = run_in::<T>(backend, ops, seed, (warmup, reps), python, &mut tmp);
    let r = r.map(|mut r| {
        if let Some((up, down)) = bandwidth.filter(|_| r.apart) {
            let (a_b, c) = r.moved;
            let bound = (r.ours_product_ms).max((a_b as f64 / up + c as f64 / down) * 1e3);
            r.bound_ms = Some(bound);
            r.over_bound = Some(r.ours.multiply_ms / bound);
        }
        r
    });
    for p in tmp {
        let _ = std::fs::remove_file(p);
    }
    r
}

fn run_in<T: Scalar>(
    backend: &Backend,
    ops: &Operands,
    seed: u64,
    (warmup, reps): (usize, usize),
    python: Option<PythonJob>,
    tmp: &mut Vec<PathBuf>,
) -> Result<WholeJob, CliError> {
    let a_path = as_file::<T>(&ops.a, seed, tmp)?;
    let b_path = match &ops.b {
        Some(b) => Some(as_file::<T>(b, seed, tmp)?),
        None => None,
    };
    let ext = output_name(&a_path);
    let (ours_out, theirs_out) = (temp(&format!("ours.{ext}")), temp(&format!("python.{ext}")));
    tmp.extend([ours_out.clone(), theirs_out.clone()]);
    // Both sides read from the page cache.
    let mut input_bytes = 0;
    for p in std::iter::once(&a_path).chain(&b_path) {
        input_bytes += std::fs::read(p)
            .map_err(|source| spgemm_core::Error::Io {
                path: p.clone(),
                source,
            })?
            .len() as u64;
    }
    let (a, b, product) = ops.load::<T>(seed)?;
    let csr =
        |m: &CsrMatrix<T>| ((m.nrows() + 1) * 8 + m.nnz() * (4 + std::mem::size_of::<T>())) as u64;
    let inputs = csr(&a) + b.as_ref().map_or(0, csr);
    for _ in 0..warmup {
        backend.multiply(&a, b.as_ref().unwrap_or(&a))?;
    }
    drop((a, b));
    let (mut runs, mut parts, mut nnz_c, mut c_bytes) = (Vec::new(), Vec::new(), 0, 0);
    let mut apart = true;
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        let a: CsrMatrix<T> = spgemm::files::read(&a_path, &Default::default())?;
        let b: Option<CsrMatrix<T>> = match &b_path {
            Some(p) => Some(spgemm::files::read(p, &Default::default())?),
            None if a.nrows() != a.ncols() => Some(a.transpose()?),
            None => None,
        };
        let read = ms(t);
        let t = Instant::now();
        let (c, times) = backend.multiply_timed(&a, b.as_ref().unwrap_or(&a))?;
        let multiply = ms(t);
        let t = Instant::now();
        spgemm::files::write(&ours_out, &c, None)?;
        runs.push([read, multiply, ms(t)]);
        parts.push([times.upload_ms, times.multiply_ms, times.download_ms]);
        apart &= times.apart;
        nnz_c = c.nnz();
        c_bytes = csr(&c);
    }
    let ours = Steps::of(&runs);
    let output_bytes = std::fs::metadata(&ours_out).map_or(0, |m| m.len());
    let (python, version) = match python {
        None => (None, None),
        Some(job) => {
            let mut timings: Vec<PythonTiming> = Vec::new();
            for _ in 0..reps.max(1) {
                timings.push(python::whole_job(
                    &a_path,
                    b_path.as_deref(),
                    &theirs_out,
                    T::NAME,
                    job == PythonJob::ScipyCupy,
                )?);
            }
            if timings[0].nnz_c != nnz_c {
                eprintln!(
                    "note: {}: Python's C has {} entries, ours {nnz_c} (SciPy drops entries that cancel to zero)",
                    ops.name(),
                    timings[0].nnz_c
                );
            }
            let steps: Vec<[f64; 3]> = timings.iter().map(|t| t.steps_ms).collect();
            (Some(Steps::of(&steps)), Some(timings[0].version.clone()))
        }
    };
    let speedup = python.map(|p| Steps {
        read_ms: p.read_ms / ours.read_ms,
        multiply_ms: p.multiply_ms / ours.multiply_ms,
        write_ms: p.write_ms / ours.write_ms,
        total_ms: p.total_ms / ours.total_ms,
    });
    let med = |i: usize| median(parts.iter().map(|r| r[i]).collect());
    Ok(WholeJob {
        matrix: ops.name(),
        product,
        backend: backend.name().into(),
        device: backend.device(),
        precision: T::NAME,
        input_bytes,
        output_bytes,
        nnz_c,
        moved: (inputs, c_bytes),
        bytes_moved: inputs + c_bytes,
        bound_ms: None,
        over_bound: None,
        reps: reps.max(1),
        ours,
        ours_upload_ms: med(0),
        ours_product_ms: med(1),
        ours_download_ms: med(2),
        apart,
        python,
        python_version: version,
        speedup,
    })
}

/// The table's header, with what its columns mean.
pub fn print_header() {
    println!("whole job per product: read the input files, multiply (host to host, transfers included), write C; medians in ms");
    println!("python: the same job in Python in this run; speedup: Python's time / ours");
    println!(
        "{:<34} {:>6} {:>10} {:>10} {:>10} {:>10}   {:>10} {:>10} {:>10} {:>10}   {:>8}",
        "matrix",
        "C=",
        "read",
        "multiply",
        "write",
        "total",
        "py read",
        "py mult",
        "py write",
        "py total",
        "speedup"
    );
}

/// One line of the table, and our product's parts.
pub fn print_row(r: &WholeJob) {
    let p = r.python.unwrap_or_default();
    let dash = |v: f64| {
        if r.python.is_some() {
            format!("{v:.1}")
        } else {
            "-".into()
        }
    };
    println!(
        "{:<34} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>10.1}   {:>10} {:>10} {:>10} {:>10}   {:>8}",
        r.matrix,
        r.product,
        r.ours.read_ms,
        r.ours.multiply_ms,
        r.ours.write_ms,
        r.ours.total_ms,
        dash(p.read_ms),
        dash(p.multiply_ms),
        dash(p.write_ms),
        dash(p.total_ms),
        r.speedup
            .map_or("-".into(), |s| format!("{:.2}x", s.total_ms))
    );
    let s = r.speedup.map_or(String::new(), |s| {
        format!(
            "; speedup read {:.2}x, multiply {:.2}x, write {:.2}x ({})",
            s.read_ms,
            s.multiply_ms,
            s.write_ms,
            r.python_version.as_deref().unwrap_or("?")
        )
    });
    let bound = match (r.bound_ms, r.over_bound) {
        (Some(b), Some(o)) => format!("; bound {b:.1} ms (ours {o:.2}x of it)"),
        _ => String::new(),
    };
    let gbps = |bytes: u64, ms: f64| bytes as f64 / (ms.max(1e-9) * 1e6);
    println!(
        "{:<34} multiply = upload {:.1} + product {:.1} + download {:.1} ms{bound}; nnz(C) {}; read {:.2} GB/s of {} B, write {:.2} GB/s of {} B{s}",
        "",
        r.ours_upload_ms,
        r.ours_product_ms,
        r.ours_download_ms,
        r.nnz_c,
        gbps(r.input_bytes, r.ours.read_ms),
        r.input_bytes,
        gbps(r.output_bytes, r.ours.write_ms),
        r.output_bytes
    );
}
