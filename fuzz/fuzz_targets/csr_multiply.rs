//! Fuzz target: CSR constructors and the CPU product against the reference.
#![no_main]

include!("../../tests/common/fuzz_checks.rs");

libfuzzer_sys::fuzz_target!(|data: &[u8]| csr_multiply(data));
