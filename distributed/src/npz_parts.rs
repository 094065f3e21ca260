//! One `.npz` file (SciPy's `save_npz`) read by every rank at once, where
//! its arrays are stored uncompressed: each rank reads the row offsets of
//! its rows, then the column indices and values they delimit, from the
//! mapped file at their offsets; the file is read once in all. The
//! checks are the single-process reader's (`StoredCsr::read_rows`), each
//! naming the global row or element at fault.

use crate::comm::agree;
use crate::dist_csr::DistCsr;
use crate::partition::Partition;
use crate::{Error, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::npz::{PartSums, StoredCsr};
use spgemm_core::Scalar;
use std::path::Path;

impl<T: Scalar> DistCsr<T> {
    /// This rank's rows of the stored `.npz` at `path` (its bytes `file`,
    /// mapped: a rank touches only its rows' pages; laid out as
    /// `layout`), split by `rows` (default: even). Collective.
    pub(crate) fn read_npz_parts(
        comm: &SimpleCommunicator,
        path: &Path,
        file: &[u8],
        layout: &StoredCsr,
        rows: Option<&Partition>,
    ) -> Result<Self> {
        let (p, r) = (comm.size() as usize, comm.rank() as usize);
        let rows = crate::files::rows_of_file(path, layout.nrows as u64, rows, p);
        let rows = agree(comm, rows)?;
        let range = rows.range(r);
        let part = layout
            .read_rows::<T>(file, range.start as usize..range.end as usize)
            .map_err(|e| Error::Core(e.in_file(path)));
        let part = agree(comm, part)?;
        // Every member's checksum, from every rank's sums in rank order.
        let sums = every_ranks_sums(comm, &part.sums);
        let cols: Vec<u64> = part.cols.into_iter().map(u64::from).collect();
        let part = layout
            .check_sums(file, &sums)
            .map_err(|e| Error::Core(e.in_file(path)))
            .and_then(|()| {
                Self::compacted(
                    layout.ncols as u64,
                    rows.clone(),
                    r,
                    part.offsets,
                    &cols,
                    part.values,
                )
            });
        agree(comm, part)
    }
}

/// Every rank's checksums of its part of a stored `.npz`, in rank order.
/// Collective.
pub(crate) fn every_ranks_sums(comm: &SimpleCommunicator, mine: &PartSums) -> Vec<PartSums> {
    let words: Vec<u64> = mine
        .iter()
        .flat_map(|&(crc, len)| [u64::from(crc), len])
        .collect();
    let mut all = vec![0u64; words.len() * comm.size() as usize];
    comm.all_gather_into(&words[..], &mut all[..]);
    all.chunks(6)
        .map(|w| {
            [
                (w[0] as u32, w[1]),
                (w[2] as u32, w[3]),
                (w[4] as u32, w[5]),
            ]
        })
        .collect()
}
