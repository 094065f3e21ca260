//! Fuzz target: the Matrix Market reader (plain and gzip).
#![no_main]

include!("../../tests/common/fuzz_checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| mtx_read(data));
