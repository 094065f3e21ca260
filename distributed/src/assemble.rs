//! The rows of B a rank multiplies by in the 1D algorithm: its own and
//! the fetched ones, as one CSR matrix over the columns they use.

use crate::column_set::{bitmap_pays, Marks};
use crate::dist_csr::{compact, DistCsr, Rows};
use crate::wire::{Indices, Reader};
use crate::{Error, Result};
use rayon::prelude::*;
use spgemm_core::{CsrMatrix, Scalar};
use std::borrow::Cow;

/// `a`'s column indices with column `k` renamed `rows[k]` (a rank that
/// fetches nothing multiplies by its own part of B as it is: A's columns
/// become local rows of B); `None` when that renames nothing.
pub(crate) fn columns_as_rows<T: Scalar>(
    a: &CsrMatrix<T>,
    rows: &[usize],
    nrows_b: usize,
) -> Option<Vec<u32>> {
    if a.ncols() == nrows_b && rows.iter().enumerate().all(|(k, &i)| k == i) {
        return None;
    }
    let mut cols = vec![0u32; a.nnz()];
    cols.par_chunks_mut(CHUNK)
        .zip(a.col_indices().par_chunks(CHUNK))
        .for_each(|(out, src)| {
            for (o, &c) in out.iter_mut().zip(src) {
                *o = rows[c as usize] as u32;
            }
        });
    Some(cols)
}

/// Rows received from one rank, read in place.
struct Fetched<'a, T> {
    lens: Indices<'a>,
    cols: Indices<'a>,
    values: &'a [T],
}

/// A stretch of B̂'s rows: this rank's own rows of B (by local index), or
/// rows received from another rank.
enum Piece<'a, T> {
    Own(&'a [usize]),
    Fetched(Fetched<'a, T>),
}

/// Entries per parallel task.
const CHUNK: usize = 1 << 15;

/// The rows `rows` (each `row(r)`'s columns and values) copied back to
/// back into `cols` and `values`, which hold exactly their entries, each
/// column renamed `rename(column)`; in parallel over chunks of rows.
pub(crate) fn copy_rows<'m, R: Sync, T: Scalar>(
    rows: &[R],
    row: impl Fn(&R) -> (&'m [u32], &'m [T]) + Sync,
    rename: impl Fn(u32) -> u32 + Sync,
    mut cols: &mut [u32],
    mut values: &mut [T],
) {
    let mut jobs = Vec::with_capacity(rows.len().div_ceil(CHUNK / 8 + 1));
    for chunk in rows.chunks(CHUNK / 8 + 1) {
        let n: usize = chunk.iter().map(|r| row(r).0.len()).sum();
        let (c, c_next) = std::mem::take(&mut cols).split_at_mut(n);
        let (v, v_next) = std::mem::take(&mut values).split_at_mut(n);
        (cols, values) = (c_next, v_next);
        jobs.push((chunk, c, v));
    }
    jobs.into_par_iter().for_each(|(chunk, c, v)| {
        let mut at = 0;
        for r in chunk {
            let (rc, rv) = row(r);
            for (o, &x) in c[at..at + rc.len()].iter_mut().zip(rc) {
                *o = rename(x);
            }
            v[at..at + rv.len()].copy_from_slice(rv);
            at += rc.len();
        }
    });
}

/// B̂: rows `own` of `b`'s part (`own[k]` is a local row) in the place
/// of rank `rank`, the rows `fetched[q]` holds (`counts[q]` of them) in
/// the place of rank `q`, over the sorted list of global columns they use
/// (returned with it).
///
/// # Errors
/// A malformed message ([`Error::Protocol`], naming its rank); more than
/// 2³² − 1 columns.
pub(crate) fn b_hat<'b, T: Scalar>(
    b: &'b DistCsr<T>,
    own: &[usize],
    fetched: &[Vec<u64>],
    counts: &[usize],
    rank: usize,
) -> Result<(Cow<'b, CsrMatrix<T>>, Vec<u64>)> {
    let ncols = b.ncols();
    let local = b.local();
    let mut pieces = Vec::with_capacity(counts.len());
    let mut nnz = 0usize;
    for (q, &rows) in counts.iter().enumerate() {
        if q == rank {
            nnz += own.iter().map(|&i| local.row_nnz(i)).sum::<usize>();
            pieces.push(Piece::Own(own));
        } else if rows > 0 {
            let mut r = Reader::new(&fetched[q], q);
            let lens = r.indices(rows, ncols)?;
            let n: usize = lens.iter().map(|l| l as usize).sum();
            let cols = r.indices(n, ncols)?;
            let values = r.values::<T>(n)?;
            if !r.is_done() {
                return Err(Error::Protocol(format!(
                    "a message from rank {q} is too long"
                )));
            }
            if let Some(bad) = cols.iter().find(|&c| c >= ncols) {
                return Err(Error::Protocol(format!(
                    "rank {q} sent column {bad} of {ncols}"
                )));
            }
            nnz += n;
            pieces.push(Piece::Fetched(Fetched { lens, cols, values }));
        }
    }
    if !bitmap_pays(ncols, nnz) {
        return by_sorting(b, &pieces);
    }
    // The columns used, as a bitmap of the column range.
    let marks = Marks::new(ncols);
    for piece in &pieces {
        match piece {
            Piece::Own(rows) => rows.par_chunks(CHUNK / 8 + 1).for_each(|rows| {
                for &i in rows {
                    for &c in local.row(i).0 {
                        marks.mark(b.col_map()[c as usize]);
                    }
                }
            }),
            Piece::Fetched(f) => (0..f.cols.len())
                .into_par_iter()
                .with_min_len(CHUNK)
                .for_each(|k| marks.mark(f.cols.get(k))),
        }
    }
    let set = marks.finish();
    if set.len() > u64::from(u32::MAX) {
        return Err(Error::Argument(format!(
            "one rank's rows of B use {} distinct columns; at most {} are supported",
            set.len(),
            u32::MAX
        )));
    }
    let map = set.columns();
    let position = |c: u64| set.position(c);
    // Row offsets, then columns and values piece by piece.
    let mut offsets = Vec::with_capacity(counts.iter().sum::<usize>() + own.len() + 1);
    offsets.push(0usize);
    for piece in &pieces {
        match piece {
            Piece::Own(rows) => {
                for &i in *rows {
                    offsets.push(offsets.last().unwrap() + local.row_nnz(i));
                }
            }
            Piece::Fetched(f) => {
                for l in f.lens.iter() {
                    offsets.push(offsets.last().unwrap() + l as usize);
                }
            }
        }
    }
    let mut cols = vec![0u32; nnz];
    let mut values = vec![T::ZERO; nnz];
    let (mut c_rest, mut v_rest) = (&mut cols[..], &mut values[..]);
    for piece in &pieces {
        match piece {
            Piece::Own(rows) => {
                let n: usize = rows.iter().map(|&i| local.row_nnz(i)).sum();
                let (c_out, c_next) = std::mem::take(&mut c_rest).split_at_mut(n);
                let (v_out, v_next) = std::mem::take(&mut v_rest).split_at_mut(n);
                (c_rest, v_rest) = (c_next, v_next);
                let remap: Vec<u32> = b.col_map().par_iter().map(|&g| position(g)).collect();
                copy_rows(rows, |&i| local.row(i), |x| remap[x as usize], c_out, v_out);
            }
            Piece::Fetched(f) => {
                let n = f.values.len();
                let (c_out, c_next) = std::mem::take(&mut c_rest).split_at_mut(n);
                let (v_out, v_next) = std::mem::take(&mut v_rest).split_at_mut(n);
                (c_rest, v_rest) = (c_next, v_next);
                c_out
                    .par_chunks_mut(CHUNK)
                    .enumerate()
                    .for_each(|(k, out)| {
                        for (j, o) in out.iter_mut().enumerate() {
                            *o = position(f.cols.get(k * CHUNK + j));
                        }
                    });
                v_out
                    .par_chunks_mut(CHUNK)
                    .zip(f.values.par_chunks(CHUNK))
                    .for_each(|(o, s)| {
                        o.copy_from_slice(s);
                    });
            }
        }
    }
    let nrows = offsets.len() - 1;
    let m = CsrMatrix::new(nrows, map.len(), offsets, cols, values)?;
    Ok((Cow::Owned(m), map))
}

/// [`b_hat`] for columns far sparser than their range: gathered with
/// global columns, then compacted by sorting.
fn by_sorting<'b, T: Scalar>(
    b: &DistCsr<T>,
    pieces: &[Piece<'_, T>],
) -> Result<(Cow<'b, CsrMatrix<T>>, Vec<u64>)> {
    let mut rows = Rows::new();
    for piece in pieces {
        match piece {
            Piece::Own(own) => rows.push_local(b.local(), b.col_map(), own),
            Piece::Fetched(f) => {
                for l in f.lens.iter() {
                    rows.offsets.push(rows.offsets.last().unwrap() + l as usize);
                }
                f.cols.extend_into(&mut rows.cols);
                rows.values.extend_from_slice(f.values);
            }
        }
    }
    let (local, map) = compact(&rows.cols, b.ncols(), &rows.offsets)?;
    let m = CsrMatrix::new(rows.len(), map.len(), rows.offsets, local, rows.values)?;
    Ok((Cow::Owned(m), map))
}
