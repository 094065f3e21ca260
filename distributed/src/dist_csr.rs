//! A CSR matrix distributed by rows over the ranks of a communicator.

use crate::comm::{self, agree, Traffic};
use crate::partition::Partition;
use crate::wire::{Reader, Writer};
use crate::{Error, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use rayon::prelude::*;
use spgemm_core::{CsrMatrix, CsrView, Scalar};

/// A sparse matrix of `nrows × ncols` (64-bit global sizes) whose rows are
/// split over the ranks of a communicator in contiguous blocks
/// ([`Partition`], known to every rank); blocks may be empty.
///
/// Each rank holds its rows as a [`CsrMatrix`] whose column indices
/// point into a sorted list of the global columns its rows use
/// ([`DistCsr::col_map`], as PETSc's MPIAIJ keeps its off-diagonal
/// columns): local column indices stay 32-bit while global ones may need
/// 64. A rank's rows may use at most 2³² − 1 distinct columns.
#[derive(Clone, Debug)]
pub struct DistCsr<T> {
    ncols: u64,
    rows: Partition,
    rank: usize,
    local: CsrMatrix<T>,
    col_map: Vec<u64>,
}

/// `cols` (global, below `ncols`) as indices into the sorted list of the
/// distinct ones, and that list.
/// `row_offsets` locate an entry's row for the error.
pub(crate) fn compact(
    cols: &[u64],
    ncols: u64,
    row_offsets: &[usize],
) -> Result<(Vec<u32>, Vec<u64>)> {
    if let Some(at) = cols.iter().position(|&c| c >= ncols) {
        let row = row_offsets.partition_point(|&o| o <= at).saturating_sub(1);
        return Err(Error::Argument(format!(
            "local row {row}: column {} is outside the matrix's {ncols} columns",
            cols[at]
        )));
    }
    let mut map = cols.to_vec();
    map.par_sort_unstable();
    map.dedup();
    if map.len() > u32::MAX as usize {
        return Err(Error::Argument(format!(
            "one rank's rows use {} distinct columns; at most {} are supported",
            map.len(),
            u32::MAX
        )));
    }
    let local = cols
        .par_iter()
        .map(|c| map.partition_point(|m| m < c) as u32)
        .collect();
    Ok((local, map))
}

impl<T: Scalar> DistCsr<T> {
    /// This rank's part, given with global column indices: `row_offsets`
    /// (its rows + 1), `cols` and `values` (`nnz` each, columns below
    /// `ncols`). Collective: the row partition is gathered from every
    /// rank's row count, in rank order.
    ///
    /// # Errors
    /// On every rank ([`Error::Rank`] naming the first rank at fault): a
    /// malformed part (offsets, lengths, a column out of range, naming the
    /// entry), or ranks giving different `ncols`.
    pub fn from_local(
        comm: &SimpleCommunicator,
        ncols: u64,
        row_offsets: Vec<usize>,
        cols: Vec<u64>,
        values: Vec<T>,
    ) -> Result<Self> {
        let rank = comm.rank() as usize;
        let nrows = row_offsets.len().saturating_sub(1) as u64;
        let sizes = comm::all_gather(comm, nrows);
        let widths = comm::all_gather(comm, ncols);
        let built = if widths.iter().any(|&w| w != ncols) {
            Err(Error::Argument(format!(
                "ranks disagree on the number of columns: {widths:?}"
            )))
        } else {
            Self::compacted(
                ncols,
                Partition::from_sizes(&sizes)?,
                rank,
                row_offsets,
                &cols,
                values,
            )
        };
        agree(comm, built)
    }

    /// Builds the part of `rank` from its rows with global columns.
    fn compacted(
        ncols: u64,
        rows: Partition,
        rank: usize,
        row_offsets: Vec<usize>,
        cols: &[u64],
        values: Vec<T>,
    ) -> Result<Self> {
        let (local_cols, col_map) = compact(cols, ncols, &row_offsets)?;
        let n = rows.size(rank) as usize;
        let local = CsrMatrix::new(n, col_map.len(), row_offsets, local_cols, values)?;
        Ok(Self {
            ncols,
            rows,
            rank,
            local,
            col_map,
        })
    }

    /// The part of `rank` from its rows as `local` with columns into
    /// `col_map` (sorted, distinct), dropping columns no entry uses.
    pub(crate) fn from_compact(
        ncols: u64,
        rows: Partition,
        rank: usize,
        local: CsrMatrix<T>,
        col_map: Vec<u64>,
    ) -> Result<Self> {
        let mut used = vec![false; col_map.len()];
        for &c in local.col_indices() {
            used[c as usize] = true;
        }
        if used.iter().all(|&u| u) {
            return Ok(Self {
                ncols,
                rows,
                rank,
                local,
                col_map,
            });
        }
        let cols: Vec<u64> = local
            .col_indices()
            .iter()
            .map(|&c| col_map[c as usize])
            .collect();
        let (n, _, offsets, _, values) = local.into_parts();
        debug_assert_eq!(n as u64, rows.size(rank));
        Self::compacted(ncols, rows, rank, offsets, &cols, values)
    }

    /// Splits `matrix`, held by rank `root` (`None` elsewhere), over the
    /// ranks by `rows` (default: even; given on `root`, ignored
    /// elsewhere). Collective; `root` sends each rank its rows.
    ///
    /// # Errors
    /// On every rank: a partition that does not cover the matrix's rows or
    /// has not one part per rank.
    pub fn scatter(
        comm: &SimpleCommunicator,
        root: usize,
        matrix: Option<&CsrMatrix<T>>,
        rows: Option<&Partition>,
    ) -> Result<Self> {
        let rank = comm.rank() as usize;
        let size = comm.size() as usize;
        let mut traffic = Traffic::default();
        let head = if rank == root {
            let m =
                matrix.ok_or_else(|| Error::Argument("the root has no matrix to scatter".into()));
            let head = m.and_then(|m| {
                let p = match rows {
                    Some(p) => p.clone(),
                    None => Partition::even(m.nrows() as u64, size)?,
                };
                if p.parts() != size || p.len() != m.nrows() as u64 {
                    return Err(Error::Argument(format!(
                        "the partition has {} parts over {} rows; the communicator has {size} ranks and the matrix {} rows",
                        p.parts(),
                        p.len(),
                        m.nrows()
                    )));
                }
                let mut words = vec![m.ncols() as u64];
                words.extend_from_slice(p.offsets());
                Ok(words)
            });
            agree(comm, head)?
        } else {
            agree(comm, Ok(Vec::new()))?
        };
        let head = comm::broadcast(comm, root, head, &mut traffic)?;
        let ncols = head[0];
        let partition = Partition::from_sizes(
            &head[1..]
                .windows(2)
                .map(|w| w[1] - w[0])
                .collect::<Vec<_>>(),
        )?;
        let mut messages = vec![Vec::new(); size];
        if let (true, Some(m)) = (rank == root, matrix) {
            for (q, msg) in messages.iter_mut().enumerate() {
                let r = partition.range(q);
                *msg = rows_message(m.view(), r.start as usize..r.end as usize, u64::from, ncols);
            }
        }
        let received = comm::exchange(comm, messages, &mut traffic)?;
        let part = read_rows::<T>(&received[root], root, partition.size(rank) as usize, ncols);
        let built = part.and_then(|(offsets, cols, values)| {
            Self::compacted(ncols, partition, rank, offsets, &cols, values)
        });
        agree(comm, built)
    }

    /// The whole matrix on rank `root` (`None` elsewhere). Collective.
    ///
    /// # Errors
    /// On every rank: more than 2³² − 1 columns (a [`CsrMatrix`] has 32-bit
    /// column indices), out of host memory on the root.
    pub fn gather(&self, comm: &SimpleCommunicator, root: usize) -> Result<Option<CsrMatrix<T>>> {
        let size = comm.size() as usize;
        if self.ncols > spgemm_core::csr::MAX_COLUMNS as u64 {
            return Err(Error::Argument(format!(
                "the matrix has {} columns; a gathered CsrMatrix holds at most {}",
                self.ncols,
                spgemm_core::csr::MAX_COLUMNS
            )));
        }
        let mut messages = vec![Vec::new(); size];
        messages[root] = rows_message(
            self.local.view(),
            0..self.local.nrows(),
            |c| self.col_map[c as usize],
            self.ncols,
        );
        let received = comm::exchange(comm, messages, &mut Traffic::default())?;
        if self.rank != root {
            return Ok(None);
        }
        let mut offsets = vec![0usize];
        let mut cols = Vec::new();
        let mut values = Vec::new();
        for (q, words) in received.iter().enumerate() {
            let (o, c, v) = read_rows::<T>(words, q, self.rows.size(q) as usize, self.ncols)?;
            let base = *offsets.last().unwrap();
            offsets.extend(o[1..].iter().map(|x| x + base));
            cols.extend(c.into_iter().map(|c| c as u32));
            values.extend(v);
        }
        Ok(Some(CsrMatrix::new(
            self.rows.len() as usize,
            self.ncols as usize,
            offsets,
            cols,
            values,
        )?))
    }

    /// Global rows.
    pub fn nrows(&self) -> u64 {
        self.rows.len()
    }

    /// Global columns.
    pub fn ncols(&self) -> u64 {
        self.ncols
    }

    /// How the rows are split over the ranks.
    pub fn row_partition(&self) -> &Partition {
        &self.rows
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The global rows this rank holds.
    pub fn global_rows(&self) -> std::ops::Range<u64> {
        self.rows.range(self.rank)
    }

    /// This rank's rows (`global_rows().len() × col_map().len()`), columns
    /// indexing [`DistCsr::col_map`].
    pub fn local(&self) -> &CsrMatrix<T> {
        &self.local
    }

    /// The global column of each local column, ascending.
    pub fn col_map(&self) -> &[u64] {
        &self.col_map
    }

    /// Entries on every rank together. Collective.
    pub fn nnz(&self, comm: &SimpleCommunicator) -> u64 {
        comm::sum(comm, self.local.nnz() as u64)
    }
}

/// Rows `rows` of `m` as a message: their lengths, their columns mapped
/// to global by `global` (below `ncols`), their values.
pub(crate) fn rows_message<T: Scalar>(
    m: CsrView<'_, T>,
    rows: impl ExactSizeIterator<Item = usize> + Clone,
    global: impl Fn(u32) -> u64,
    ncols: u64,
) -> Vec<u64> {
    let offsets = m.row_offsets();
    let span = |i: usize| offsets[i]..offsets[i + 1];
    let mut w = Writer::default();
    w.indices(rows.clone().map(|i| span(i).len() as u64), ncols);
    let nnz: usize = rows.clone().map(|i| span(i).len()).sum();
    let cols = rows
        .clone()
        .flat_map(|i| m.col_indices()[span(i)].iter().map(|&c| global(c)));
    w.indices(Counted(cols, nnz), ncols);
    let values: Vec<T> = rows
        .flat_map(|i| m.values()[span(i)].iter().copied())
        .collect();
    w.values(&values);
    w.finish()
}

/// An iterator whose length is known.
struct Counted<I>(I, usize);

impl<I: Iterator> Iterator for Counted<I> {
    type Item = I::Item;
    fn next(&mut self) -> Option<I::Item> {
        let x = self.0.next()?;
        self.1 -= 1;
        Some(x)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.1, Some(self.1))
    }
}

impl<I: Iterator> ExactSizeIterator for Counted<I> {}

/// A message of `rows` rows from rank `from`: row offsets, global
/// columns, values.
pub(crate) fn read_rows<T: Scalar>(
    words: &[u64],
    from: usize,
    rows: usize,
    ncols: u64,
) -> Result<(Vec<usize>, Vec<u64>, Vec<T>)> {
    let mut r = Reader::new(words, from);
    let mut offsets = Vec::with_capacity(rows + 1);
    offsets.push(0usize);
    for len in r.indices(rows, ncols)?.iter() {
        offsets.push(offsets.last().unwrap() + len as usize);
    }
    let nnz = *offsets.last().unwrap();
    let cols: Vec<u64> = r.indices(nnz, ncols)?.iter().collect();
    let values = r.values::<T>(nnz)?.to_vec();
    if !r.is_done() {
        return Err(Error::Protocol(format!(
            "a message from rank {from} is too long"
        )));
    }
    Ok((offsets, cols, values))
}
