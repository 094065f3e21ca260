//! Fuzz target: the SciPy `.npz` reader.
#![no_main]

include!("../../tests/common/fuzz_checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| npz_read(data));
