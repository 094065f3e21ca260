//! Helpers shared by the integration tests: the real matrices of
//! `data/matrices` and the conformance suite run against every backend.
#![allow(dead_code)]

pub mod conformance;
pub mod engine_suite;
pub mod engine_suite_device;
pub mod fuzz_checks;

use spgemm::{CsrMatrix, Scalar};
use std::path::PathBuf;

/// The `spgemm` command built for the integration tests.
#[cfg(feature = "cli")]
pub fn spgemm_command() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_spgemm"))
}

/// `name` in a folder of the test process's own under the temporary
/// folder (`test` names the test file, so parallel tests do not collide).
pub fn temp_file(test: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spgemm-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// The folder of real SuiteSparse matrices: `$SPGEMM_MATRICES`, or the
/// repository's `data/matrices`. Its absence fails the test.
pub fn matrices_dir() -> PathBuf {
    let dir = std::env::var_os("SPGEMM_MATRICES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/matrices"));
    assert!(
        dir.join("MANIFEST.tsv").is_file(),
        "real matrices not found in {} (set SPGEMM_MATRICES)",
        dir.display()
    );
    dir
}

/// `(name, field)` of every matrix in MANIFEST.tsv.
pub fn manifest() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(matrices_dir().join("MANIFEST.tsv")).expect("MANIFEST.tsv");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[5].to_string())
        })
        .collect()
}

/// The real matrices with real, integer or pattern values (complex ones are
/// refused by the reader and tested separately).
pub fn real_matrices() -> Vec<String> {
    let all = manifest();
    assert!(
        all.len() >= 50,
        "MANIFEST.tsv lists only {} matrices",
        all.len()
    );
    all.into_iter()
        .filter(|(_, field)| field != "complex")
        .map(|(n, _)| n)
        .collect()
}

/// Reads `name.mtx.gz` from the matrices folder.
pub fn load<T: Scalar>(name: &str) -> CsrMatrix<T> {
    let path = matrices_dir().join(format!("{name}.mtx.gz"));
    spgemm::mtx::read_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The second operand used for a real matrix: A itself when square, Aᵀ otherwise.
pub fn partner<T: Scalar>(a: &CsrMatrix<T>) -> CsrMatrix<T> {
    if a.nrows() == a.ncols() {
        a.clone()
    } else {
        a.transpose().expect("transpose")
    }
}

/// Why GPU tests of backend `kind` cannot run on this machine (the backend
/// not compiled in, no driver, no device), or `None` when its GPU 0 opens;
/// probed once per backend and process.
pub fn gpu_missing(kind: spgemm::BackendKind) -> Option<String> {
    use std::sync::OnceLock;
    static CUDA: OnceLock<Option<String>> = OnceLock::new();
    static HIP: OnceLock<Option<String>> = OnceLock::new();
    let probe = || {
        spgemm::Backend::select_with(kind, &spgemm::GpuConfig::default())
            .err()
            .map(|e| e.to_string())
    };
    match kind {
        spgemm::BackendKind::Cuda => CUDA.get_or_init(probe).clone(),
        spgemm::BackendKind::Hip => HIP.get_or_init(probe).clone(),
        other => Some(format!("{other:?} is not a GPU backend")),
    }
}

/// Every backend with the name its tests start with.
pub const BACKENDS: [(spgemm::BackendKind, &str); 3] = [
    (spgemm::BackendKind::Cpu, "cpu"),
    (spgemm::BackendKind::Cuda, "cuda"),
    (spgemm::BackendKind::Hip, "hip"),
];

/// A test named `name` on backend `kind`. CPU tests always run. GPU tests
/// run where [`gpu_missing`] finds the backend's GPU, are reported as
/// ignored with the reason elsewhere, and fail instead under
/// `SPGEMM_REQUIRE_GPU=1` (for GPU machines, where a missing GPU is a
/// fault).
pub fn trial(
    kind: spgemm::BackendKind,
    name: String,
    test: impl FnOnce() + Send + 'static,
) -> libtest_mimic::Trial {
    use libtest_mimic::{Completion, Trial};
    if kind == spgemm::BackendKind::Cpu {
        return Trial::test(name, move || {
            test();
            Ok(())
        });
    }
    Trial::ignorable_test(name, move || match gpu_missing(kind) {
        None => {
            test();
            Ok(Completion::Completed)
        }
        Some(why) if std::env::var("SPGEMM_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
            Err(format!("SPGEMM_REQUIRE_GPU=1 but {why}").into())
        }
        Some(why) => Ok(Completion::ignored_with(why)),
    })
}

/// Opens a backend under test, or says why it cannot.
pub type Opener = fn() -> Result<Box<dyn conformance::Multiplier>, String>;

/// The conformance suite's cases ([`conformance::CASES`]) as tests named
/// `{prefix}::{case}` of backend `kind`, each on a multiplier from `open`.
pub fn conformance_trials(
    kind: spgemm::BackendKind,
    prefix: &str,
    open: Opener,
) -> Vec<libtest_mimic::Trial> {
    conformance::CASES
        .iter()
        .map(|&(case, run)| {
            trial(kind, format!("{prefix}::{case}"), move || {
                let m = open().unwrap_or_else(|e| panic!("opening the backend: {e}"));
                run(m.as_ref())
            })
        })
        .collect()
}

/// The tests of GPU backend `kind`, named `{name}::{suite}::{case}`: the
/// conformance suite under each configuration of `suites`, then the
/// engine-level cases of `engine` (`{name}::engine::{case}`).
pub fn gpu_backend_trials(
    kind: spgemm::BackendKind,
    name: &str,
    suites: &[(&str, Opener)],
    engine: &[(&str, fn())],
) -> Vec<libtest_mimic::Trial> {
    let conformance = suites
        .iter()
        .flat_map(|&(suite, open)| conformance_trials(kind, &format!("{name}::{suite}"), open));
    let engine = engine
        .iter()
        .map(|&(case, run)| trial(kind, format!("{name}::engine::{case}"), run));
    conformance.chain(engine).collect()
}

/// The GPU backend `kind` with `options` on `devices` (the first list that
/// opens), as a conformance multiplier, or the last list's error.
pub fn open_gpu(
    kind: spgemm::BackendKind,
    options: &spgemm::GpuConfig,
    device_lists: &[&[usize]],
) -> Result<Box<dyn conformance::Multiplier>, String> {
    let mut why = String::from("no device list");
    for devices in device_lists {
        let options = spgemm::GpuConfig {
            devices: devices.to_vec(),
            ..options.clone()
        };
        match spgemm::Backend::select_with(kind, &options) {
            Ok((b, _)) => return Ok(Box::new(b)),
            Err(e) => why = e.to_string(),
        }
    }
    Err(why)
}

/// The register-aware accumulators (Liu, He, Liu and Tan, "Register-Aware
/// Optimizations for Parallel Sparse Matrix-Matrix Multiplication", §3.1,
/// §3.3) in both phases' short-row bins (`sort`:
/// [`Register`](spgemm::gpu::SortVariant::Register), reg-sort;
/// [`RegisterHash`](spgemm::gpu::SortVariant::RegisterHash), reg-hash) on
/// GPU 0 of backend `kind`, with hash tables in every other bin (no dense
/// accumulators), so that every short row runs them or, in the numeric
/// phase, falls back to the hash tables.
pub fn open_registers(
    kind: spgemm::BackendKind,
    sort: spgemm::gpu::SortVariant,
) -> Result<Box<dyn conformance::Multiplier>, String> {
    let options = spgemm::GpuConfig {
        sort,
        accumulator: spgemm::gpu::Accumulator::Hash,
        ..Default::default()
    };
    open_gpu(kind, &options, &[&[0]])
}

/// GPU 0 of backend `kind` finding C's row sizes as `symbolic` says
/// ([`SymbolicMode::Exact`](spgemm::gpu::SymbolicMode::Exact): always a
/// symbolic phase; [`SymbolicMode::Bound`](spgemm::gpu::SymbolicMode::Bound):
/// one pass wherever every row is short enough), so that the conformance
/// cases run both ways whatever the default's rule picks.
pub fn open_symbolic(
    kind: spgemm::BackendKind,
    symbolic: spgemm::gpu::SymbolicMode,
) -> Result<Box<dyn conformance::Multiplier>, String> {
    let options = spgemm::GpuConfig {
        symbolic,
        ..Default::default()
    };
    open_gpu(kind, &options, &[&[0]])
}

/// GPU 0 of backend `kind` under
/// [`SymbolicMode::Estimate`](spgemm::gpu::SymbolicMode::Estimate), C's
/// room `percent` of the estimated nnz(C) (below 100: short on purpose,
/// so that the one pass runs again wherever C has entries).
pub fn open_estimate(
    kind: spgemm::BackendKind,
    percent: u32,
) -> Result<Box<dyn conformance::Multiplier>, String> {
    let options = spgemm::GpuConfig {
        symbolic: spgemm::gpu::SymbolicMode::Estimate,
        estimate_percent: percent,
        ..Default::default()
    };
    open_gpu(kind, &options, &[&[0]])
}

/// A seeded xorshift generator of indices: each call `next(k)` gives one
/// in `0..k` (test matrices with a chosen shape, independent of `rand`).
pub fn xorshift(seed: u64) -> impl FnMut(usize) -> u32 {
    let mut state = seed;
    move |k| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % k as u64) as u32
    }
}
