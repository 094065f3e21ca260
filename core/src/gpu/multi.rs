//! Several GPUs of one host on one product: the rows of A are split into
//! parts of about equal work (products per row), B is copied to every
//! device, each device computes its block of rows of C, and the blocks are
//! stacked on the host (row-wise distribution as in the hybrid CPU-GPU
//! pipelining of Wu 2015, §3.3, with devices in place of chunks).

use super::chunked::HostTimes;
use super::engine::GpuEngine;
use super::matrix::{GpuMatrix, PhaseTimes};
use super::rows::{rows_of, split_balanced, stack_rows};
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::reference::check_dimensions;
use crate::scalar::Scalar;
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
    /// devices' products, copies included, as the product, and stacking
    /// C's rows as the download).
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
        let parts = on_each(self.engines.len(), |i| {
            self.engines[i].multiply_host(&rows_of(a, rows[i].clone())?, b)
        })?;
        let multiply_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = std::time::Instant::now();
        let c = stack_rows(parts, b.ncols())?;
        let times = HostTimes {
            upload_ms: 0.0,
            multiply_ms,
            download_ms: t.elapsed().as_secs_f64() * 1e3,
            apart: false,
        };
        Ok((c, times))
    }
}
