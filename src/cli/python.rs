//! The Python equivalents that `spgemm bench` compares against, run through
//! `python3` in the same run: SciPy's SpGEMM (`A @ B` on `scipy.sparse`
//! CSR matrices), SuiteSparse:GraphBLAS's plus-times `mxm` (through
//! python-graphblas, on all the host's cores), and the whole job of a
//! Python user — `scipy.io.mmread` (fast_matrix_market inside), `A @ B` on
//! the CPU (SciPy) or on the GPU (CuPy, `cupyx.scipy.sparse`, with uploads
//! and the download of C), and `scipy.io.mmwrite`.

use super::CliError;
use std::path::Path;

/// Shared by both scripts: reading a matrix file as SciPy CSR, B as A (or
/// Aᵀ for rectangular A) when no B is given.
const LOAD: &str = r#"
import sys, json, time, statistics, gzip
import numpy as np, scipy, scipy.io, scipy.sparse as sp
DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}
def load(path, dt):
    m = sp.load_npz(path) if path.endswith(".npz") else scipy.io.mmread(path)
    m = sp.csr_matrix(m).astype(dt, copy=False)
    m.sum_duplicates()
    return m
def operands(pa, pb, dt):
    A = load(pa, dt)
    if pb != "-":
        return A, load(pb, dt)
    return A, (A if A.shape[0] == A.shape[1] else A.T.tocsr())
"#;

/// Times `A @ B`: warm-up runs, then the median of timed runs.
const PRODUCT: &str = r#"
pa, pb, reps, warm, dtype = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
A, B = operands(pa, pb, DTYPES[dtype])
C = None
for _ in range(warm):
    C = A @ B
ts = []
for _ in range(max(reps, 1)):
    t = time.perf_counter()
    C = A @ B
    ts.append(time.perf_counter() - t)
print(json.dumps({"median_ms": statistics.median(ts) * 1e3, "nnz_c": int(C.nnz), "version": "scipy " + scipy.__version__}))
"#;

/// Times SuiteSparse:GraphBLAS's `C = A ⊕.⊗ B` with the plus-times
/// semiring (python-graphblas, the matrices converted from SciPy once,
/// before timing): warm-up runs, then the median of timed runs.
const GRAPHBLAS: &str = r#"
import graphblas as gb
pa, pb, reps, warm, dtype = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
A, B = operands(pa, pb, DTYPES[dtype])
GA = gb.io.from_scipy_sparse(A)
GB = GA if B is A else gb.io.from_scipy_sparse(B)
plus_times = gb.semiring.plus_times
C = None
for _ in range(warm):
    C = GA.mxm(GB, plus_times).new()
ts = []
for _ in range(max(reps, 1)):
    t = time.perf_counter()
    C = GA.mxm(GB, plus_times).new()
    ts.append(time.perf_counter() - t)
v = ".".join(map(str, gb.ss.about["library_version"]))
print(json.dumps({"median_ms": statistics.median(ts) * 1e3, "nnz_c": int(C.nvals),
                  "version": f"SuiteSparse:GraphBLAS {v} ({gb.ss.config['nthreads']} threads)"}))
"#;

/// Times SuiteSparse:GraphBLAS's `C = A ⊕.⊗ B` with a semiring, plain,
/// masked by A's structure or its complement, the triangle count of L
/// (`C⟨L⟩ = L plus_pair Lᵀ` summed, Lᵀ as GraphBLAS's transposed
/// descriptor) or a breadth-first search from vertex 0 (masked `vxm` a
/// level): warm-up runs, then the median of timed runs; the result is
/// nnz(C), the count, or the search's Σ (level + 1).
const SEMIRING: &str = r#"
import graphblas as gb
pa, pb, reps, warm, dtype, ring, mode = sys.argv[1:8]
reps, warm = int(reps), int(warm)
A, B = operands(pa, pb, DTYPES[dtype])
GA = gb.io.from_scipy_sparse(A)
GB = GA if B is A else gb.io.from_scipy_sparse(B)
if ring == "lor_land":
    GA, GB = GA.dup(dtype=bool), GB.dup(dtype=bool)
semiring = getattr(gb.semiring, ring)
def product():
    if mode == "bfs":
        # Levels from vertex 0, LAGraph's way: the frontier times A over
        # any_pair, masked by the complement of the levels' structure.
        levels = gb.Vector(gb.dtypes.INT32, GA.nrows)
        f = gb.Vector(bool, GA.nrows)
        f[0] = True
        levels[0] = 0
        depth = 0
        while f.nvals:
            depth += 1
            f = f.vxm(GA, gb.semiring.any_pair).new(dtype=bool, mask=~levels.S)
            levels(f.S) << depth
        # Σ (level + 1) over the reached vertices.
        return levels.reduce(gb.monoid.plus).value + levels.nvals
    if mode == "triangles":
        return GA.mxm(GA.T, gb.semiring.plus_pair).new(mask=GA.S).reduce_scalar().value
    expr = GA.mxm(GB, semiring)
    if mode == "mask":
        return expr.new(mask=GA.S).nvals
    if mode == "complement":
        return expr.new(mask=~GA.S).nvals
    return expr.new().nvals
result = None
for _ in range(warm):
    result = product()
ts = []
for _ in range(max(reps, 1)):
    t = time.perf_counter()
    result = product()
    ts.append(time.perf_counter() - t)
v = ".".join(map(str, gb.ss.about["library_version"]))
print(json.dumps({"median_ms": statistics.median(ts) * 1e3, "result": float(result),
                  "version": f"SuiteSparse:GraphBLAS {v} ({gb.ss.config['nthreads']} threads)"}))
"#;

/// Times a user's whole job: read A (and B), multiply (CuPy on the GPU
/// when asked, warmed up first; uploads and C's download included), write C.
const WHOLE_JOB: &str = r#"
pa, pb, out, dtype, gpu = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5] == "1"
dt = DTYPES[dtype]
version = "scipy " + scipy.__version__
if gpu:
    import cupy as cp, cupyx.scipy.sparse as csp
    w = csp.csr_matrix(sp.random(300, 300, density=0.05, format="csr", dtype=dt))
    (w @ w).get()
    cp.cuda.Device().synchronize()
    version += " + cupy " + cp.__version__
t0 = time.perf_counter()
A, B = operands(pa, pb, dt)
t1 = time.perf_counter()
if gpu:
    Ag = csp.csr_matrix(A)
    Bg = Ag if B is A else csp.csr_matrix(B)
    C = (Ag @ Bg).get()
    cp.cuda.Device().synchronize()
else:
    C = A @ B
t2 = time.perf_counter()
if out.endswith(".npz"):
    sp.save_npz(out, C, compressed=False)
elif out.endswith(".gz"):
    with gzip.open(out, "wb") as f:
        scipy.io.mmwrite(f, C)
else:
    scipy.io.mmwrite(out, C)
t3 = time.perf_counter()
print(json.dumps({"read_ms": (t1 - t0) * 1e3, "multiply_ms": (t2 - t1) * 1e3, "write_ms": (t3 - t2) * 1e3, "nnz_c": int(C.nnz), "version": version}))
"#;

/// Runs `script` (after [`LOAD`]) with `args`; its JSON output.
fn run(script: &str, args: &[String]) -> Result<serde_json::Value, CliError> {
    let fail = |message: String| CliError::Compare(format!("python3: {message}"));
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(format!("{LOAD}{script}"))
        .args(args)
        .output()
        .map_err(|e| fail(format!("cannot run python3: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(fail(err.lines().last().unwrap_or("failed").to_string()));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| fail(format!("bad output: {e}")))
}

fn number(v: &serde_json::Value, key: &str) -> Result<f64, CliError> {
    v[key]
        .as_f64()
        .ok_or_else(|| CliError::Compare(format!("python3 printed no '{key}'")))
}

/// One timing of the Python side.
pub struct PythonTiming {
    /// Median milliseconds of the product (`bench --compare scipy`).
    pub median_ms: f64,
    /// Milliseconds of the steps of the whole job: read, multiply, write.
    pub steps_ms: [f64; 3],
    /// nnz(C).
    pub nnz_c: usize,
    /// Libraries and versions, e.g. `scipy 1.14.1 + cupy 13.3.0`.
    pub version: String,
}

fn path_arg(p: Option<&Path>) -> String {
    p.map_or_else(|| "-".to_string(), |p| p.display().to_string())
}

/// The library a product is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// SciPy's `A @ B`.
    Scipy,
    /// SuiteSparse:GraphBLAS's plus-times `mxm`.
    Graphblas,
}

/// Times `peer`'s product on the files `a` and `b` (B: A or Aᵀ when
/// `None`).
///
/// # Errors
/// [`CliError::Compare`] when python3, SciPy or python-graphblas is
/// missing or fails.
pub fn product(
    peer: Peer,
    a: &Path,
    b: Option<&Path>,
    reps: usize,
    warmup: usize,
    precision: &str,
) -> Result<PythonTiming, CliError> {
    let args = [
        a.display().to_string(),
        path_arg(b),
        reps.to_string(),
        warmup.to_string(),
        precision.to_string(),
    ];
    let script = match peer {
        Peer::Scipy => PRODUCT,
        Peer::Graphblas => GRAPHBLAS,
    };
    let v = run(script, &args)?;
    Ok(PythonTiming {
        median_ms: number(&v, "median_ms")?,
        steps_ms: [0.0; 3],
        nnz_c: number(&v, "nnz_c")? as usize,
        version: v["version"].as_str().unwrap_or("?").to_string(),
    })
}

/// Times SuiteSparse:GraphBLAS's product with `ring` (a GraphBLAS name)
/// on the files `a` and `b` (B: A when `None`) in `mode` (`plain`, `mask`,
/// `complement`, `triangles`, `a` then being L, or `bfs`): median
/// milliseconds, the library's name and version, and nnz(C), the triangle
/// count or the search's Σ (level + 1) over the reached vertices.
///
/// # Errors
/// [`CliError::Compare`] when python3, SciPy or python-graphblas is
/// missing or fails.
pub fn semiring(
    a: &Path,
    b: Option<&Path>,
    reps: usize,
    warmup: usize,
    precision: &str,
    ring: &str,
    mode: &str,
) -> Result<(f64, String, f64), CliError> {
    let args = [
        a.display().to_string(),
        path_arg(b),
        reps.to_string(),
        warmup.to_string(),
        precision.to_string(),
        ring.to_string(),
        mode.to_string(),
    ];
    let v = run(SEMIRING, &args)?;
    Ok((
        number(&v, "median_ms")?,
        v["version"].as_str().unwrap_or("?").to_string(),
        number(&v, "result")?,
    ))
}

/// Times the whole job in Python: read `a` (and `b`), multiply on the CPU
/// (SciPy) or the GPU (`gpu`: CuPy), write C to `out`.
///
/// # Errors
/// [`CliError::Compare`] when python3, SciPy or (with `gpu`) CuPy is
/// missing or fails.
pub fn whole_job(
    a: &Path,
    b: Option<&Path>,
    out: &Path,
    precision: &str,
    gpu: bool,
) -> Result<PythonTiming, CliError> {
    let args = [
        a.display().to_string(),
        path_arg(b),
        out.display().to_string(),
        precision.to_string(),
        (gpu as u8).to_string(),
    ];
    let v = run(WHOLE_JOB, &args)?;
    let steps_ms = [
        number(&v, "read_ms")?,
        number(&v, "multiply_ms")?,
        number(&v, "write_ms")?,
    ];
    Ok(PythonTiming {
        median_ms: steps_ms[1],
        steps_ms,
        nnz_c: number(&v, "nnz_c")? as usize,
        version: v["version"].as_str().unwrap_or("?").to_string(),
    })
}
