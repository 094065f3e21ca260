//! # spgemm-core
//!
//! Everything of spgemm that does not depend on where the product runs:
//!
//! | concept | item |
//! |---|---|
//! | CSR matrix (64-bit row offsets, `u32` columns) | [`CsrMatrix`] |
//! | value types `f64`, `f32`, `i64`, `i32`, booleans | [`Scalar`], [`Bool`] |
//! | Matrix Market I/O | [`mtx`] |
//! | SciPy `.npz` I/O | [`npz`] |
//! | either, by file extension | [`files`] |
//! | reference SpGEMM (the oracle) | [`reference::multiply`] |
//! | semirings, masks, pruning | [`semiring`], [`reference::multiply_spec`] |
//! | breadth-first search levels by masked products | [`graph`] |
//! | products per row, compression ratio, GFLOPS | [`stats`] |
//! | checking a product | [`verify::check_product`] |
//! | seeded synthetic matrices | [`generate`] |
//! | GPU abstraction | [`device::Device`] |
//! | kernel tables | [`table::KernelTable`] |
//! | the GPU algorithm over any device | [`gpu::GpuEngine`] |
//! | errors | [`Error`] |
//!
//! ```
//! use spgemm_core::{CsrMatrix, reference};
//! // A = [1 2; 0 3]
//! let a = CsrMatrix::new(2, 2, vec![0, 2, 3], vec![0, 1, 1], vec![1.0f64, 2.0, 3.0])?;
//! let c = reference::multiply(&a, &a)?; // [1 8; 0 9]
//! assert_eq!(c.values(), &[1.0, 8.0, 9.0]);
//! # Ok::<(), spgemm_core::Error>(())
//! ```
#![warn(missing_docs)]

mod choices;
pub mod csr;
pub mod csr_view;
pub mod device;
pub mod error;
pub mod files;
pub mod generate;
pub mod gpu;
pub mod graph;
pub mod interop;
#[doc(hidden)]
pub mod kernel_cache;
pub mod mtx;
pub mod npz;
pub mod prefetch;
pub mod reference;
pub mod scalar;
pub mod semiring;
pub mod stats;
pub mod structure;
pub mod table;
pub mod verify;

pub use csr::CsrMatrix;
pub use csr_view::CsrView;
pub use error::{Error, Result};
pub use scalar::{Bool, Scalar};
