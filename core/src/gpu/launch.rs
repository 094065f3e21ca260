//! The launch context of one product: the device, the compiled kernels,
//! the streams the product spreads its bins over and the accounting of the
//! device memory it allocates (its workspace); kernel launches, stream
//! fork and join, and the device-wide scan every phase uses.

use super::config::SortVariant;
use super::kernels::{launch_args, DevicePtr, Kernel, KernelArgs, ScanAddArgs, ScanTilesArgs};
use super::memory::{DeviceArray, Usage};
use crate::device::{Device, LaunchShape, PinnedBuffer};
use crate::error::{Error, Result};
use crate::table::KernelTable;
use std::collections::HashMap;
use std::sync::Mutex;

/// Streams one product spreads its bins over.
pub(super) const STREAMS: usize = 4;
/// Threads per block of the setup, binning and scan kernels.
pub(super) const BLOCK: u32 = 256;
/// Threads per block of the scan kernels.
const SCAN_BLOCK: u32 = 1024;
/// Values scanned per block (four per thread).
const SCAN_TILE: usize = SCAN_BLOCK as usize * 4;

/// Blocks for `n` items, `per_block` a block, between 1 and `cap`.
pub(super) fn blocks_for(n: usize, per_block: usize, cap: usize) -> u32 {
    n.div_ceil(per_block.max(1)).clamp(1, cap) as u32
}

/// The kernels compiled for one value type and semiring: the table, sort
/// and semiring they were built with, and each kernel of the catalogue
/// that the program holds.
pub(super) struct KernelSet<D: Device> {
    pub(super) table: KernelTable,
    pub(super) sort: SortVariant,
    /// The semiring whose operators the kernels were compiled with.
    pub(super) semiring: crate::semiring::Semiring,
    pub(super) kernels: HashMap<Kernel, D::Kernel>,
}

/// Where one product launches: device, kernels, streams, workspace.
pub(super) struct Launcher<'a, D: Device> {
    pub(super) device: &'a D,
    pub(super) kernels: &'a KernelSet<D>,
    pub(super) streams: &'a [D::Stream],
    /// Device bytes the product has allocated (current and peak).
    pub(super) usage: &'a Usage,
    /// The engine's page-locked buffer for small reads (allocated at the
    /// first), see [`Launcher::read`].
    pub(super) reads: &'a Mutex<Option<D::Pinned>>,
}

/// Bytes up to which [`Launcher::read`] goes through the page-locked
/// buffer (the binning counters are 1 KiB).
const SMALL_READ: usize = 4096;

impl<D: Device> Clone for Launcher<'_, D> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<D: Device> Copy for Launcher<'_, D> {}

impl<D: Device> Launcher<'_, D> {
    /// The kernel table of the compiled kernels.
    pub(super) fn table(&self) -> &KernelTable {
        &self.kernels.table
    }

    /// Launches `kernel` with `args` on stream number `stream`.
    ///
    /// # Errors
    /// [`Error::KernelArguments`] before the launch when `args` is not
    /// `kernel`'s argument struct or the program lacks `kernel`; a refused
    /// launch.
    pub(super) fn launch<A: KernelArgs>(
        &self,
        stream: usize,
        kernel: Kernel,
        shape: LaunchShape,
        args: &A,
    ) -> Result<()> {
        let refused = |message: String| Error::KernelArguments {
            kernel: kernel.name(),
            message,
        };
        let args = launch_args(kernel, args).map_err(refused)?;
        let compiled = self
            .kernels
            .kernels
            .get(&kernel)
            .ok_or_else(|| refused("not in the compiled program".into()))?;
        // SAFETY: `args` is the argument struct of `kernel` (checked
        // above), whose parameter list the catalogue's test compares with
        // the kernel source; its pointers address live arrays sized for
        // the rows and bins passed, which outlive the launch (they are
        // dropped after a join or a synchronising read on stream 0, and
        // freed in stream order).
        unsafe {
            self.device
                .launch(&self.streams[stream], compiled, shape, &args)?
        };
        Ok(())
    }

    /// Reads `out.len()` elements of `arr` from element `start` to the
    /// host, waiting for stream 0. Small reads (the binning counters, the
    /// checks' faults, nnz(C)) go through the engine's page-locked buffer,
    /// which the driver copies into without staging: on an H100 a 1 KB
    /// read after a kernel took 27 µs into pinned memory and 31 µs into
    /// pageable memory (`docs/benchmarks/python-h100-2026-11-24.md`), and a product
    /// waits on two or three of them.
    ///
    /// # Errors
    /// Device errors (faults of earlier kernels among them); allocating
    /// the page-locked buffer.
    pub(super) fn read<T: bytemuck::Pod>(
        &self,
        arr: &DeviceArray<D, T>,
        start: usize,
        out: &mut [T],
    ) -> Result<()> {
        let bytes = std::mem::size_of_val(out);
        let s = &self.streams[0];
        let buf = match &arr.buf {
            Some(b) if bytes > 0 && bytes <= SMALL_READ => b,
            _ => return arr.read(self.device, s, start, out),
        };
        let mut pinned = self.reads.lock().unwrap_or_else(|e| e.into_inner());
        if pinned.is_none() {
            *pinned = Some(self.device.alloc_pinned(SMALL_READ)?);
        }
        let p = pinned.as_mut().expect("allocated above");
        let offset = start * std::mem::size_of::<T>();
        // SAFETY: the buffer is held under the lock and read only after
        // the stream is synchronised below.
        unsafe {
            self.device
                .copy_to_host_async(s, buf, offset, p, 0, bytes)?
        };
        self.device.synchronize(s)?;
        bytemuck::cast_slice_mut(out).copy_from_slice(&p.as_slice()[..bytes]);
        Ok(())
    }

    /// Multiprocessors of the device.
    pub(super) fn sms(&self) -> usize {
        self.device.properties().multiprocessor_count as usize
    }

    /// Grid of a grid-stride kernel over `n` items, `per_block` a block.
    pub(super) fn grid(&self, n: usize, per_block: usize) -> u32 {
        blocks_for(n, per_block, self.sms() * 8)
    }

    /// Makes stream 0 wait for the others.
    pub(super) fn join(&self) -> Result<()> {
        for s in &self.streams[1..] {
            let ev = self.device.record(s)?;
            self.device.wait(&self.streams[0], &ev)?;
        }
        Ok(())
    }

    /// Makes the other streams wait for stream 0.
    pub(super) fn fork(&self) -> Result<()> {
        let ev = self.device.record(&self.streams[0])?;
        for s in &self.streams[1..] {
            self.device.wait(s, &ev)?;
        }
        Ok(())
    }

    /// Stream of the bin launched `order`-th (largest bins first, DCU §5.4).
    pub(super) fn stream_of(order: usize) -> usize {
        order % STREAMS
    }

    /// An uninitialised workspace array of `len` elements on stream
    /// `stream`, counted in the product's memory, named by `what` in
    /// errors.
    pub(super) fn alloc<T: bytemuck::Pod>(
        &self,
        stream: usize,
        len: usize,
        what: &str,
    ) -> Result<DeviceArray<D, T>> {
        DeviceArray::alloc(self.device, &self.streams[stream], len, what, self.usage)
    }

    /// Hands `array`'s bytes back to the product's memory accounting (the
    /// array itself is freed in stream order when dropped).
    pub(super) fn release<T>(&self, array: DeviceArray<D, T>) {
        self.usage.sub(array.len * std::mem::size_of::<T>());
    }

    /// Bytes a global-memory path may take: a quarter of free device memory.
    pub(super) fn global_budget(&self) -> Result<usize> {
        Ok(self.device.memory_info()?.0 / 4)
    }

    /// Exclusive scan of `n` u64 values at `data` in place on stream 0
    /// (recursive over tile sums).
    pub(super) fn scan(&self, data: DevicePtr, n: usize) -> Result<()> {
        let tiles = n.div_ceil(SCAN_TILE).max(1);
        let sums = self.alloc::<u64>(0, tiles, "scan tile sums")?;
        let n64 = n as u64;
        let tile_args = ScanTilesArgs {
            data,
            n: n64,
            sums: sums.ptr(),
        };
        self.launch(
            0,
            Kernel::ScanTiles,
            shape(tiles as u32, SCAN_BLOCK, 8 * SCAN_BLOCK as usize),
            &tile_args,
        )?;
        if tiles > 1 {
            self.scan(sums.ptr(), tiles)?;
            let add = ScanAddArgs {
                data,
                n: n64,
                sums: sums.ptr(),
            };
            self.launch(0, Kernel::ScanAdd, shape(tiles as u32, SCAN_BLOCK, 0), &add)?;
        }
        self.release(sums);
        Ok(())
    }
}

/// A launch shape: `blocks` of `threads`, `shared` bytes of dynamic shared
/// memory.
pub(super) fn shape(blocks: u32, threads: u32, shared: usize) -> LaunchShape {
    LaunchShape {
        blocks,
        threads,
        shared_bytes: shared as u32,
    }
}
