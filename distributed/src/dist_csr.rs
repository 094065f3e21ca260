//! A CSR matrix distributed by rows over the ranks of a communicator.

use crate::column_set::{bitmap_pays, ColumnSet, Marks};
use crate::comm::{self, agree, Traffic};
use crate::partition::Partition;
use crate::wire::{self, Reader};
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
/// 64. A rank's rows may use at most 2³² − 1 distinct columns. A
/// product's C may list a few columns its rows do not use (see
/// [`DistCsr::col_map`]).
#[derive(Clone, Debug)]
pub struct DistCsr<T> {
    ncols: u64,
    rows: Partition,
    rank: usize,
    local: CsrMatrix<T>,
    col_map: Vec<u64>,
}

/// `cols` (global, below `ncols`) as indices into the sorted list of the
/// distinct ones, and that list. `row_offsets` locate an entry's row for
/// the error.
///
/// Where the columns are not far sparser than their range, a bitmap of
/// the range marks them and each index is its bit's rank (a popcount
/// after a prefix sum over words), in parallel; otherwise a sort.
pub(crate) fn compact(
    cols: &[u64],
    ncols: u64,
    row_offsets: &[usize],
) -> Result<(Vec<u32>, Vec<u64>)> {
    const CHUNK: usize = 1 << 15;
    let largest = cols
        .par_chunks(CHUNK)
        .map(|c| c.iter().copied().max().unwrap_or(0))
        .max();
    if largest.is_some_and(|m| m >= ncols) {
        let at = cols
            .iter()
            .position(|&c| c >= ncols)
            .expect("a column is out of range");
        let row = row_offsets.partition_point(|&o| o <= at).saturating_sub(1);
        return Err(Error::Argument(format!(
            "local row {row}: column {} is outside the matrix's {ncols} columns",
            cols[at]
        )));
    }
    if !bitmap_pays(ncols, cols.len()) {
        return compact_by_sorting(cols);
    }
    let marks = Marks::new(ncols);
    cols.par_chunks(CHUNK).for_each(|chunk| {
        for &c in chunk {
            marks.mark(c);
        }
    });
    let set = marks.finish();
    if set.len() > u64::from(u32::MAX) {
        return Err(too_many_columns(set.len()));
    }
    let map = set.columns();
    let mut local = vec![0u32; cols.len()];
    local
        .par_chunks_mut(CHUNK)
        .zip(cols.par_chunks(CHUNK))
        .for_each(|(out, cols)| {
            for (o, &c) in out.iter_mut().zip(cols) {
                *o = set.position(c);
            }
        });
    Ok((local, map))
}

/// `c`'s columns (below its `ncols`, which fits a `u32`) renamed in place
/// to their positions among the distinct ones, and that sorted list: a
/// product's C with global columns as a rank's part. Where C uses every
/// column the names stay and the list is `0..ncols`.
pub(crate) fn compact_columns<T: Scalar>(c: CsrMatrix<T>) -> (CsrMatrix<T>, Vec<u64>) {
    const CHUNK: usize = 1 << 15;
    let (nrows, ncols, offsets, mut cols, values) = c.into_parts();
    let map: Vec<u64> = if bitmap_pays(ncols as u64, cols.len()) {
        // A bitmap per thread, ORed together, where they are few words
        // beside the entries (no atomic per entry); else one shared.
        let words = ncols.div_ceil(64);
        let threads = rayon::current_num_threads();
        let set = if words * threads <= cols.len() / 4 {
            let bits = cols
                .par_chunks(cols.len().div_ceil(threads))
                .map(|chunk| {
                    let mut bits = vec![0u64; words];
                    for &c in chunk {
                        bits[(c / 64) as usize] |= 1 << (c % 64);
                    }
                    bits
                })
                .reduce(
                    || vec![0u64; words],
                    |mut x, y| {
                        x.iter_mut().zip(y).for_each(|(w, v)| *w |= v);
                        x
                    },
                );
            ColumnSet::of_bits(bits)
        } else {
            let marks = Marks::new(ncols as u64);
            cols.par_chunks(CHUNK).for_each(|chunk| {
                for &c in chunk {
                    marks.mark(u64::from(c));
                }
            });
            marks.finish()
        };
        if set.len() < ncols as u64 {
            cols.par_chunks_mut(CHUNK).for_each(|chunk| {
                for c in chunk {
                    *c = set.position(u64::from(*c));
                }
            });
        }
        set.columns()
    } else {
        let mut map: Vec<u32> = cols.clone();
        map.par_sort_unstable();
        map.dedup();
        cols.par_iter_mut()
            .for_each(|c| *c = map.partition_point(|m| m < c) as u32);
        map.into_iter().map(u64::from).collect()
    };
    // SAFETY: renaming each column by its rank among the distinct columns
    // keeps every row's order and puts each below `map.len()`; offsets and
    // values are C's own.
    let c = unsafe { CsrMatrix::new_unchecked(nrows, map.len(), offsets, cols, values) };
    (c, map)
}

fn too_many_columns(n: u64) -> Error {
    Error::Argument(format!(
        "one rank's rows use {n} distinct columns; at most {} are supported",
        u32::MAX
    ))
}

/// [`compact`] by sorting a copy of the columns.
fn compact_by_sorting(cols: &[u64]) -> Result<(Vec<u32>, Vec<u64>)> {
    let mut map = cols.to_vec();
    map.par_sort_unstable();
    map.dedup();
    if map.len() > u32::MAX as usize {
        return Err(too_many_columns(map.len() as u64));
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
    pub(crate) fn compacted(
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

    /// The part of `rank` from a local product's result, whose columns
    /// index `col_map` (sorted, distinct) and use every column of it where
    /// the product keeps every structural entry (the backends do). A
    /// backend that drops entries leaves unused columns in the list: the
    /// results stay right, and a later 1D product with this matrix as A
    /// fetches their rows of B needlessly.
    pub(crate) fn from_product(
        ncols: u64,
        rows: Partition,
        rank: usize,
        local: CsrMatrix<T>,
        col_map: Vec<u64>,
    ) -> Self {
        Self {
            ncols,
            rows,
            rank,
            local,
            col_map,
        }
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
                let rows: Vec<usize> = (r.start as usize..r.end as usize).collect();
                *msg = rows_message(m.view(), &rows, None, ncols);
            }
        }
        let received = comm::exchange(comm, messages, &mut traffic)?;
        let mut part = Rows::new();
        let read = part.read(&received[root], root, partition.size(rank) as usize, ncols);
        let built = read.and_then(|()| {
            Self::compacted(
                ncols,
                partition,
                rank,
                part.offsets,
                &part.cols,
                part.values,
            )
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
        let rows: Vec<usize> = (0..self.local.nrows()).collect();
        messages[root] = rows_message(self.local.view(), &rows, Some(&self.col_map), self.ncols);
        let received = comm::exchange(comm, messages, &mut Traffic::default())?;
        let whole = || -> Result<CsrMatrix<T>> {
            let mut rows = Rows::new();
            for (q, words) in received.iter().enumerate() {
                rows.read(words, q, self.rows.size(q) as usize, self.ncols)?;
            }
            let cols = rows.cols.into_iter().map(|c| c as u32).collect();
            Ok(CsrMatrix::new(
                self.rows.len() as usize,
                self.ncols as usize,
                rows.offsets,
                cols,
                rows.values,
            )?)
        };
        let whole = if self.rank == root {
            whole().map(Some)
        } else {
            Ok(None)
        };
        agree(comm, whole)
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

    /// The global column of each local column, ascending: every column
    /// the rank's rows use, and for a product's C possibly others (a
    /// product reading B in place that lists every column of B where C
    /// has at least 4 entries per column; a backend that drops entries).
    pub fn col_map(&self) -> &[u64] {
        &self.col_map
    }

    /// Entries on every rank together. Collective.
    pub fn nnz(&self, comm: &SimpleCommunicator) -> u64 {
        comm::sum(comm, self.local.nnz() as u64)
    }
}

/// Rows `rows` of `m` as a message: their lengths, their columns mapped
/// to global by `col_map` (`None`: they are global; below `ncols`), their
/// values. Written in place, rows in parallel chunks.
pub(crate) fn rows_message<T: Scalar>(
    m: CsrView<'_, T>,
    rows: &[usize],
    col_map: Option<&[u64]>,
    ncols: u64,
) -> Vec<u64> {
    let offsets = m.row_offsets();
    let lens: Vec<usize> = rows.iter().map(|&i| offsets[i + 1] - offsets[i]).collect();
    let nnz: usize = lens.iter().sum();
    let wide = wire::index_bytes(ncols) == 8;
    let index_words = |n: usize| if wide { n } else { n.div_ceil(2) };
    let len_words = index_words(rows.len());
    let col_words = index_words(nnz);
    let value_words = (nnz * std::mem::size_of::<T>()).div_ceil(8);
    let mut words = vec![u64::MAX; len_words + col_words + value_words];
    let (len_part, rest) = words.split_at_mut(len_words);
    let (col_part, value_part) = rest.split_at_mut(col_words);
    if wide {
        for (o, &l) in len_part.iter_mut().zip(&lens) {
            *o = l as u64;
        }
    } else {
        let out: &mut [u32] = bytemuck::cast_slice_mut(len_part);
        for (o, &l) in out.iter_mut().zip(&lens) {
            *o = l as u32;
        }
    }
    let values: &mut [T] = &mut bytemuck::cast_slice_mut::<u64, T>(value_part)[..nnz];
    // Chunks of about CHUNK entries: (rows, their columns' and values' room).
    const CHUNK: usize = 1 << 16;
    let (mut cols64, mut cols32): (&mut [u64], &mut [u32]) = if wide {
        (col_part, &mut [])
    } else {
        (&mut [], bytemuck::cast_slice_mut(col_part))
    };
    let mut vals: &mut [T] = values;
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < rows.len() {
        let mut end = start;
        let mut n = 0;
        while end < rows.len() && (n < CHUNK || end == start) {
            n += lens[end];
            end += 1;
        }
        let (c64, r64) = std::mem::take(&mut cols64).split_at_mut(if wide { n } else { 0 });
        let (c32, r32) = std::mem::take(&mut cols32).split_at_mut(if wide { 0 } else { n });
        let (v, rv) = std::mem::take(&mut vals).split_at_mut(n);
        (cols64, cols32, vals) = (r64, r32, rv);
        pieces.push((&rows[start..end], c64, c32, v));
        start = end;
    }
    let global = |c: u32| col_map.map_or(u64::from(c), |map| map[c as usize]);
    pieces.into_par_iter().for_each(|(rows, c64, c32, v)| {
        let mut at = 0;
        for &i in rows {
            let span = offsets[i]..offsets[i + 1];
            let n = span.len();
            let src = &m.col_indices()[span.clone()];
            if wide {
                for (o, &c) in c64[at..at + n].iter_mut().zip(src) {
                    *o = global(c);
                }
            } else {
                for (o, &c) in c32[at..at + n].iter_mut().zip(src) {
                    *o = global(c) as u32;
                }
            }
            v[at..at + n].copy_from_slice(&m.values()[span]);
            at += n;
        }
    });
    words
}

/// Rows gathered from messages and local parts: row offsets, global
/// columns, values.
pub(crate) struct Rows<T> {
    pub offsets: Vec<usize>,
    pub cols: Vec<u64>,
    pub values: Vec<T>,
}

impl<T: Scalar> Rows<T> {
    /// No rows.
    pub fn new() -> Self {
        Self {
            offsets: vec![0],
            cols: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Appends the `rows` rows of a message from rank `from`.
    pub fn read(&mut self, words: &[u64], from: usize, rows: usize, ncols: u64) -> Result<()> {
        let mut r = Reader::new(words, from);
        let base = *self.offsets.last().unwrap();
        let mut at = base;
        for len in r.indices(rows, ncols)?.iter() {
            at += len as usize;
            self.offsets.push(at);
        }
        let nnz = at - base;
        r.indices(nnz, ncols)?.extend_into(&mut self.cols);
        self.values.extend_from_slice(r.values::<T>(nnz)?);
        if !r.is_done() {
            return Err(Error::Protocol(format!(
                "a message from rank {from} is too long"
            )));
        }
        Ok(())
    }

    /// Appends rows `rows` of `m`, whose columns index `col_map`.
    pub fn push_local(&mut self, m: &CsrMatrix<T>, col_map: &[u64], rows: &[usize]) {
        let nnz: usize = rows.iter().map(|&i| m.row_nnz(i)).sum();
        self.offsets.reserve(rows.len());
        self.cols.reserve(nnz);
        self.values.reserve(nnz);
        for &i in rows {
            let (c, v) = m.row(i);
            self.cols.extend(c.iter().map(|&c| col_map[c as usize]));
            self.values.extend_from_slice(v);
            self.offsets.push(self.cols.len());
        }
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }
}
