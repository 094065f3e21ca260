//! Distributed products whose operands and C stay on the ranks' GPUs:
//! each rank's block of A and B lives on its GPU ([`DeviceDistCsr`]), the
//! 1D algorithm's rows of B move GPU to GPU through a [`DeviceExchange`]
//! (NCCL, or staged through the host), and C is left on the GPUs,
//! distributed by A's rows.
//!
//! The rows of B a rank needs are fetched in runs of consecutive rows:
//! runs closer than [`MERGE_GAP_ROWS`] rows are merged, and at most
//! [`MAX_RUNS`] runs are asked of one rank (the smallest gaps merged
//! first), so that one exchange is a few large copies rather than one per
//! row. The fetched runs and the rank's own rows are copied into place in
//! B̂, which has B's global rows (rows not fetched are empty), so that A's
//! global columns index it as they are: no column renaming, no packing.
//! One device product `A_local · B̂` follows (the single-GPU engine's).

use crate::comm::{self, agree, Traffic};
use crate::device_exchange::{DeviceExchange, Piece, Started};
use crate::run::{check_dims, elapsed_ms};
use crate::{DistCsr, Error, Partition, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use rayon::prelude::*;
use spgemm_core::device::Device;
use spgemm_core::gpu::{GpuEngine, GpuMatrix, RowRun};
use spgemm_core::{CsrMatrix, Scalar};
use std::sync::OnceLock;
use std::time::Instant;

/// Fewest needed rows whose runs are found in parallel.
const PARALLEL_ROWS: usize = 1 << 20;
/// Runs of needed rows this close (rows between them) are fetched as one.
pub const MERGE_GAP_ROWS: u64 = 16;
/// The most runs of rows one rank asks of another.
pub const MAX_RUNS: usize = 64;
/// The fraction (numerator, denominator) of the rows between the first
/// and the last needed of a rank above which they are fetched as one run:
/// at most 1/16 more rows than needed, and no pass over the needed rows to
/// find the gaps (planning Erdős–Rényi 2²² × 8 on 2 H100s took 1.07 ms
/// with that pass over 2 M columns, 0.08 ms without).
pub const WHOLE_SPAN: (u64, u64) = (15, 16);

/// A rank's block of a row-distributed matrix on its GPU: the rows of
/// [`DistCsr`]'s partition, with global 32-bit column indices on the
/// device.
pub struct DeviceDistCsr<D: Device, T> {
    ncols: u64,
    rows: Partition,
    rank: usize,
    /// The global columns the block's rows use, ascending; `None` when
    /// not known (a product's C): a product with this matrix as A then
    /// fetches every row of B.
    columns: Option<Vec<u64>>,
    /// The block's row offsets, read from the device when first needed.
    host_offsets: OnceLock<Vec<u64>>,
    matrix: GpuMatrix<D, T>,
}

impl<D: Device, T: Scalar> DeviceDistCsr<D, T> {
    /// `m`'s block uploaded to `engine`'s device. Collective.
    ///
    /// # Errors
    /// On every rank: more than `u32::MAX - 1` global columns; device
    /// errors (out of memory).
    pub fn upload(
        comm: &SimpleCommunicator,
        engine: &GpuEngine<D>,
        m: &DistCsr<T>,
    ) -> Result<Self> {
        let made = (|| {
            if m.ncols() > u32::MAX as u64 - 1 {
                return Err(Error::Argument(format!(
                    "{} columns do not fit the device's 32-bit column indices",
                    m.ncols()
                )));
            }
            let local = m.local();
            let map = m.col_map();
            let cols: Vec<u32> = local
                .col_indices()
                .par_iter()
                .map(|&c| map[c as usize] as u32)
                .collect();
            let global = CsrMatrix::new(
                local.nrows(),
                m.ncols() as usize,
                local.row_offsets().to_vec(),
                cols,
                local.values().to_vec(),
            )?;
            let offsets: Vec<u64> = local.row_offsets().iter().map(|&o| o as u64).collect();
            Ok(Self {
                ncols: m.ncols(),
                rows: m.row_partition().clone(),
                rank: m.rank(),
                columns: Some(map.to_vec()),
                host_offsets: OnceLock::from(offsets),
                matrix: engine.upload(&global)?,
            })
        })();
        agree(comm, made)
    }

    /// The block `matrix`, already on `engine`'s device (`rows × ncols`,
    /// global 32-bit column indices, checked as a borrow or an upload
    /// checks them): the ranks' blocks, in rank order, stack to the
    /// matrix. Its global columns are read back once and marked (the
    /// columns a product with it as A fetches). Collective.
    ///
    /// # Errors
    /// On every rank: `ncols` past `u32::MAX - 1` or not the matrix's
    /// columns, or the ranks' `ncols` differing; device errors (the
    /// column indices' read-back); host out of memory.
    pub fn from_device(
        comm: &SimpleCommunicator,
        engine: &GpuEngine<D>,
        matrix: GpuMatrix<D, T>,
        ncols: u64,
    ) -> Result<Self> {
        let checked = if ncols > u32::MAX as u64 - 1 {
            Err(Error::Argument(format!(
                "{ncols} columns do not fit the device's 32-bit column indices"
            )))
        } else if matrix.ncols() as u64 != ncols {
            Err(Error::Argument(format!(
                "the block has {} columns, not {ncols}",
                matrix.ncols()
            )))
        } else {
            Ok(())
        };
        agree(comm, checked)?;
        let widths = comm::all_gather(comm, ncols);
        if let Some(q) = widths.iter().position(|&w| w != ncols) {
            return Err(Error::Rank {
                rank: q,
                ranks: widths.len(),
                message: format!(
                    "its block has {} columns, rank {} has {ncols}",
                    widths[q],
                    comm.rank()
                ),
            });
        }
        let sizes = comm::all_gather(comm, matrix.nrows() as u64);
        let rows = agree(comm, Partition::from_sizes(&sizes))?;
        let columns = agree(comm, used_columns(engine.device(), &matrix, ncols))?;
        Ok(Self {
            ncols,
            rows,
            rank: comm.rank() as usize,
            columns: Some(columns),
            host_offsets: OnceLock::new(),
            matrix,
        })
    }

    /// The block on the device, taken out.
    pub fn into_matrix(self) -> GpuMatrix<D, T> {
        self.matrix
    }

    /// The block copied back into a [`DistCsr`]. Collective.
    ///
    /// # Errors
    /// On every rank: device errors; host out of memory.
    pub fn download(&self, comm: &SimpleCommunicator, engine: &GpuEngine<D>) -> Result<DistCsr<T>> {
        let made = (|| {
            let (_, _, offsets, cols, values) = engine.download(&self.matrix)?.into_parts();
            let cols: Vec<u64> = cols.par_iter().map(|&c| c as u64).collect();
            DistCsr::compacted(
                self.ncols,
                self.rows.clone(),
                self.rank,
                offsets,
                &cols,
                values,
            )
        })();
        agree(comm, made)
    }

    /// The block on the device (`rows × ncols`, global columns).
    pub fn matrix(&self) -> &GpuMatrix<D, T> {
        &self.matrix
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

    /// The block's row offsets on the host (read from the device once).
    fn offsets(&self, device: &D) -> Result<&[u64]> {
        if let Some(o) = self.host_offsets.get() {
            return Ok(o);
        }
        let n = self.matrix.nrows() + 1;
        let mut offsets = vec![0u64; n];
        let (rpt, _, _) = self.matrix.device_pointers();
        let stream = device.create_stream().map_err(spgemm_core::Error::from)?;
        // SAFETY: the row offsets live as long as the matrix, complete
        // (its product has finished), `n` u64s long.
        let buf = unsafe { device.borrow(rpt, n * 8) };
        device
            .copy_to_host(&stream, &buf, 0, bytemuck::cast_slice_mut(&mut offsets))
            .map_err(spgemm_core::Error::from)?;
        Ok(self.host_offsets.get_or_init(|| offsets))
    }
}

/// The distinct global columns of `matrix` (`ncols` of them), ascending:
/// its column indices read back and marked.
fn used_columns<D: Device, T: Scalar>(
    device: &D,
    matrix: &GpuMatrix<D, T>,
    ncols: u64,
) -> Result<Vec<u64>> {
    let nnz = matrix.nnz();
    let mut cols = spgemm_core::error::try_filled(nnz, 0u32, "the block's column indices")?;
    if nnz > 0 {
        let (_, col, _) = matrix.device_pointers();
        let stream = device.create_stream().map_err(spgemm_core::Error::from)?;
        // SAFETY: the column indices live as long as the matrix, complete
        // (checked when borrowed or uploaded), `nnz` u32s long.
        let buf = unsafe { device.borrow(col, nnz * 4) };
        device
            .copy_to_host(&stream, &buf, 0, bytemuck::cast_slice_mut(&mut cols))
            .map_err(spgemm_core::Error::from)?;
    }
    let marks = crate::column_set::Marks::new(ncols);
    cols.par_iter().for_each(|&c| marks.mark(u64::from(c)));
    Ok(marks.finish().columns())
}

/// What a resident product did on this rank: the exchange used, bytes
/// moved between GPUs and over MPI, the rows fetched and in how many runs,
/// and the time of each phase (milliseconds, wall clock).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ResidentStats {
    /// The device exchange (`"nccl"`, `"host"`).
    pub exchange: &'static str,
    /// Bytes of B's rows moved between GPUs.
    pub device: Traffic,
    /// Bytes of run requests and their sizes over MPI.
    pub host: Traffic,
    /// Rows of B fetched from other ranks.
    pub fetched_rows: u64,
    /// Runs they were fetched in.
    pub runs: u64,
    /// Asking for the runs and learning their sizes.
    pub plan_ms: f64,
    /// Starting the moves of the runs (row ends and columns, then values)
    /// and the copies of the rank's own rows into B̂, until the structure
    /// is in place (with host staging, the values too: they move before
    /// the product).
    pub fetch_ms: f64,
    /// Device time of the moves, from the structure's start to the
    /// values' end, where the exchange measures it (NCCL), else 0.
    pub moves_device_ms: f64,
    /// B̂'s row offsets placed and its structure checked.
    pub assemble_ms: f64,
    /// The local product `A_local · B̂`, whose numeric phase waits for
    /// the values.
    pub local_ms: f64,
    /// The whole product on this rank.
    pub total_ms: f64,
}

/// Extends `runs` by the run `first..first + len` (after the last),
/// merged into the last when they are closer than [`MERGE_GAP_ROWS`].
fn push_run(runs: &mut Vec<(u64, u64)>, first: u64, len: u64) {
    match runs.last_mut() {
        Some((f, l)) if first < *f + *l + MERGE_GAP_ROWS => *l = first + len - *f,
        _ => runs.push((first, len)),
    }
}

/// The runs to fetch for `rows` (ascending, distinct): one run from the
/// first to the last when at least [`WHOLE_SPAN`] of the rows between
/// them are needed (found at once, without reading `rows`), else
/// [`runs_of`].
fn runs_needed(rows: &[u64]) -> Vec<(u64, u64)> {
    match (rows.first(), rows.last()) {
        (Some(&first), Some(&last)) => {
            let span = last - first + 1;
            let (num, den) = WHOLE_SPAN;
            if rows.len() as u64 * den >= span * num {
                vec![(first, span)]
            } else {
                runs_of(rows)
            }
        }
        _ => Vec::new(),
    }
}

/// The runs of consecutive rows covering `rows` (ascending, distinct):
/// runs closer than [`MERGE_GAP_ROWS`] merged, then the smallest gaps
/// merged until at most [`MAX_RUNS`] remain. `(first, len)` each. Found
/// in parallel chunks (from a million rows), joined where they
/// meet.
pub fn runs_of(rows: &[u64]) -> Vec<(u64, u64)> {
    let chunk_runs = |chunk: &[u64]| {
        let mut runs = Vec::new();
        for &r in chunk {
            push_run(&mut runs, r, 1);
        }
        runs
    };
    // Below a million rows one pass here is quicker than waking the pool
    // (R-MAT 18 on 2 ranks took 3.4 ms to plan through the pool).
    let pieces: Vec<Vec<(u64, u64)>> = if rows.len() < PARALLEL_ROWS {
        vec![chunk_runs(rows)]
    } else {
        rows.par_chunks(1 << 16).map(chunk_runs).collect()
    };
    let mut runs = Vec::new();
    for (first, len) in pieces.into_iter().flatten() {
        push_run(&mut runs, first, len);
    }
    if runs.len() > MAX_RUNS {
        let mut gaps: Vec<u64> = runs
            .windows(2)
            .map(|w| w[1].0 - (w[0].0 + w[0].1))
            .collect();
        gaps.sort_unstable_by(|x, y| y.cmp(x));
        // Keep the MAX_RUNS - 1 largest gaps; where the smallest of them
        // ties with gaps beyond, merge all of that size.
        let t = gaps[MAX_RUNS - 2];
        let keep = if gaps.partition_point(|&g| g >= t) < MAX_RUNS {
            t
        } else {
            t + 1
        };
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(MAX_RUNS);
        for (first, len) in runs {
            match merged.last_mut() {
                Some((f, l)) if first - (*f + *l) < keep => *l = first + len - *f,
                _ => merged.push((first, len)),
            }
        }
        runs = merged;
    }
    runs
}

/// `C = A·B` with A, B and C on the ranks' GPUs, by 1D rows through
/// `exchange`; C is distributed by A's rows. Collective.
///
/// # Errors
/// On every rank ([`Error::Rank`] naming the first rank at fault): shapes
/// that do not match or partitions of another communicator; a malformed
/// request or reply (ranks of different builds); device and exchange
/// errors, out of memory among them.
pub fn multiply<D: Device, T: Scalar>(
    comm: &SimpleCommunicator,
    engine: &GpuEngine<D>,
    exchange: &dyn DeviceExchange<D>,
    a: &DeviceDistCsr<D, T>,
    b: &DeviceDistCsr<D, T>,
) -> Result<(DeviceDistCsr<D, T>, ResidentStats)> {
    let start = Instant::now();
    let (rank, ranks) = (comm.rank() as usize, comm.size() as usize);
    agree(
        comm,
        check_dims(
            comm,
            (a.nrows(), a.ncols, a.rows.parts()),
            (b.nrows(), b.ncols, b.rows.parts()),
        ),
    )?;
    let mut stats = ResidentStats {
        exchange: exchange.name(),
        ..Default::default()
    };
    let dev = engine.device();
    let b_offsets = agree(comm, b.offsets(dev))?;
    // The runs of B's rows this rank wants from each other rank, in their
    // local rows.
    let wanted: Vec<Vec<(u64, u64)>> = (0..ranks)
        .map(|q| {
            let range = b.rows.range(q);
            if q == rank || range.is_empty() {
                return Vec::new();
            }
            match &a.columns {
                Some(cols) => {
                    let lo = cols.partition_point(|&c| c < range.start);
                    let hi = cols.partition_point(|&c| c < range.end);
                    runs_needed(&cols[lo..hi])
                        .into_iter()
                        .map(|(f, l)| (f - range.start, l))
                        .collect()
                }
                None => vec![(0, range.end - range.start)],
            }
        })
        .collect();
    let asks = wanted
        .iter()
        .map(|runs| runs.iter().flat_map(|&(f, l)| [f, l]).collect())
        .collect();
    let asked = comm::exchange(comm, asks, &mut stats.host)?;
    // What others asked of this rank: checked, answered with each run's
    // first offset and entries.
    let mine = b.rows.size(rank);
    let answers = asked
        .iter()
        .enumerate()
        .map(|(q, words)| {
            if words.len() % 2 != 0 {
                return Err(Error::Protocol(format!(
                    "rank {q} asked for runs in {} words",
                    words.len()
                )));
            }
            let mut reply = Vec::with_capacity(words.len());
            for run in words.chunks(2) {
                let (first, len) = (run[0], run[1]);
                if len == 0 || first.checked_add(len).is_none_or(|e| e > mine) {
                    return Err(Error::Protocol(format!(
                        "rank {q} asked for rows {first}..+{len} of a block of {mine}"
                    )));
                }
                let from = b_offsets[first as usize];
                reply.extend([from, b_offsets[(first + len) as usize] - from]);
            }
            Ok(reply)
        })
        .collect::<Result<Vec<Vec<u64>>>>();
    let answers = agree(comm, answers)?;
    let replies = comm::exchange(comm, answers, &mut stats.host)?;
    let runs = agree(comm, b_hat_runs(b, rank, &wanted, &replies, b_offsets))?;
    stats.plan_ms = elapsed_ms(start);

    let t = Instant::now();
    let nnz: u64 = runs.iter().map(|(r, _)| r.entries).sum();
    let assembly = agree(
        comm,
        engine
            .assembly::<T>(b.nrows() as usize, b.ncols as usize, nnz as usize)
            .map_err(Error::from),
    )?;
    let size = std::mem::size_of::<T>() as u64;
    let (rpt, col, val) = b.matrix.device_pointers();
    // Row ends and columns move first; the values follow at once on the
    // exchange's stream, landing while B̂ is assembled and the product's
    // first kernels run, which read only B̂'s structure.
    let (mut sends, mut value_sends) = (Vec::new(), Vec::new());
    for (q, words) in asked.iter().enumerate() {
        for run in words.chunks(2) {
            let (first, len) = (run[0] as usize, run[1] as usize);
            let (from, to) = (b_offsets[first], b_offsets[first + len]);
            let piece = |ptr, bytes| Piece {
                peer: q,
                ptr,
                bytes,
            };
            sends.extend([
                piece(rpt + 8 * (first as u64 + 1), 8 * len),
                piece(col + 4 * from, (4 * (to - from)) as usize),
            ]);
            value_sends.push(piece(val + size * from, (size * (to - from)) as usize));
        }
    }
    let (mut recvs, mut value_recvs) = (Vec::new(), Vec::new());
    let (mut own, mut own_values) = (Vec::new(), Vec::new());
    let mut offset = 0u64;
    for (run, peer) in &runs {
        let at = |ptr: u64, bytes: u64| (ptr, bytes as usize);
        let pieces = [
            at(assembly.row_ends_at(run.first_row), 8 * run.rows as u64),
            at(assembly.columns_at(offset as usize), 4 * run.entries),
            at(assembly.values_at(offset as usize), size * run.entries),
        ];
        match peer {
            Some(q) => {
                let piece = |(ptr, bytes)| Piece {
                    peer: *q,
                    ptr,
                    bytes,
                };
                recvs.extend([piece(pieces[0]), piece(pieces[1])]);
                value_recvs.push(piece(pieces[2]));
            }
            None => {
                own.extend([
                    (pieces[0], (rpt + 8, 8 * run.rows)),
                    (pieces[1], (col, (4 * run.entries) as usize)),
                ]);
                own_values.push((pieces[2], (val, (size * run.entries) as usize)));
            }
        }
        offset += run.entries;
    }
    // The rank's own rows are copied while the others' arrive.
    let copies = dev.create_copy_stream().map_err(spgemm_core::Error::from)?;
    let values_copies = dev.create_copy_stream().map_err(spgemm_core::Error::from)?;
    let mut borrowed = Vec::new();
    let copying = copy_spans(dev, &copies, &own, &mut borrowed)
        .and_then(|()| copy_spans(dev, &values_copies, &own_values, &mut borrowed));
    // Whatever fails, nothing is left writing into B̂'s arrays before the
    // error returns (every rank fails alike: the errors are agreed).
    let fail = |e: Error| {
        let _ = exchange.finish(dev);
        let _ = dev.synchronize(&copies);
        let _ = dev.synchronize(&values_copies);
        e
    };
    let (structure, values) = agree(comm, copying)
        .and_then(|()| {
            let structure = exchange.start(dev, &sends, &recvs)?;
            Ok((structure, exchange.start(dev, &value_sends, &value_recvs)?))
        })
        .map_err(fail)?;
    // The values' copies wait for the received values (the product's
    // numeric phase waits for them); the host for the structure.
    let after = |stream, started: &Started<D>| match &started.ready {
        Some(ready) => dev.wait(stream, ready),
        None => Ok(()),
    };
    let values_ready = after(&values_copies, &values).and_then(|()| dev.record(&values_copies));
    let landed = after(&copies, &structure).and_then(|()| dev.synchronize(&copies));
    let values_ready = landed
        .and(values_ready)
        .map_err(|e| Error::from(spgemm_core::Error::from(e)));
    let values_ready = agree(comm, values_ready).map_err(fail)?;
    stats.device = Traffic {
        sent: structure.traffic.sent + values.traffic.sent,
        received: structure.traffic.received + values.traffic.received,
    };
    stats.fetched_rows = runs
        .iter()
        .filter(|(_, p)| p.is_some())
        .map(|(r, _)| r.rows as u64)
        .sum();
    stats.runs = runs.iter().filter(|(_, p)| p.is_some()).count() as u64;
    stats.fetch_ms = elapsed_ms(t);

    let t = Instant::now();
    let row_runs: Vec<RowRun> = runs.iter().map(|(r, _)| *r).collect();
    // Every rank's B was checked when uploaded; B̂'s rows are sorted if
    // every rank's are.
    let sorted = comm::sum(comm, u64::from(!b.matrix.sorted_rows())) == 0;
    let assembled = engine.assemble(assembly, &row_runs, Some(sorted));
    let b_hat = agree(comm, assembled.map_err(Error::from)).map_err(fail)?;
    stats.assemble_ms = elapsed_ms(t);
    let t = Instant::now();
    // The product's numeric phase waits for the values on the device.
    let product = engine
        .multiply_values_after(&a.matrix, &b_hat, &values_ready)
        .map_err(|e| Error::Local(e.to_string()));
    // B̂ lives until the values have landed, whatever the product did.
    let moved = exchange.finish(dev);
    let copied = dev.synchronize(&values_copies);
    drop(b_hat);
    drop(borrowed);
    stats.moves_device_ms = moved?.unwrap_or(0.0);
    agree(
        comm,
        copied.map_err(|e| Error::from(spgemm_core::Error::from(e))),
    )?;
    let c = agree(comm, product.map(|(c, _)| c))?;
    stats.local_ms = elapsed_ms(t);
    stats.total_ms = elapsed_ms(start);
    Ok((
        DeviceDistCsr {
            ncols: b.ncols,
            rows: a.rows.clone(),
            rank,
            columns: None,
            host_offsets: OnceLock::new(),
            matrix: c,
        },
        stats,
    ))
}

/// B̂'s runs in row order, each with the rank it comes from (`None`: this
/// rank's own rows): the runs `wanted` of each rank with the sizes it
/// `replied`, and this rank's block whole.
fn b_hat_runs<D: Device, T: Scalar>(
    b: &DeviceDistCsr<D, T>,
    rank: usize,
    wanted: &[Vec<(u64, u64)>],
    replies: &[Vec<u64>],
    offsets: &[u64],
) -> Result<Vec<(RowRun, Option<usize>)>> {
    let mut runs = Vec::new();
    for (q, (want, reply)) in wanted.iter().zip(replies).enumerate() {
        let start = b.rows.range(q).start as usize;
        if q == rank {
            let rows = b.rows.size(q) as usize;
            let entries = offsets[rows];
            if rows > 0 {
                runs.push((
                    RowRun {
                        first_row: start,
                        rows,
                        source_offset: 0,
                        entries,
                    },
                    None,
                ));
            }
            continue;
        }
        if reply.len() != 2 * want.len() {
            return Err(Error::Protocol(format!(
                "rank {q} answered {} words for {} runs",
                reply.len(),
                want.len()
            )));
        }
        for (&(first, len), sizes) in want.iter().zip(reply.chunks(2)) {
            let run = RowRun {
                first_row: start + first as usize,
                rows: len as usize,
                source_offset: sizes[0],
                entries: sizes[1],
            };
            runs.push((run, Some(q)));
        }
    }
    Ok(runs)
}

/// A device address and a length in bytes.
type Span = (u64, usize);

/// Starts copying the spans `(to, from)` on `stream`, keeping the
/// borrowed buffers in `borrowed` (they must outlive the copies).
fn copy_spans<D: Device>(
    device: &D,
    stream: &D::Stream,
    spans: &[(Span, Span)],
    borrowed: &mut Vec<D::Buffer>,
) -> Result<()> {
    for &((to, bytes), (from, _)) in spans.iter().filter(|((_, b), _)| *b > 0) {
        // SAFETY: both address live device memory of `bytes` bytes (B's
        // block and B̂'s arrays), kept alive until the stream is
        // synchronised.
        let (dst, src) = unsafe { (device.borrow(to, bytes), device.borrow(from, bytes)) };
        device
            .copy_device(stream, &src, 0, &dst, 0, bytes)
            .map_err(spgemm_core::Error::from)?;
        borrowed.extend([dst, src]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_rows_share_a_run() {
        assert_eq!(runs_of(&[]), []);
        assert_eq!(runs_of(&[3, 4, 5, 9, 40]), [(3, 7), (40, 1)]);
        let far = MERGE_GAP_ROWS + 5;
        assert_eq!(runs_of(&[0, far]), [(0, 1), (far, 1)]);
        assert_eq!(runs_of(&[0, MERGE_GAP_ROWS]), [(0, MERGE_GAP_ROWS + 1)]);
    }

    #[test]
    fn nearly_every_row_is_one_run() {
        assert_eq!(runs_needed(&[]), []);
        // 15 of 16 rows needed: one run over the gap.
        let rows: Vec<u64> = (100..116).filter(|&r| r != 107).collect();
        assert_eq!(runs_needed(&rows), [(100, 16)]);
        // 14 of 16, the gap wider than MERGE_GAP_ROWS apart: runs as found.
        let far = MERGE_GAP_ROWS + 100;
        let rows = [0, 1, 2, far];
        assert_eq!(runs_needed(&rows), runs_of(&rows));
        assert_eq!(runs_needed(&rows), [(0, 3), (far, 1)]);
    }

    #[test]
    fn runs_found_in_chunks_join_where_chunks_meet() {
        // 1,300,000 rows (in parallel, several chunks), gaps of 1..=15 rows and every
        // 30,001st a gap of 1,000: one run per stretch between those.
        let mut rows = vec![5u64];
        for k in 1..1_300_000u64 {
            let gap = if k % 30_001 == 0 {
                1000
            } else {
                1 + k * 7 % 15
            };
            rows.push(rows.last().unwrap() + gap);
        }
        let runs = runs_of(&rows);
        assert_eq!(runs.len(), 1 + (1_300_000 - 1) / 30_001);
        let mut at = 0;
        for &(first, len) in &runs {
            assert_eq!(first, rows[at], "a run starts at a row");
            let end = rows[at..].partition_point(|&r| r < first + len) + at;
            assert_eq!(rows[end - 1], first + len - 1, "a run ends at a row");
            at = end;
        }
        assert_eq!(at, rows.len());
    }

    #[test]
    fn the_smallest_gaps_merge_first_beyond_the_limit() {
        // 2 × MAX_RUNS single rows, gaps alternately 100 and 1000 rows.
        let mut rows = vec![0u64];
        for k in 1..2 * MAX_RUNS as u64 {
            let gap = if k % 2 == 0 { 1000 } else { 100 };
            rows.push(rows.last().unwrap() + gap);
        }
        let runs = runs_of(&rows);
        assert!(runs.len() <= MAX_RUNS, "{} runs", runs.len());
        assert!(runs.len() >= MAX_RUNS / 2);
        // Every row covered, runs ascending and apart.
        for r in &rows {
            assert!(runs.iter().any(|&(f, l)| (f..f + l).contains(r)), "row {r}");
        }
        assert!(runs.windows(2).all(|w| w[0].0 + w[0].1 < w[1].0));
        // Only the 100-row gaps were merged.
        assert!(runs.windows(2).all(|w| w[1].0 - (w[0].0 + w[0].1) >= 999));
    }
}
