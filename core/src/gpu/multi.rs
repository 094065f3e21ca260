//! Several GPUs of one host on one product: the rows of A are split into
//! parts of about equal work (products per row), B is copied to every
//! device, each device computes its block of rows of C and downloads it
//! into its place in C on the host (row-wise distribution as in the hybrid
//! CPU-GPU pipelining of Wu 2015, §3.3, with devices in place of chunks).

use super::chunked::{out_of_memory, HostTimes};
use super::engine::GpuEngine;
use super::matrix::{GpuMatrix, HostCsr, PhaseTimes};
use super::rows::{rows_of, split_balanced, stack_rows};
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::reference::check_dimensions;
use crate::scalar::Scalar;
use crate::semiring::{Mask, Prune, Semiring};
use crate::stats::product_stats;
use std::ops::Range;

/// One engine per device, used together.
pub struct MultiGpu<D: Device> {
    engines: Vec<GpuEngine<D>>,
}

/// A product's operands spread over the devices of a [`MultiGpu`]: a block
/// of rows of A and a full copy of B on each.
pub struct MultiOperands<D: Device, T> {
    rows: Vec<Range<usize>>,
    a: Vec<GpuMatrix<D, T>>,
    b: Vec<GpuMatrix<D, T>>,
}

impl<D: Device, T> MultiOperands<D, T> {
    /// The rows of A (and C) each device holds, in device order.
    pub fn rows(&self) -> &[Range<usize>] {
        &self.rows
    }
}

/// Runs `f(i)` for every device index on its own thread; the results in
/// device order, or the first error.
fn on_each<R: Send>(n: usize, f: impl Fn(usize) -> Result<R> + Sync) -> Result<Vec<R>> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> = (0..n).map(|i| s.spawn(move || f(i))).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

impl<D: Device> MultiGpu<D> {
    /// Uses `engines` together, one per device.
    ///
    /// # Errors
    /// [`Error::NoDevices`] when `engines` is empty.
    pub fn new(engines: Vec<GpuEngine<D>>) -> Result<Self> {
        if engines.is_empty() {
            return Err(Error::NoDevices);
        }
        Ok(Self { engines })
    }

    /// The engines, in the order given.
    pub fn engines(&self) -> &[GpuEngine<D>] {
        &self.engines
    }

    /// Splits A's rows by products over the devices and copies each block,
    /// and all of B, to its device.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`]; host or device out of memory.
    pub fn upload<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<MultiOperands<D, T>> {
        let (a, b) = (a.into(), b.into());
        let stats = product_stats(a, b)?;
        let rows = split_balanced(&stats.nprod, self.engines.len());
        let both = on_each(self.engines.len(), |i| {
            let e = &self.engines[i];
            Ok((e.upload(&rows_of(a, rows[i].clone())?)?, e.upload(b)?))
        })?;
        let (a, b) = both.into_iter().unzip();
        Ok(MultiOperands { rows, a, b })
    }

    /// Every device computes its block of rows of C, all at once; the
    /// blocks stay on their devices, with each device's phase times.
    /// Returns when every device has finished.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply`], from the first device that fails.
    pub fn multiply<T: Scalar>(
        &self,
        ops: &MultiOperands<D, T>,
    ) -> Result<Vec<(GpuMatrix<D, T>, PhaseTimes)>> {
        on_each(self.engines.len(), |i| {
            self.engines[i].multiply(&ops.a[i], &ops.b[i])
        })
    }

    /// Stacks the blocks of rows of C from [`MultiGpu::multiply`] into one
    /// matrix on the host.
    ///
    /// # Errors
    /// Device errors; host out of memory.
    pub fn download<T: Scalar>(
        &self,
        blocks: &[(GpuMatrix<D, T>, PhaseTimes)],
    ) -> Result<CsrMatrix<T>> {
        let ncols = blocks.first().map_or(0, |(c, _)| c.ncols());
        let parts = on_each(blocks.len(), |i| self.engines[i].download(&blocks[i].0))?;
        stack_rows(parts, ncols)
    }

    /// `C = A·B` on the host over all devices: each device multiplies its
    /// block of rows with [`GpuEngine::multiply_host`] (so within its own
    /// memory budget). The structure of C equals a single device's; values
    /// agree up to rounding (shared-memory atomics make the order of
    /// summation vary from run to run on one device as well).
    ///
    /// # Errors
    /// As [`GpuEngine::multiply_host`], from the first device that fails.
    pub fn multiply_host<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<CsrMatrix<T>> {
        self.multiply_host_timed(a, b).map(|(c, _)| c)
    }

    /// [`MultiGpu::multiply_host`] with the wall-clock times of its steps
    /// (one device: [`GpuEngine::multiply_host_timed`]'s; several: the
    /// devices' products, copies included, as the product).
    ///
    /// With several devices, each first counts its block's entries of C
    /// (its symbolic phase alone); C's host arrays are allocated once and
    /// each device then multiplies its block and downloads it straight
    /// into its place, in chunks of rows while later chunks compute. When
    /// a device runs out of memory that way, or when the engines have an
    /// explicit memory budget, each device multiplies its block within its
    /// budget ([`GpuEngine::multiply_host`]) and the blocks are stacked on
    /// the host (one more copy of C).
    ///
    /// # Errors
    /// As [`MultiGpu::multiply_host`].
    pub fn multiply_host_timed<'a, 'b, T: Scalar>(
        &self,
        a: impl Into<CsrView<'a, T>>,
        b: impl Into<CsrView<'b, T>>,
    ) -> Result<(CsrMatrix<T>, HostTimes)> {
        let (a, b) = (a.into(), b.into());
        check_dimensions(a.shape(), b.shape())?;
        if let [one] = self.engines.as_slice() {
            return one.multiply_host_timed(a, b).map(|(c, _, t)| (c, t));
        }
        let t = std::time::Instant::now();
        let stats = product_stats(a, b)?;
        let rows = split_balanced(&stats.nprod, self.engines.len());
        // An explicit budget is kept by each device's own host product.
        let budgeted = self.engines.iter().any(|e| e.memory_budget().is_some());
        let in_place = (!budgeted).then(|| self.multiply_in_place(a, b, &rows));
        let c = match in_place {
            Some(Ok(c)) => c,
            Some(Err(e)) if !out_of_memory(&e) => return Err(e),
            _ => {
                let parts = on_each(self.engines.len(), |i| {
                    self.engines[i].multiply_host(&rows_of(a, rows[i].clone())?, b)
                })?;
                stack_rows(parts, b.ncols())?
            }
        };
        let times = HostTimes {
            multiply_ms: t.elapsed().as_secs_f64() * 1e3,
            ..HostTimes::default()
        };
        Ok((c, times))
    }

    /// `C⟨M⟩ = A ⊕.⊗ Bᵀ` with B given as its transpose `bt` (`N×K`), as
    /// [`MultiGpu::multiply_semiring_host`] computes `A ⊕.⊗ B`: one device
    /// reads `bt` where it lies ([`GpuEngine::masked_dot_transposed_b`]);
    /// several form B on the host first and split A's rows.
    ///
    /// # Errors
    /// As [`MultiGpu::multiply_semiring_host`].
    pub fn masked_dot_transposed_b_host<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        bt: CsrView<'_, T>,
        mask: Mask<'_>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<CsrMatrix<T>> {
        if let [e] = self.engines.as_slice() {
            return e.masked_dot_transposed_b(mask, a, bt, semiring, prune);
        }
        let b = bt.transpose()?;
        self.multiply_semiring_host(a, b.view(), Some(mask), semiring, prune)
    }

    /// `C = A·B` with device `i` computing rows `rows[i]`: each device's
    /// count of entries first, then each block downloaded into its place
    /// in C (see [`MultiGpu::multiply_host_timed`]).
    fn multiply_in_place<T: Scalar>(
        &self,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        rows: &[Range<usize>],
    ) -> Result<CsrMatrix<T>> {
        let n = self.engines.len();
        let operands = on_each(n, |i| {
            let e = &self.engines[i];
            let block = rows_of(a, rows[i].clone())?;
            let [ga, gb] = e.upload_all([block.view(), b], false)?;
            let nnz = e.symbolic(&ga, &gb)?.nnz;
            Ok((ga, gb, nnz))
        })?;
        let blocks: Vec<(usize, usize)> = rows
            .iter()
            .zip(&operands)
            .map(|(r, o)| (r.len(), o.2))
            .collect();
        let mut c = HostCsr::zeroed(a.nrows(), blocks.iter().map(|x| x.1).sum())?;
        let places = c.places(&blocks);
        on_each(n, |i| {
            let (ga, gb, _) = &operands[i];
            let place = places[i].lock().ok().and_then(|mut p| p.take());
            let place = place.expect("each block is taken once");
            self.engines[i].multiply_streamed(ga, gb, Some(place))?;
            Ok(())
        })?;
        drop(places);
        CsrMatrix::new(a.nrows(), b.ncols(), c.offsets, c.cols, c.vals)
    }
}
