//! Products larger than device memory (hybrid CPU-GPU pipelining, Wu 2015,
//! §3.3): the rows of A are split into chunks whose inputs, output and
//! metadata fit a device-memory budget; chunks run on two workers, each on
//! its own streams, so one chunk's copies overlap another's kernels, and C
//! is assembled in host memory.

use super::engine::GpuEngine;
use crate::csr::CsrMatrix;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::reference::check_dimensions;
use crate::scalar::Scalar;
use crate::stats::product_stats;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Chunks in flight at once (two workers).
const IN_FLIGHT: usize = 2;

/// Device bytes a row of A costs in a chunk: its entries of A, an upper
/// bound on its entries of C (`min(nprod, ncols)`), its row offsets in A
/// and C and its slots of binning metadata.
fn row_bytes(a_nnz: usize, nprod: u64, ncols: usize, value_bytes: usize) -> u128 {
    let entry = 4 + value_bytes as u128;
    a_nnz as u128 * entry + nprod.min(ncols as u64) as u128 * entry + 8 * 4
}

/// Splits rows into contiguous chunks of at most `per_chunk` device bytes
/// each (see `row_bytes`).
///
/// # Errors
/// [`Error::TooLarge`] naming the row when a single row does not fit.
pub fn split_rows(
    a_row_nnz: &[usize],
    nprod: &[u64],
    ncols: usize,
    value_bytes: usize,
    per_chunk: u128,
) -> Result<Vec<Range<usize>>> {
    let mut chunks = Vec::new();
    let (mut start, mut used) = (0usize, 0u128);
    for (i, (&nz, &np)) in a_row_nnz.iter().zip(nprod).enumerate() {
        let cost = row_bytes(nz, np, ncols, value_bytes);
        if cost > per_chunk {
            return Err(Error::TooLarge {
                what: "device bytes of one row of the product (row of A in the chunk budget)",
                value: cost,
                limit: per_chunk,
            });
        }
        if used + cost > per_chunk {
            chunks.push(start..i);
            start = i;
            used = 0;
        }
        used += cost;
    }
    if start < a_row_nnz.len() {
        chunks.push(start..a_row_nnz.len());
    }
    Ok(chunks)
}

/// Rows `r` of `a` as a matrix of their own.
fn rows_of<T: Scalar>(a: &CsrMatrix<T>, r: Range<usize>) -> Result<CsrMatrix<T>> {
    let off = a.row_offsets();
    let (p0, p1) = (off[r.start], off[r.end]);
    let offsets: Vec<usize> = off[r.start..=r.end].iter().map(|&o| o - p0).collect();
    CsrMatrix::new(
        r.len(),
        a.ncols(),
        offsets,
        a.col_indices()[p0..p1].to_vec(),
        a.values()[p0..p1].to_vec(),
    )
}

impl<D: Device> GpuEngine<D> {
    /// `C = A·B` using at most about `budget` bytes of device memory: B
    /// stays on the device, A's rows go through in chunks sized by their
    /// products, C is assembled on the host. Returns C and the number of
    /// chunks. The result equals [`GpuEngine::multiply_host`]'s up to
    /// rounding (chunks may choose different thread groups).
    ///
    /// # Errors
    /// [`Error::TooLarge`] when B, or a single row of the product, does not
    /// fit the budget; the errors of [`GpuEngine::multiply`].
    pub fn multiply_chunked<T: Scalar>(
        &self,
        a: &CsrMatrix<T>,
        b: &CsrMatrix<T>,
        budget: usize,
    ) -> Result<(CsrMatrix<T>, usize)> {
        check_dimensions(a, b)?;
        let vb = std::mem::size_of::<T>();
        let b_bytes = (b.nrows() as u128 + 1) * 8 + b.nnz() as u128 * (4 + vb as u128);
        if 2 * b_bytes > budget as u128 {
            return Err(Error::TooLarge {
                what: "device bytes of B (at most half the memory budget)",
                value: b_bytes,
                limit: budget as u128 / 2,
            });
        }
        let stats = product_stats(a, b)?;
        let row_nnz: Vec<usize> = (0..a.nrows()).map(|i| a.row_nnz(i)).collect();
        let per_chunk = (budget as u128 - b_bytes) / IN_FLIGHT as u128;
        let chunks = split_rows(&row_nnz, &stats.nprod, b.ncols(), vb, per_chunk)?;
        let gb = self.upload(b)?;
        let next = AtomicUsize::new(0);
        let parts: Mutex<Vec<Option<CsrMatrix<T>>>> = Mutex::new(vec![None; chunks.len()]);
        let failure: Mutex<Option<Error>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for _ in 0..IN_FLIGHT.min(chunks.len()) {
                scope.spawn(|| loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let stop = failure.lock().map_or(true, |f| f.is_some());
                    if k >= chunks.len() || stop {
                        return;
                    }
                    let run = || -> Result<CsrMatrix<T>> {
                        let ga = self.upload(&rows_of(a, chunks[k].clone())?)?;
                        self.download(&self.multiply(&ga, &gb)?.0)
                    };
                    match run() {
                        Ok(c) => {
                            parts.lock().expect("no worker panics holding the lock")[k] = Some(c)
                        }
                        Err(e) => {
                            failure
                                .lock()
                                .expect("no worker panics holding the lock")
                                .get_or_insert(e);
                            return;
                        }
                    }
                });
            }
        });
        if let Some(e) = failure.into_inner().expect("workers finished") {
            return Err(e);
        }
        let parts: Vec<CsrMatrix<T>> = parts
            .into_inner()
            .expect("workers finished")
            .into_iter()
            .map(|p| p.expect("every chunk ran"))
            .collect();
        let nnz: usize = parts.iter().map(|p| p.nnz()).sum();
        let mut offsets = crate::error::try_with_capacity(a.nrows() + 1, "C row offsets")?;
        let mut cols = crate::error::try_with_capacity(nnz, "C column indices")?;
        let mut vals = crate::error::try_with_capacity(nnz, "C values")?;
        offsets.push(0usize);
        for p in &parts {
            let base = cols.len();
            offsets.extend(p.row_offsets()[1..].iter().map(|&o| o + base));
            cols.extend_from_slice(p.col_indices());
            vals.extend_from_slice(p.values());
        }
        Ok((
            CsrMatrix::new(a.nrows(), b.ncols(), offsets, cols, vals)?,
            chunks.len(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_all_rows_within_budget() {
        let nnz = [3usize, 0, 5, 2, 2, 7, 1];
        let nprod = [30u64, 0, 50, 20, 20, 70, 10];
        let per = row_bytes(7, 70, 1000, 8) + row_bytes(1, 10, 1000, 8);
        let chunks = split_rows(&nnz, &nprod, 1000, 8, per).unwrap();
        assert_eq!(chunks.first().unwrap().start, 0);
        assert_eq!(chunks.last().unwrap().end, 7);
        assert!(chunks.windows(2).all(|w| w[0].end == w[1].start));
        for c in &chunks {
            let used: u128 = c
                .clone()
                .map(|i| row_bytes(nnz[i], nprod[i], 1000, 8))
                .sum();
            assert!(used <= per, "{c:?}");
        }
        assert!(chunks.len() >= 3);
    }

    #[test]
    fn a_row_larger_than_a_chunk_is_an_error_naming_it() {
        let e = split_rows(&[1, 100], &[5, 100_000], 1 << 20, 8, 10_000).unwrap_err();
        assert!(matches!(e, Error::TooLarge { .. }), "{e}");
        assert!(e.to_string().contains("row"), "{e}");
    }

    #[test]
    fn rows_of_rebases_offsets() {
        let a = crate::generate::uniform::<f64>(10, 8, 3, 1).unwrap();
        let r = rows_of(&a, 3..7).unwrap();
        assert_eq!(r.nrows(), 4);
        for i in 0..4 {
            assert_eq!(r.row(i), a.row(i + 3));
        }
    }
}
