//! Replays the fuzz corpus and every saved crash input (`fuzz/corpus/`,
//! `fuzz/regressions/`) through the fuzz targets' checks, on stable Rust.

use crate::common::fuzz_checks;

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut n = 0;
    for dir in [
        root.join("corpus").join(target),
        root.join("regressions").join(target),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let data = std::fs::read(e.path()).unwrap();
            let r = std::panic::catch_unwind(|| check(&data));
            assert!(r.is_ok(), "{} fails", e.path().display());
            n += 1;
        }
    }
    assert!(n > 0, "no inputs for {target}");
}

#[test]
fn mtx_read_corpus() {
    replay("mtx_read", fuzz_checks::mtx_read);
}

#[test]
fn mtx_read_parts_corpus() {
    // The Matrix Market corpus (the parts target's fuzzing starts from
    // it) and the parts target's own finds, read in parts as the
    // distributed reader reads a file, and whole.
    replay("mtx_read", fuzz_checks::mtx_read_parts);
    replay("mtx_read_parts", fuzz_checks::mtx_read_parts);
    replay("mtx_read_parts", fuzz_checks::mtx_read);
}

#[test]
fn npz_read_corpus() {
    replay("npz_read", fuzz_checks::npz_read);
}

#[test]
fn npz_read_parts_corpus() {
    // The `.npz` corpus (the parts target's fuzzing starts from it) and
    // the parts target's own finds, read in parts and whole.
    replay("npz_read", fuzz_checks::npz_read_parts);
    replay("npz_read_parts", fuzz_checks::npz_read_parts);
    replay("npz_read_parts", fuzz_checks::npz_read);
}

#[test]
fn npz_write_parts_corpus() {
    replay("npz_write_parts", fuzz_checks::npz_write_parts);
}

#[test]
fn csr_multiply_corpus() {
    replay("csr_multiply", fuzz_checks::csr_multiply);
}
