//! # spgemm-distributed
//!
//! Sparse matrix-matrix multiplication `C = A·B` over the ranks of an MPI
//! communicator (feature `mpi`): matrices split by rows over the ranks
//! ([`DistCsr`]), each rank's products on its GPU or CPU through the
//! single-process engine ([`LocalProduct`]), and two algorithms:
//!
//! - **1D rows** ([`one_d`]): each rank fetches the rows of B its rows of
//!   A reference, as PETSc's MPIAIJ product does, or, on the ranks of one
//!   node, reads all of B in place from shared-memory windows
//!   ([`Fetch`]);
//! - **2D sparse SUMMA** ([`two_d`], Buluç and Gilbert 2012) on a `q × q`
//!   grid, for products where 1D must fetch most of B.
//!
//! [`multiply`] runs either, or picks by the bytes each would move.
//! [`resident::multiply`] keeps A, B and C on the ranks' GPUs and moves
//! B's rows GPU to GPU ([`device_exchange`]: NCCL with the `nccl`
//! feature, RCCL with `rccl`, or staged through the host).
//!
//! Without the `mpi` feature the crate holds the [`model`] only: from the
//! structure of A and B, what each of `P` ranks would send, receive, hold
//! and compute under either algorithm, for `P` up to thousands, on one
//! machine and without MPI.
//!
//! Errors on one rank are errors on every rank: each collective step that
//! can fail on some rank is followed by an agreement ([`Error::Rank`]),
//! so no rank waits forever in a collective the others left.
#![warn(missing_docs)]

mod error;
pub mod model;
mod partition;
pub mod wire;

pub use error::{Error, Result};
pub use model::{Algorithm, Model, Prediction, RankCost};
pub use partition::Partition;

#[cfg(feature = "mpi")]
mod assemble;
#[cfg(feature = "mpi")]
mod column_set;
#[cfg(feature = "mpi")]
pub mod comm;
#[cfg(feature = "mpi")]
pub mod device_exchange;
#[cfg(feature = "mpi")]
mod dist_csr;
#[cfg(feature = "mpi")]
mod files;
#[cfg(any(feature = "nccl", feature = "rccl"))]
pub mod grouped;
#[cfg(feature = "mpi")]
mod local;
#[cfg(feature = "nccl")]
pub mod nccl;
#[cfg(feature = "mpi")]
mod npz_parts;
#[cfg(feature = "mpi")]
pub mod one_d;
#[cfg(feature = "rccl")]
pub mod rccl;
#[cfg(feature = "mpi")]
pub mod resident;
#[cfg(feature = "mpi")]
mod run;
#[cfg(feature = "mpi")]
mod shared_rows;
#[cfg(feature = "mpi")]
pub mod two_d;

#[cfg(feature = "mpi")]
pub use dist_csr::DistCsr;
#[cfg(feature = "mpi")]
pub use local::LocalProduct;
/// The MPI bindings this crate uses (rsmpi), for the communicator types.
#[cfg(feature = "mpi")]
pub use mpi;
#[cfg(feature = "mpi")]
pub use run::{multiply, Choice, Fetch, Options, RunStats, SHARED_ROWS_FRACTION};
