//! Fuzz target: a small matrix cut into parts of rows and written as one
//! stored `.npz` in those parts, as the distributed writer writes it; read
//! back whole and in parts.
#![no_main]

include!("../../tests/common/fuzz_checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| npz_write_parts(data));
