//! The integration tests that need no GPU, in one test binary (one link
//! instead of one per file): the CLI end to end, files and their
//! readers, interoperation with other crates, the reference against an
//! independent oracle, malformed input and the fuzz corpus replayed. The
//! backends' conformance suites are the `backends` test binary.

#[path = "../common/mod.rs"]
mod common;

#[cfg(feature = "cli")]
mod cli;
#[cfg(feature = "cli")]
mod cli_distributed;
#[cfg(feature = "cli")]
mod cli_edges;
#[cfg(feature = "cli")]
mod cli_products;
mod fuzz_regressions;
#[cfg(all(feature = "sprs", feature = "faer", feature = "nalgebra-sparse"))]
mod interop;
mod malformed_input;
mod matrix_files;
mod npz_scipy;
mod reference_oracle;
