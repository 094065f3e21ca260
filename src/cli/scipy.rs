//! Times SciPy's SpGEMM (`A @ B` on `scipy.sparse` CSR matrices) on the same
//! matrix, through `python3`, for `spgemm bench --compare scipy`.

use super::source::MatrixSource;
use spgemm::{CsrMatrix, Scalar};

/// The timing script: loads the matrix with `scipy.io.mmread`, builds CSR,
/// warms up, times `A @ B` (B = A, or Aᵀ for rectangular A) and prints JSON.
const SCRIPT: &str = r#"
import sys, json, time, statistics
import numpy as np, scipy, scipy.io, scipy.sparse as sp
path, reps, warm, dtype = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
A = sp.csr_matrix(scipy.io.mmread(path)).astype(np.float32 if dtype == "f32" else np.float64)
A.sum_duplicates()
B = A if A.shape[0] == A.shape[1] else A.T.tocsr()
C = None
for _ in range(warm):
    C = A @ B
ts = []
for _ in range(max(reps, 1)):
    t = time.perf_counter()
    C = A @ B
    ts.append(time.perf_counter() - t)
print(json.dumps({"median_ms": statistics.median(ts) * 1e3, "nnz_c": int(C.nnz), "version": scipy.__version__}))
"#;

/// SciPy's result.
pub struct ScipyTiming {
    pub median_ms: f64,
    pub nnz_c: usize,
    pub version: String,
}

/// Times SciPy on `src` (a generated matrix is written to a temporary file first).
pub fn time<T: Scalar>(
    src: &MatrixSource,
    a: &CsrMatrix<T>,
    reps: usize,
    warmup: usize,
    precision: &str,
) -> Result<ScipyTiming, String> {
    let tmp;
    let path = match src {
        MatrixSource::File(p) => p.clone(),
        MatrixSource::Gen(_) => {
            tmp = std::env::temp_dir().join(format!("spgemm-bench-{}.mtx", std::process::id()));
            spgemm::mtx::write_path(&tmp, a).map_err(|e| e.to_string())?;
            tmp.clone()
        }
    };
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(SCRIPT)
        .arg(&path)
        .arg(reps.to_string())
        .arg(warmup.to_string())
        .arg(precision)
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if matches!(src, MatrixSource::Gen(_)) {
        let _ = std::fs::remove_file(&path);
    }
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(err.lines().last().unwrap_or("python3 failed").to_string());
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("bad output from python3: {e}"))?;
    Ok(ScipyTiming {
        median_ms: v["median_ms"].as_f64().ok_or("no median_ms")?,
        nnz_c: v["nnz_c"].as_u64().ok_or("no nnz_c")? as usize,
        version: v["version"].as_str().unwrap_or("?").to_string(),
    })
}
