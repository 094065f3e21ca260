//! Helpers shared by the integration tests: the real matrices of
//! `data/matrices` and the conformance suite run against every backend.
#![allow(dead_code)]

pub mod conformance;
pub mod engine_suite;

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

/// The GPU backend `kind` with `options` on `devices` (the first list that
/// opens), as a conformance multiplier; `None`, with the reason on stderr,
/// when none opens (the suite then skips, or fails under
/// `SPGEMM_REQUIRE_GPU=1`).
#[allow(dead_code)] // used by the GPU conformance tests only
pub fn open_gpu(
    kind: spgemm::BackendKind,
    options: &spgemm::GpuConfig,
    device_lists: &[&[usize]],
) -> Option<Box<dyn conformance::Multiplier>> {
    let mut why = String::from("no device list");
    for devices in device_lists {
        let options = spgemm::GpuConfig {
            devices: devices.to_vec(),
            ..options.clone()
        };
        match spgemm::Backend::select_with(kind, &options) {
            Ok((b, _)) => return Some(Box::new(b)),
            Err(e) => why = e.to_string(),
        }
    }
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{kind:?} backend unavailable: {why}");
    None
}

/// The register-aware seed's accumulators in both phases' short-row bins
/// (`sort`: [`Register`](spgemm::gpu::SortVariant::Register), reg-sort;
/// [`RegisterHash`](spgemm::gpu::SortVariant::RegisterHash), reg-hash) on
/// GPU 0 of backend `kind`, with hash tables in every other bin (no dense
/// accumulators), so that every short row runs them or, in the numeric
/// phase, falls back to the hash tables.
#[allow(dead_code)] // used by the GPU conformance tests only
pub fn open_registers(
    kind: spgemm::BackendKind,
    sort: spgemm::gpu::SortVariant,
) -> Option<Box<dyn conformance::Multiplier>> {
    let options = spgemm::GpuConfig {
        sort,
        accumulator: spgemm::gpu::Accumulator::Hash,
        ..Default::default()
    };
    open_gpu(kind, &options, &[&[0]])
}

/// The conformance suite under both register-aware accumulators
/// ([`open_registers`]) on backend `$kind`: modules `suite_register_sort`
/// and `suite_register_hash`.
#[macro_export]
macro_rules! register_suites {
    ($kind:expr) => {
        mod suite_register_sort {
            $crate::conformance_suite!($crate::common::open_registers(
                $kind,
                spgemm::gpu::SortVariant::Register
            ));
        }

        mod suite_register_hash {
            $crate::conformance_suite!($crate::common::open_registers(
                $kind,
                spgemm::gpu::SortVariant::RegisterHash
            ));
        }
    };
}

/// A seeded xorshift generator of indices: each call `next(k)` gives one
/// in `0..k` (test matrices with a chosen shape, independent of `rand`).
#[allow(dead_code)] // used by the GPU engine tests only
pub fn xorshift(seed: u64) -> impl FnMut(usize) -> u32 {
    let mut state = seed;
    move |k| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % k as u64) as u32
    }
}
