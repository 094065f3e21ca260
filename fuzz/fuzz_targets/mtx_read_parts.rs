//! Fuzz target: a Matrix Market file read in parts, as the distributed
//! reader reads it, against the sequential reader.
#![no_main]

include!("../../tests/common/fuzz_checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| mtx_read_parts(data));
