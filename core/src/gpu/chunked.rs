//! Products larger than device memory (hybrid CPU-GPU pipelining, Wu 2015,
//! §3.3): the rows of A are split into chunks whose inputs, output and
//! metadata fit a device-memory budget; chunks run on two workers, each on
//! its own streams, so one chunk's copies overlap another's kernels. A first
//! pass counts each chunk's entries of C (its symbolic phase), so that the
//! second downloads each chunk straight into its place in C's host arrays
//! (no copy after the staging one).

use super::engine::GpuEngine;
use super::matrix::HostCsr;
use super::rows::{beside_b, matrix_bytes, row_bytes, rows_of, split_rows};
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::{Device, DeviceErrorKind};
use crate::error::{Error, Result};
use crate::reference::check_dimensions;
use crate::scalar::Scalar;
use crate::stats::product_stats;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Chunks in flight at once (two workers).
const IN_FLIGHT: usize = 2;
/// Times a chunked product that runs out of device memory is retried with
/// half the budget.
const OUT_OF_MEMORY_RETRIES: usize = 3;

/// How a host-to-host product ran on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// In one piece: A, B and C on the device at once.
    Whole,
    /// In `chunks` chunks of A's rows within `budget` bytes of device memory.
    Chunked {
        /// Chunks of rows.
        chunks: usize,
        /// The device-memory budget, bytes.
        budget: usize,
        /// Whether the whole product was tried first and ran out of memory.
        after_out_of_memory: bool,
    },
}

/// Wall-clock milliseconds of the steps of a host-to-host product: A and
/// B to the device, the product until its last kernel is done, and the
/// rest of C's download (most of which overlaps the kernels: C is
/// downloaded in chunks of rows while later chunks compute). A product
/// within a memory budget reports all of its time as `multiply_ms`
/// (`apart` false).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostTimes {
    /// Uploading the inputs.
    pub upload_ms: f64,
    /// The product on the device, until its last kernel is done.
    pub multiply_ms: f64,
    /// The part of C's download after the last kernel.
    pub download_ms: f64,
    /// Whether upload, product and download were timed apart (a whole
    /// product on one device). When not (a product in chunks, on several
    /// devices, or on the CPU), `multiply_ms` includes the transfers.
    pub apart: bool,
}

/// Runs `f` for chunks `0..n` on [`IN_FLIGHT`] workers, each taking the
/// next chunk when done with one (so one chunk's copies overlap another's
/// kernels); stops at the first failure and returns it.
fn in_flight<R: Send>(n: usize, f: impl Fn(usize) -> Result<R> + Sync) -> Result<Vec<R>> {
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<Option<R>>> = Mutex::new((0..n).map(|_| None).collect());
    let failure: Mutex<Option<Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..IN_FLIGHT.min(n) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::Relaxed);
                let stop = failure.lock().map_or(true, |f| f.is_some());
                if k >= n || stop {
                    return;
                }
                match f(k) {
                    Ok(r) => done.lock().expect("no worker panics holding the lock")[k] = Some(r),
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
    Ok(done
        .into_inner()
        .expect("workers finished")
        .into_iter()
        .map(|r| r.expect("every chunk ran"))
        .collect())
}

fn ms_since(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// Whether `e` is a device allocation failure.
pub(super) fn out_of_memory(e: &Error) -> bool {
    matches!(e, Error::Device(d) if d.kind == DeviceErrorKind::OutOfMemory)
}

/// Whether an upper bound of the device bytes of the whole product `A·B`
/// fits `budget`: a cheap bound from B's longest row first, the per-row
/// bound from products per row when that one does not fit.
fn fits_whole<T: Scalar>(a: CsrView<'_, T>, b: CsrView<'_, T>, budget: usize) -> Result<bool> {
    let vb = std::mem::size_of::<T>() as u128;
    let inputs = matrix_bytes(a) + matrix_bytes(b) + (a.nrows() as u128 + 1) * 8;
    let rough = a.nnz() as u128 * b.max_row_nnz().min(b.ncols()) as u128 * (4 + vb)
        + a.nrows() as u128 * 32;
    if inputs + rough <= budget as u128 {
        return Ok(true);
    }
    let stats = product_stats(a, b)?;
    let per_row: u128 = (0..a.nrows())
        .map(|i| row_bytes(0, stats.nprod[i], b.ncols(), vb as usize))
        .sum();
    Ok(inputs + per_row <= budget as u128)
}

impl<D: Device> GpuEngine<D> {
    /// `C = A·B` on the host: upload, multiply, download, within the
    /// engine's device-memory budget ([`GpuConfig::memory_budget`](super::GpuConfig::memory_budget)).
    /// See [`GpuEngine::multiply_host_placed`].
    ///
    /// # Errors
    /// As [`GpuEngine::multiply_host_placed`].
    pub fn multiply_host<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<CsrMatrix<T>> {
        Ok(self.multiply_host_placed(a, b)?.0)
    }

    /// `C = A·B` on the host, and how it ran. With an explicit budget the
    /// product runs whole when an upper bound of its device memory (A, B,
    /// `min(nprod, ncols)` entries of C per row, metadata) fits, and in
    /// chunks of rows ([`GpuEngine::multiply_chunked`]) otherwise. With the
    /// default budget (the device's free memory) it is always tried whole
    /// first, since C is often far smaller than the bound. Either way, a
    /// whole product that runs out of device memory is redone in chunks
    /// within three quarters of the memory then free, and chunks that run
    /// out are redone with half the budget (up to three times).
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`]; [`Error::TooLarge`] when B or one row
    /// does not fit the budget; device errors other than a recovered out
    /// of memory; host out of memory.
    pub fn multiply_host_placed<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<(CsrMatrix<T>, Placement)> {
        self.multiply_host_timed(a, b).map(|(c, p, _)| (c, p))
    }

    /// [`GpuEngine::multiply_host_placed`] with the wall-clock times of its
    /// steps. Uploads and downloads go through pinned staging buffers
    /// that the engine keeps for later products.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply_host_placed`].
    pub fn multiply_host_timed<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<(CsrMatrix<T>, Placement, HostTimes)> {
        let (a, b) = (a.into(), b.into());
        check_dimensions(a.shape(), b.shape())?;
        let mut times = HostTimes::default();
        let mut whole = || -> Result<CsrMatrix<T>> {
            let t = std::time::Instant::now();
            let (ga, gb) = if a.same_arrays(&b) {
                (self.upload_with(a, false)?, None)
            } else {
                let [ga, gb] = self.upload_all([a, b], false)?;
                (ga, Some(gb))
            };
            times.upload_ms = ms_since(t);
            let t = std::time::Instant::now();
            let streamed = self.multiply_streamed(&ga, gb.as_ref().unwrap_or(&ga), None);
            drop((ga, gb));
            let s = streamed?;
            times.multiply_ms = (s.kernels_done - t).as_secs_f64() * 1e3;
            times.download_ms = ms_since(s.kernels_done);
            times.apart = true;
            Ok(s.c.expect("C is the product's own without a place"))
        };
        // Free memory is not all allocatable (pool granularity,
        // fragmentation): chunks plan for a fraction of it.
        let free = || -> Result<usize> { Ok(self.device.memory_info()?.0 / 4 * 3) };
        let budget = match self.memory_budget() {
            Some(b) => b,
            None => free()?,
        };
        let mut after_out_of_memory = false;
        let mut budget_now = budget;
        if self.memory_budget().is_none() || fits_whole(a, b, budget)? {
            match whole() {
                Err(e) if out_of_memory(&e) => {
                    after_out_of_memory = true;
                    budget_now = budget.min(free()?);
                }
                r => return Ok((r?, Placement::Whole, times)),
            }
        }
        let mut retries = OUT_OF_MEMORY_RETRIES;
        loop {
            let t = std::time::Instant::now();
            match self.multiply_chunked(a, b, budget_now) {
                Err(e) if out_of_memory(&e) && retries > 0 => {
                    retries -= 1;
                    after_out_of_memory = true;
                    budget_now /= 2;
                }
                r => {
                    let (c, chunks) = r?;
                    let placement = Placement::Chunked {
                        chunks,
                        budget: budget_now,
                        after_out_of_memory,
                    };
                    let times = HostTimes {
                        multiply_ms: ms_since(t),
                        ..HostTimes::default()
                    };
                    return Ok((c, placement, times));
                }
            }
        }
    }

    /// `C = A·B` using at most about `budget` bytes of device memory: B
    /// stays on the device, A's rows go through in chunks sized by their
    /// products, C's host arrays are allocated from each chunk's count of
    /// entries (a first pass of symbolic phases) and each chunk of C is
    /// downloaded into its place. Returns C and the number of chunks. The result equals [`GpuEngine::multiply_host`]'s up to
    /// rounding (chunks may choose different thread groups).
    ///
    /// # Errors
    /// [`Error::TooLarge`] when B, or a single row of the product, does not
    /// fit the budget; the errors of [`GpuEngine::multiply`].
    pub fn multiply_chunked<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
        budget: usize,
    ) -> Result<(CsrMatrix<T>, usize)> {
        let (a, b) = (a.into(), b.into());
        check_dimensions(a.shape(), b.shape())?;
        let vb = std::mem::size_of::<T>();
        let beside = beside_b(b, budget)?;
        let stats = product_stats(a, b)?;
        let row_nnz: Vec<usize> = (0..a.nrows()).map(|i| a.row_nnz(i)).collect();
        let per_chunk = beside / IN_FLIGHT as u128;
        let chunks = split_rows(&row_nnz, &stats.nprod, b.ncols(), vb, per_chunk)?;
        let gb = self.upload_with(b, false)?;
        let upload = |k: usize| self.upload_with(rows_of(a, chunks[k].clone())?.view(), false);
        // Pass 1: each chunk's nnz(C), from its symbolic phase alone, so
        // that C's host arrays are allocated once and exactly and pass 2
        // downloads each chunk straight into its place. Appending chunks to
        // arrays that grow (realloc) was tried: glibc copied them, and a
        // 25-chunk product took 25 times as long (H100 host, FEM square).
        let nnz = in_flight(chunks.len(), |k| Ok(self.symbolic(&upload(k)?, &gb)?.nnz))?;
        let mut c = HostCsr::zeroed(a.nrows(), nnz.iter().sum())?;
        let blocks: Vec<(usize, usize)> = chunks
            .iter()
            .map(|r| r.len())
            .zip(nnz.iter().copied())
            .collect();
        let places = c.places(&blocks);
        // Pass 2: the chunks' products, each downloaded into its place.
        in_flight(chunks.len(), |k| {
            let part = self.multiply(&upload(k)?, &gb)?.0;
            if part.nnz != nnz[k] {
                return Err(Error::StructureMismatch(format!(
                    "chunk {k} of C has {} entries but its symbolic phase counted {}",
                    part.nnz, nnz[k]
                )));
            }
            let place = places[k].lock().ok().and_then(|mut p| p.take());
            self.download_into(&part, place.expect("each chunk is taken once"))
        })?;
        drop(places);
        let c = CsrMatrix::new(a.nrows(), b.ncols(), c.offsets, c.cols, c.vals)?;
        Ok((c, chunks.len()))
    }
}
