//! One Matrix Market file written by every rank at once.

use crate::comm::{self, agree};
use crate::dist_csr::DistCsr;
use crate::{Error, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::Scalar;
use std::os::unix::fs::FileExt;
use std::path::Path;

impl<T: Scalar> DistCsr<T> {
    /// Writes the matrix to one `.mtx` file (`.mtx.gz`: gzip members, one
    /// valid file) with every rank writing its own rows at its offset: the
    /// header by rank 0, each rank's text after the text of the ranks
    /// before it (offsets from the sizes of all). The file reads back as
    /// the matrix that [`DistCsr::gather`] would give. Collective.
    ///
    /// # Errors
    /// On every rank: a path that is not `.mtx` or `.mtx.gz`; a file that
    /// cannot be created or written (naming it and the rank).
    pub fn write_mtx(&self, comm: &SimpleCommunicator, path: &Path) -> Result<()> {
        let name = path.to_string_lossy();
        let gz = name.ends_with(".mtx.gz");
        if !gz && !name.ends_with(".mtx") {
            return Err(Error::Argument(format!(
                "{name}: one file from every rank is written as .mtx or .mtx.gz"
            )));
        }
        let io = |e: std::io::Error| -> Error {
            Error::Core(spgemm_core::Error::Io {
                path: path.to_path_buf(),
                source: e,
            })
        };
        let nnz = self.nnz(comm);
        let head = spgemm_core::mtx::header_bytes(self.nrows(), self.ncols(), nnz, gz).map_err(io);
        let text = head.and_then(|head| {
            let rows = spgemm_core::mtx::rows_bytes(
                self.local(),
                self.global_rows().start,
                Some(self.col_map()),
                gz,
            )
            .map_err(io)?;
            Ok((head, rows))
        });
        let (head, rows) = agree(comm, text)?;
        let sizes = comm::all_gather(comm, rows.len() as u64);
        let at = head.len() as u64 + sizes[..self.rank()].iter().sum::<u64>();
        let created = if comm.rank() == 0 {
            std::fs::File::create(path)
                .and_then(|f| f.write_all_at(&head, 0))
                .map_err(io)
        } else {
            Ok(())
        };
        agree(comm, created)?;
        let written = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.write_all_at(&rows, at))
            .map_err(io);
        agree(comm, written)
    }
}
