//! 2D sparse SUMMA on a `q × q` grid of ranks.
//!
//! Source: Buluç and Gilbert, "Parallel sparse matrix-matrix
//! multiplication and indexing: implementation and experiments", SIAM J.
//! Sci. Comput. 34(4), 2012, §3 (Sparse SUMMA): rank `(i, j)` holds block
//! `(i, j)` of A and of B; at stage `s` block `A(i, s)` is broadcast along
//! grid row `i`, `B(s, j)` along grid column `j`, and rank `(i, j)` adds
//! `A(i, s)·B(s, j)` into `C(i, j)`. A and B arrive split by rows and C is
//! returned so, each moved once between the layouts.

use crate::comm::{self, agree, Traffic};
use crate::dist_csr::{compact, rows_message, DistCsr, Rows};
use crate::local::{add, product, LocalProduct};
use crate::model::Grid;
use crate::run::{elapsed_ms, RunStats};
use crate::wire::{Reader, Writer};
use crate::{Algorithm, Error, Result};
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;
use spgemm_core::{CsrMatrix, Scalar};
use std::time::Instant;

/// Entries as (global row, global column, value) per destination rank.
pub(crate) struct Triplets<T> {
    pub rows: Vec<u64>,
    pub cols: Vec<u64>,
    pub values: Vec<T>,
}

impl<T: Scalar> Triplets<T> {
    pub fn new() -> Self {
        Self {
            rows: Vec::new(),
            cols: Vec::new(),
            values: Vec::new(),
        }
    }

    pub fn message(&self, nrows: u64, ncols: u64) -> Vec<u64> {
        if self.values.is_empty() {
            return Vec::new();
        }
        let mut w = Writer::default();
        w.word(self.values.len() as u64);
        w.indices(self.rows.iter().copied(), nrows);
        w.indices(self.cols.iter().copied(), ncols);
        w.values(&self.values);
        w.finish()
    }

    pub fn read(&mut self, words: &[u64], from: usize, nrows: u64, ncols: u64) -> Result<()> {
        if words.is_empty() {
            return Ok(());
        }
        let mut r = Reader::new(words, from);
        let n = r.word()? as usize;
        self.rows.extend(r.indices(n, nrows)?.iter());
        self.cols.extend(r.indices(n, ncols)?.iter());
        self.values.extend_from_slice(r.values::<T>(n)?);
        Ok(())
    }
}

/// Sends every entry of `m`'s local rows to the rank `dest(row, col)`
/// (global indices) and returns the entries received.
fn redistribute<T: Scalar>(
    comm: &SimpleCommunicator,
    m: &DistCsr<T>,
    dest: impl Fn(u64, u64) -> usize,
    traffic: &mut Traffic,
) -> Result<Triplets<T>> {
    let p = comm.size() as usize;
    let mut out: Vec<Triplets<T>> = (0..p).map(|_| Triplets::new()).collect();
    let first = m.global_rows().start;
    let local = m.local();
    for i in 0..local.nrows() {
        let g = first + i as u64;
        let (cols, values) = local.row(i);
        for (&c, &v) in cols.iter().zip(values) {
            let c = m.col_map()[c as usize];
            let t = &mut out[dest(g, c)];
            t.rows.push(g);
            t.cols.push(c);
            t.values.push(v);
        }
    }
    let messages = out
        .iter()
        .map(|t| t.message(m.nrows(), m.ncols()))
        .collect();
    let mut received = comm::exchange(comm, messages, traffic)?;
    let rank = comm.rank() as usize;
    let mut all = std::mem::replace(&mut out[rank], Triplets::new());
    for (q, words) in received.iter_mut().enumerate() {
        if q != rank {
            all.read(words, q, m.nrows(), m.ncols())?;
        }
    }
    Ok(all)
}

/// The block `rows × cols` starting at (`row0`, `col0`) from entries in
/// it.
fn block<T: Scalar>(
    t: &Triplets<T>,
    rows: std::ops::Range<u64>,
    cols: std::ops::Range<u64>,
) -> Result<CsrMatrix<T>> {
    let width = cols.end - cols.start;
    if width > spgemm_core::csr::MAX_COLUMNS as u64 {
        return Err(Error::Argument(format!(
            "a 2D block is {width} columns wide; at most {} are supported (use more ranks or --algorithm 1d)",
            spgemm_core::csr::MAX_COLUMNS
        )));
    }
    let r: Vec<usize> = t.rows.iter().map(|&g| (g - rows.start) as usize).collect();
    let c: Vec<u32> = t.cols.iter().map(|&g| (g - cols.start) as u32).collect();
    Ok(CsrMatrix::from_triplets(
        (rows.end - rows.start) as usize,
        width as usize,
        &r,
        &c,
        &t.values,
    )?)
}

/// `C = A·B` by 2D sparse SUMMA on a `q × q` grid (`q²` ranks): C has
/// A's row partition. Collective.
///
/// # Errors
/// On every rank, the same: a number of ranks that is not a square, A's
/// columns not B's rows, a local product's failure (naming the rank).
pub fn multiply<T: Scalar>(
    comm: &SimpleCommunicator,
    a: &DistCsr<T>,
    b: &DistCsr<T>,
    backend: &dyn LocalProduct<T>,
) -> Result<(DistCsr<T>, RunStats)> {
    let start = Instant::now();
    let (p, r) = (comm.size() as usize, comm.rank() as usize);
    crate::run::check_shapes(comm, a, b)?;
    let (m, k, n) = (a.nrows(), b.nrows(), b.ncols());
    let Grid {
        q,
        rows: gm,
        inner: gk,
        cols: gn,
    } = Grid::new(p, m, k, n)?;
    let (i, j) = (r / q, r % q);
    let mut stats = RunStats::new(Algorithm::TwoD);
    let t = Instant::now();
    let a_in = redistribute(
        comm,
        a,
        |g, c| gm.owner(g) * q + gk.owner(c),
        &mut stats.inputs,
    )?;
    let b_in = redistribute(
        comm,
        b,
        |g, c| gk.owner(g) * q + gn.owner(c),
        &mut stats.inputs,
    )?;
    let blocks = agree(
        comm,
        block(&a_in, gm.range(i), gk.range(j))
            .and_then(|x| Ok((x, block(&b_in, gk.range(i), gn.range(j))?))),
    )?;
    drop((a_in, b_in));
    let (a_block, b_block) = blocks;
    let row_comm = comm
        .split_by_color_with_key(Color::with_value(i as i32), j as i32)
        .ok_or_else(|| Error::Protocol("no grid row communicator".into()))?;
    let col_comm = comm
        .split_by_color_with_key(Color::with_value(j as i32), i as i32)
        .ok_or_else(|| Error::Protocol("no grid column communicator".into()))?;
    stats.fetch_ms += elapsed_ms(t);
    let width = gn.size(j);
    let mut c = CsrMatrix::zeros(gm.size(i) as usize, width as usize)?;
    for s in 0..q {
        let t = Instant::now();
        let send = |blk: &CsrMatrix<T>, ncols: u64, mine: bool| {
            if mine {
                rows_message(
                    blk.view(),
                    &(0..blk.nrows()).collect::<Vec<_>>(),
                    None,
                    ncols,
                )
            } else {
                Vec::new()
            }
        };
        let a_words = comm::broadcast(
            &row_comm,
            s,
            send(&a_block, gk.size(s), j == s),
            &mut stats.inputs,
        )?;
        let b_words = comm::broadcast(
            &col_comm,
            s,
            send(&b_block, gn.size(j), i == s),
            &mut stats.inputs,
        )?;
        let received =
            |words: &[u64], root: usize, rows: u64, ncols: u64| -> Result<CsrMatrix<T>> {
                let mut got = Rows::new();
                got.read(words, root, rows as usize, ncols)?;
                let c = got.cols.into_iter().map(|x| x as u32).collect();
                Ok(CsrMatrix::new(
                    rows as usize,
                    ncols as usize,
                    got.offsets,
                    c,
                    got.values,
                )?)
            };
        let both = || -> Result<_> {
            let a_s = if j == s {
                None
            } else {
                Some(received(&a_words, i * q + s, gm.size(i), gk.size(s))?)
            };
            let b_s = if i == s {
                None
            } else {
                Some(received(&b_words, s * q + j, gk.size(s), gn.size(j))?)
            };
            Ok((a_s, b_s))
        };
        let (a_s, b_s) = agree(comm, both())?;
        stats.fetch_ms += elapsed_ms(t);
        let t = Instant::now();
        let partial = product(
            backend,
            a_s.as_ref().unwrap_or(&a_block).view(),
            b_s.as_ref().unwrap_or(&b_block).view(),
        );
        let partial = agree(comm, partial)?;
        stats.local_ms += elapsed_ms(t);
        let t = Instant::now();
        c = add(&c, &partial)?;
        stats.merge_ms += elapsed_ms(t);
    }
    // C's block back to the owners of its rows.
    let t = Instant::now();
    let ra = a.row_partition();
    let mut out: Vec<Triplets<T>> = (0..p).map(|_| Triplets::new()).collect();
    for li in 0..c.nrows() {
        let g = gm.range(i).start + li as u64;
        let t = &mut out[ra.owner(g)];
        let (cols, values) = c.row(li);
        for (&col, &v) in cols.iter().zip(values) {
            t.rows.push(g);
            t.cols.push(gn.range(j).start + u64::from(col));
            t.values.push(v);
        }
    }
    let messages = out.iter().map(|t| t.message(m, n)).collect();
    let received = comm::exchange(comm, messages, &mut stats.c)?;
    // In rank order: the ranks of one grid row hold consecutive column
    // ranges of the same rows, so a stable placement by row leaves every
    // row's columns sorted.
    let own_block = std::mem::replace(&mut out[r], Triplets::new());
    let mut mine = Triplets::new();
    let own = a.global_rows();
    let built = (|| {
        for (from, words) in received.iter().enumerate() {
            if from == r {
                mine.rows.extend_from_slice(&own_block.rows);
                mine.cols.extend_from_slice(&own_block.cols);
                mine.values.extend_from_slice(&own_block.values);
            } else {
                mine.read(words, from, m, n)?;
            }
        }
        let mut offsets = vec![0usize; (own.end - own.start) as usize + 1];
        for &g in &mine.rows {
            offsets[(g - own.start) as usize + 1] += 1;
        }
        for x in 1..offsets.len() {
            offsets[x] += offsets[x - 1];
        }
        let mut next = offsets.clone();
        let mut cols = vec![0u64; mine.values.len()];
        let mut values = vec![T::ZERO; mine.values.len()];
        for ((&g, &c), &v) in mine.rows.iter().zip(&mine.cols).zip(&mine.values) {
            let at = &mut next[(g - own.start) as usize];
            cols[*at] = c;
            values[*at] = v;
            *at += 1;
        }
        let (local_cols, map) = compact(&cols, n, &offsets)?;
        let local = CsrMatrix::new(offsets.len() - 1, map.len(), offsets, local_cols, values)?;
        Ok(DistCsr::from_product(n, ra.clone(), r, local, map))
    })();
    let c = agree(comm, built)?;
    stats.merge_ms += elapsed_ms(t);
    stats.total_ms = elapsed_ms(start);
    Ok((c, stats))
}
