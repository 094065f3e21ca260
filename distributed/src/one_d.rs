//! 1D rows: `C = A·B` with A, B and C split by rows; each rank fetches
//! the rows of B its rows of A reference.
//!
//! Source: the row-wise distributed product of PETSc's MPIAIJ matrices
//! (Balay et al., "PETSc/TAO Users Manual", `MatMatMult`), the 1D
//! algorithms of Ballard, Buluç, Demmel, Grigori, Lipshitz, Schwartz and
//! Toledo, "Communication optimal parallel multiplication of sparse random
//! matrices" (SPAA 2013), §3.

use crate::comm;
use crate::dist_csr::{compact, rows_message, DistCsr, Rows};
use crate::local::{add, product, LocalProduct};
use crate::run::{elapsed_ms, RunStats};
use crate::wire::{Reader, Writer};
use crate::{Algorithm, Error, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use spgemm_core::{CsrMatrix, Scalar};
use std::time::Instant;

/// How a rank uses the rows of B it owns while the others are in flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fetch {
    /// Multiply the entries of A whose columns it owns while the remote
    /// rows are in flight, then the rest, and add the two.
    Overlap,
    /// Wait for the remote rows, then one product over all of them.
    #[default]
    Whole,
}

impl std::str::FromStr for Fetch {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "overlap" => Ok(Self::Overlap),
            "whole" => Ok(Self::Whole),
            _ => Err(format!("unknown fetch '{s}' (whole, overlap)")),
        }
    }
}

/// The entries of `a` whose columns `keep` maps to a new column (below
/// `ncols`), in that column.
fn select_columns<T: Scalar>(
    a: &CsrMatrix<T>,
    ncols: usize,
    keep: impl Fn(u32) -> Option<u32>,
) -> Result<CsrMatrix<T>> {
    let mut offsets = Vec::with_capacity(a.nrows() + 1);
    offsets.push(0);
    let mut cols = Vec::new();
    let mut values = Vec::new();
    for i in 0..a.nrows() {
        let (c, v) = a.row(i);
        for (&c, &v) in c.iter().zip(v) {
            if let Some(k) = keep(c) {
                cols.push(k);
                values.push(v);
            }
        }
        offsets.push(cols.len());
    }
    Ok(CsrMatrix::new(a.nrows(), ncols, offsets, cols, values)?)
}

/// `rows` (global columns), compacted: the matrix and its column list.
fn from_rows<T: Scalar>(rows: Rows<T>, ncols: u64) -> Result<(CsrMatrix<T>, Vec<u64>)> {
    let (local, map) = compact(&rows.cols, ncols, &rows.offsets)?;
    let m = CsrMatrix::new(rows.len(), map.len(), rows.offsets, local, rows.values)?;
    Ok((m, map))
}

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
    fetch: Fetch,
) -> Result<(DistCsr<T>, RunStats)> {
    let start = Instant::now();
    crate::run::check_shapes(comm, a, b)?;
    let mut stats = RunStats::new(Algorithm::OneD);
    let replies = ask(comm, a, b, &mut stats)?;
    finish(comm, a, b, backend, fetch, replies, stats, start)
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
                Ok(rows_message(
                    b.local().view(),
                    ids.iter().map(|&g| (g - first) as usize),
                    |c| b.col_map()[c as usize],
                    n,
                ))
            })
            .collect::<Result<Vec<_>>>(),
    );
    stats.fetch_ms += elapsed_ms(t);
    replies
}

/// Sends `replies` (from [`ask`]), multiplies and merges.
#[allow(clippy::too_many_arguments)]
pub(crate) fn finish<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
    backend: &dyn LocalProduct<T>,
    fetch: Fetch,
    replies: Vec<Vec<u64>>,
    mut stats: RunStats,
    start: Instant,
) -> Result<(DistCsr<T>, RunStats)> {
    let r = comm.rank() as usize;
    let n = b.ncols();
    let rb = b.row_partition();
    let need = a.col_map();
    let bounds = bounds(a, b);
    let (k0, k1) = (bounds[r], bounds[r + 1]);
    let own: Vec<usize> = need[k0..k1]
        .iter()
        .map(|&g| (g - rb.offsets()[r]) as usize)
        .collect();
    let (c, map) = match fetch {
        Fetch::Overlap => {
            let t = Instant::now();
            let mut local_ms = 0.0;
            let (fetched, c_own) = comm::exchange_while(comm, replies, &mut stats.inputs, || {
                let t = Instant::now();
                let a_own = select_columns(a.local(), k1 - k0, |c| {
                    (k0..k1).contains(&(c as usize)).then(|| c - k0 as u32)
                })?;
                let b_own = select_rows(b.local(), &own)?;
                let c = product(backend, a_own.view(), b_own.view());
                local_ms = elapsed_ms(t);
                c
            })?;
            stats.fetch_ms += elapsed_ms(t) - local_ms;
            stats.local_ms += local_ms;
            let t = Instant::now();
            let gap = (k1 - k0) as u32;
            let remote = || -> Result<_> {
                let mut remote = Rows::new();
                for (q, words) in fetched.iter().enumerate() {
                    if q != r {
                        remote.read(words, q, bounds[q + 1] - bounds[q], n)?;
                    }
                }
                let b_rem = from_rows(remote, n)?;
                let a_rem = select_columns(a.local(), need.len() - (k1 - k0), |c| {
                    let c = c as usize;
                    if c < k0 {
                        Some(c as u32)
                    } else if c >= k1 {
                        Some(c as u32 - gap)
                    } else {
                        None
                    }
                })?;
                Ok((a_rem, b_rem))
            };
            let (a_rem, (b_rem, rem_map)) = comm::agree(comm, remote())?;
            let c_rem = comm::agree(comm, product(backend, a_rem.view(), b_rem.view()))?;
            stats.local_ms += elapsed_ms(t);
            let t = Instant::now();
            let sum = add(&c_own, b.col_map(), &c_rem, &rem_map)?;
            stats.merge_ms += elapsed_ms(t);
            sum
        }
        Fetch::Whole => {
            let t = Instant::now();
            let fetched = comm::exchange(comm, replies, &mut stats.inputs)?;
            stats.fetch_ms += elapsed_ms(t);
            let t = Instant::now();
            let assemble = || -> Result<_> {
                let mut rows = Rows::new();
                for (q, words) in fetched.iter().enumerate() {
                    if q == r {
                        rows.push_local(b.local(), b.col_map(), &own);
                    } else {
                        rows.read(words, q, bounds[q + 1] - bounds[q], n)?;
                    }
                }
                from_rows(rows, n)
            };
            let (b_hat, map) = comm::agree(comm, assemble())?;
            stats.merge_ms += elapsed_ms(t);
            let t = Instant::now();
            let c = comm::agree(comm, product(backend, a.local().view(), b_hat.view()))?;
            stats.local_ms += elapsed_ms(t);
            (c, map)
        }
    };
    let c = DistCsr::from_compact(n, a.row_partition().clone(), r, c, map)?;
    stats.total_ms = elapsed_ms(start);
    Ok((c, stats))
}

/// Rows `rows` of `m`, in that order.
fn select_rows<T: Scalar>(m: &CsrMatrix<T>, rows: &[usize]) -> Result<CsrMatrix<T>> {
    let mut offsets = Vec::with_capacity(rows.len() + 1);
    offsets.push(0);
    let mut cols = Vec::new();
    let mut values = Vec::new();
    for &i in rows {
        let (c, v) = m.row(i);
        cols.extend_from_slice(c);
        values.extend_from_slice(v);
        offsets.push(cols.len());
    }
    Ok(CsrMatrix::new(
        rows.len(),
        m.ncols(),
        offsets,
        cols,
        values,
    )?)
}
