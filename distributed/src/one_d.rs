//! 1D rows: `C = A·B` with A, B and C split by rows; each rank fetches
//! the rows of B its rows of A reference.
//!
//! Source: the row-wise distributed product of PETSc's MPIAIJ matrices
//! (Balay et al., "PETSc/TAO Users Manual", `MatMatMult`), the 1D
//! algorithms of Ballard, Buluç, Demmel, Grigori, Lipshitz, Schwartz and
//! Toledo, "Communication optimal parallel multiplication of sparse random
//! matrices" (SPAA 2013), §3.

use crate::assemble::{b_hat, columns_as_rows};
use crate::comm;
use crate::dist_csr::{compact_columns, rows_message, DistCsr};
use crate::local::{product, LocalProduct};
use crate::run::{elapsed_ms, RunStats};
use crate::shared_rows::SharedRows;
use crate::wire::{Reader, Writer};
use crate::{Algorithm, Error, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use rayon::prelude::*;
use spgemm_core::{CsrMatrix, CsrView, Scalar};
use std::borrow::Cow;
use std::time::Instant;

/// `C = A·B` by the 1D algorithm: C has A's row partition. Collective.
///
/// # Errors
/// On every rank, the same: A's columns not B's rows, partitions not of
/// the communicator's size, a local product's failure (naming the rank).
pub fn multiply<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
    backend: &dyn LocalProduct<T>,
) -> Result<(DistCsr<T>, RunStats)> {
    let start = Instant::now();
    crate::run::check_shapes(comm, a, b)?;
    let mut stats = RunStats::new(Algorithm::OneD);
    let replies = ask(comm, a, b, &mut stats)?;
    finish(comm, a, b, backend, replies, stats, start)
}

/// Products per entry of the rows of B a rank references past which
/// [`multiply_shared`] copies those rows into a compact B̂ rather than
/// compacting C's columns after the product: measured on 16 cores at
/// 4 × 4 ranks × threads, R-MAT 16 (about 100 products an entry) and the
/// 27-point stencil 64³ (about 25) gain from the copy, Erdős–Rényi
/// 2²⁰ × 8 (2) from reading B in place.
const GATHER_PRODUCTS_PER_ENTRY: usize = 8;

/// Entries of C per column of B from which [`multiply_shared`], reading
/// B in place, lists every column of B as C's rather than only those C
/// uses: random rows (the products it reads B in place for) then leave
/// few unused (a share of about e^−4 at four entries a column, none in
/// practice at Erdős–Rényi 2²⁰ × 8's 16 a rank of four), and C's
/// compaction (a pass marking its columns and one renaming them: 29–41
/// ms of a 280–380 ms product there on 16 cores) is skipped. An unused
/// column costs a later 1D product with C as A the fetch of its row.
const LIST_EVERY_COLUMN_PER_COLUMN: usize = 4;

/// `C = A·B` by the 1D algorithm with B's rows read in place from the
/// node's shared memory ([`crate::Fetch::Shared`]): each rank writes
/// its rows of B into the windows, then either copies the rows its rows
/// of A reference into a compact B̂ (where C will be far larger than
/// them) or multiplies by the window of B's rows they span where they lie
/// and compacts C's columns after (or, where C has at least
/// [`LIST_EVERY_COLUMN_PER_COLUMN`] entries per column of B, lists every
/// column of B as C's). Collective.
///
/// # Errors
/// On every rank, the same: A's columns not B's rows, partitions not of
/// the communicator's size, ranks on more than one node, B with 2³² rows
/// or columns or more, a local product's failure (naming the rank).
pub fn multiply_shared<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
    backend: &dyn LocalProduct<T>,
) -> Result<(DistCsr<T>, RunStats)> {
    let start = Instant::now();
    crate::run::check_shapes(comm, a, b)?;
    if !crate::shared_rows::on_one_node(comm) {
        return Err(Error::Argument(
            "B's rows are read in place only by the ranks of one node; these run on several (fetch them in messages)".into(),
        ));
    }
    shared_product(comm, a, b, backend, start)
}

/// [`multiply_shared`] once the shapes are checked and every rank is
/// known to run on one node (`start`: when the product began). Collective.
pub(crate) fn shared_product<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
    backend: &dyn LocalProduct<T>,
    start: Instant,
) -> Result<(DistCsr<T>, RunStats)> {
    let mut stats = RunStats::new(Algorithm::OneD);
    stats.shared_rows = true;
    let t = Instant::now();
    let shared = comm::agree(comm, SharedRows::share(comm, b))?;
    stats.fetch_ms += elapsed_ms(t);
    let t = Instant::now();
    let local = a.local();
    let need = a.col_map();
    // Products against the entries of the rows of B A references: where
    // C will be far larger than those rows (meshes, power-law graphs),
    // they are copied into a compact B̂ whose columns C inherits; where
    // not (random matrices), B is read where it lies and C's columns are
    // compacted after.
    let offsets = shared.row_offsets();
    let lens: Vec<usize> = need
        .par_iter()
        .map(|&g| offsets[g as usize + 1] - offsets[g as usize])
        .collect();
    let referenced: usize = lens.par_iter().sum();
    let nprod: usize = local
        .col_indices()
        .par_chunks(1 << 15)
        .map(|chunk| chunk.iter().map(|&k| lens[k as usize]).sum::<usize>())
        .sum();
    drop(lens);
    let (c, map) = if nprod > GATHER_PRODUCTS_PER_ENTRY * referenced {
        let (b_hat, map) = shared.gather(need);
        stats.merge_ms += elapsed_ms(t);
        let t = Instant::now();
        let c = comm::agree(comm, product(backend, local.view(), b_hat.view()))?;
        stats.local_ms += elapsed_ms(t);
        drop(shared);
        (c, map)
    } else {
        // The rows of B between the first and the last that A references:
        // A's columns renamed from there, so that a rank whose rows
        // reference B near its own rows multiplies by a B of about its
        // rows, not the whole (whose every row the local product's passes
        // over B would visit).
        let window = match (need.first(), need.last()) {
            (Some(&lo), Some(&hi)) => lo as usize..hi as usize + 1,
            _ => 0..0,
        };
        let rows: Vec<usize> = need.iter().map(|&g| g as usize - window.start).collect();
        let b_rows = shared.rows(window.clone());
        let renamed = columns_as_rows(local, &rows, window.len());
        let a_hat = renamed_view(local, renamed.as_deref(), window.len());
        stats.merge_ms += elapsed_ms(t);
        let t = Instant::now();
        let c = a_hat.and_then(|a_hat| product(backend, a_hat, b_rows.view()));
        let c = comm::agree(comm, c)?;
        drop(b_rows);
        stats.local_ms += elapsed_ms(t);
        drop(shared);
        let t = Instant::now();
        let ncols = c.ncols();
        let listed = if c.nnz() >= LIST_EVERY_COLUMN_PER_COLUMN * ncols {
            (c, (0..ncols as u64).collect())
        } else {
            compact_columns(c)
        };
        stats.merge_ms += elapsed_ms(t);
        listed
    };
    let r = comm.rank() as usize;
    let c = DistCsr::from_product(b.ncols(), a.row_partition().clone(), r, c, map);
    stats.total_ms = elapsed_ms(start);
    Ok((c, stats))
}

/// The first of A's column indices each rank owns as a row of B, per
/// rank (`ranks + 1`; rank `q` owns `need[bounds[q]..bounds[q + 1]]`).
fn bounds<T: Scalar>(a: &DistCsr<T>, b: &DistCsr<T>) -> Vec<usize> {
    let need = a.col_map();
    b.row_partition()
        .offsets()
        .iter()
        .map(|&o| need.partition_point(|&c| c < o))
        .collect()
}

/// Asks every rank for the rows of B this rank's rows of A reference and
/// returns the replies this rank owes each rank (the rows they asked for).
/// Collective.
pub(crate) fn ask<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
    stats: &mut RunStats,
) -> Result<Vec<Vec<u64>>> {
    let t = Instant::now();
    let (p, r) = (comm.size() as usize, comm.rank() as usize);
    let (k, n) = (b.nrows(), b.ncols());
    let rb = b.row_partition();
    let need = a.col_map();
    let bounds = bounds(a, b);
    let mut requests = vec![Vec::new(); p];
    for (q, msg) in requests.iter_mut().enumerate() {
        if q != r {
            let mut w = Writer::default();
            w.indices(need[bounds[q]..bounds[q + 1]].iter().copied(), k);
            *msg = w.finish();
        }
    }
    let asked = comm::exchange(comm, requests, &mut stats.inputs)?;
    let replies = crate::comm::agree(
        comm,
        asked
            .iter()
            .enumerate()
            .map(|(q, words)| {
                if q == r {
                    return Ok(Vec::new());
                }
                let ids: Vec<u64> = Reader::new(words, q).rest_indices(k).iter().collect();
                if let Some(&bad) = ids.iter().find(|&&g| !rb.range(r).contains(&g)) {
                    return Err(Error::Protocol(format!(
                        "rank {q} asked for row {bad} of B, which rank {r} does not hold"
                    )));
                }
                let first = rb.offsets()[r];
                let rows: Vec<usize> = ids.iter().map(|&g| (g - first) as usize).collect();
                Ok(rows_message(b.local().view(), &rows, Some(b.col_map()), n))
            })
            .collect::<Result<Vec<_>>>(),
    );
    stats.fetch_ms += elapsed_ms(t);
    replies
}

/// Sends `replies` (from [`ask`]), gathers B̂ (the rank's own rows of B
/// it needs and the fetched ones) and multiplies.
pub(crate) fn finish<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
    backend: &dyn LocalProduct<T>,
    replies: Vec<Vec<u64>>,
    mut stats: RunStats,
    start: Instant,
) -> Result<(DistCsr<T>, RunStats)> {
    let r = comm.rank() as usize;
    let rb = b.row_partition();
    let need = a.col_map();
    let bounds = bounds(a, b);
    let own: Vec<usize> = need[bounds[r]..bounds[r + 1]]
        .iter()
        .map(|&g| (g - rb.offsets()[r]) as usize)
        .collect();
    let t = Instant::now();
    let fetched = comm::exchange(comm, replies, &mut stats.inputs)?;
    stats.fetch_ms += elapsed_ms(t);
    let t = Instant::now();
    let counts: Vec<usize> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
    let remote = counts.iter().enumerate().any(|(q, &n)| q != r && n > 0);
    let operands = if remote {
        b_hat(b, &own, &fetched, &counts, r).map(|(b_hat, map)| (None, b_hat, map))
    } else {
        // Nothing fetched: B's part as it is, A's columns renamed as its rows.
        let renamed = columns_as_rows(a.local(), &own, b.local().nrows());
        Ok((renamed, Cow::Borrowed(b.local()), b.col_map().to_vec()))
    };
    let (renamed, b_hat, map) = comm::agree(comm, operands)?;
    drop(fetched);
    let local = a.local();
    let a_hat = comm::agree(comm, renamed_view(local, renamed.as_deref(), b_hat.nrows()))?;
    stats.merge_ms += elapsed_ms(t);
    let t = Instant::now();
    let c = comm::agree(comm, product(backend, a_hat, b_hat.view()))?;
    stats.local_ms += elapsed_ms(t);
    let c = DistCsr::from_product(b.ncols(), a.row_partition().clone(), r, c, map);
    stats.total_ms = elapsed_ms(start);
    Ok((c, stats))
}

/// `local` (A's rows) as the A of the local product: with its columns
/// `renamed` (from [`columns_as_rows`]) as rows of a B̂ of `nrows_b` rows,
/// or as it is.
fn renamed_view<'a, T: Scalar>(
    local: &'a CsrMatrix<T>,
    renamed: Option<&'a [u32]>,
    nrows_b: usize,
) -> Result<CsrView<'a, T>> {
    match renamed {
        Some(cols) => Ok(CsrView::new(
            local.nrows(),
            nrows_b,
            local.row_offsets(),
            cols,
            local.values(),
        )?),
        None => Ok(local.view()),
    }
}
