//! Fuzz target: an `.npz` file with stored arrays read in parts of rows,
//! as the distributed reader reads it, against the sequential reader.
#![no_main]

include!("../../tests/common/fuzz_checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| npz_read_parts(data));
