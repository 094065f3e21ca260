//! One product in flight: its streams, kernels and memory accounting, the
//! metadata allocation, launches, the scan, and the sequence of phases.

use super::constants::HIST_BUCKETS;
use super::engine::{
    blocks_for, too_large, GpuEngine, GpuMatrix, GpuPlan, KernelSet, PhaseTimes, Structure, BLOCK,
    SCAN_BLOCK, SCAN_TILE, STREAMS,
};
use super::memory::{DeviceArray, Usage};
use super::program::k;
use super::symbolic::Offsets;
use crate::device::{Device, KernelArg, LaunchShape};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::table::group_size;
use std::sync::Arc;

pub(super) use KernelArg::{Ptr, U32, U64};

/// Least work (products or entries of C) a block of the dense global paths
/// gets when a long row is split between blocks.
pub(super) const DENSE_SLICE_WORK: u64 = 16_384;

/// `arg` (a device address) advanced by `bytes`.
pub(super) fn offset(arg: KernelArg, bytes: u64) -> KernelArg {
    match arg {
        Ptr(p) => Ptr(p + bytes),
        other => other,
    }
}

/// One product in flight.
pub(super) struct Run<'a, D: Device, T: Scalar> {
    pub(super) e: &'a GpuEngine<D>,
    pub(super) ks: &'a KernelSet<D>,
    pub(super) s: &'a [D::Stream],
    pub(super) usage: &'a Usage,
    pub(super) a: &'a GpuMatrix<D, T>,
    pub(super) b: &'a GpuMatrix<D, T>,
}

/// Counters and scratch of one phase, in one allocation (OpSparse §5.3):
/// words 0..8 hold the stats (2 u64), the maximum, the overflow count and
/// (numeric phase) a copy of nnz(C);
/// then per-bin sizes and cursors (u32); words 64..128 the histogram of
/// products by log2 of their row of B; then the bins array and the overflow
/// list (M u32 each).
pub(super) struct Meta<D: Device> {
    words: DeviceArray<D, u64>,
    m: usize,
    nbins: usize,
}

/// What the host reads back from [`Meta`].
pub(super) struct Counts {
    /// Total products, largest products of a row.
    pub(super) stats: [u64; 2],
    /// Largest value binned (nprod or nnz).
    pub(super) max: u64,
    /// Rows the last symbolic bin gave up on.
    pub(super) overflow: u32,
    /// Rows per bin, the direct bin last.
    pub(super) sizes: Vec<u32>,
    /// Length of the rows of B the median product comes from (from setup's
    /// histogram, the middle of its power-of-two bucket).
    pub(super) typical: usize,
    /// C's last row offset, nnz(C), where [`Meta::copy_nnz`] put it.
    pub(super) nnz: u64,
}

impl Counts {
    /// Where each bin's rows start in the bins array.
    pub(super) fn offsets(&self) -> Vec<u64> {
        let mut at = 0u64;
        self.sizes
            .iter()
            .map(|&s| {
                let start = at;
                at += s as u64;
                start
            })
            .collect()
    }
}

impl<D: Device> Meta<D> {
    /// Where the setup kernel's histogram starts in the header.
    const HIST: usize = 64;
    const HEADER: usize = Self::HIST + HIST_BUCKETS;

    pub(super) fn new(r: &Run<'_, D, impl Scalar>, nbins: usize) -> Result<Self> {
        assert!(
            8 + nbins < Self::HIST,
            "too many bins for the metadata header"
        );
        let m = r.a.nrows;
        let words = DeviceArray::alloc(
            r.dev(),
            &r.s[0],
            Self::HEADER + m,
            "bins and counters",
            r.usage,
        )?;
        words.zero(r.dev(), &r.s[0], 0, Self::HEADER)?;
        Ok(Self { words, m, nbins })
    }
    pub(super) fn stats(&self) -> KernelArg {
        Ptr(self.words.ptr_at(0))
    }
    pub(super) fn max_value(&self) -> KernelArg {
        Ptr(self.words.ptr_at(3))
    }
    pub(super) fn noverflow(&self) -> KernelArg {
        Ptr(self.words.ptr_at(4))
    }
    pub(super) fn hist(&self) -> KernelArg {
        Ptr(self.words.ptr_at(Self::HIST))
    }
    pub(super) fn sizes(&self) -> KernelArg {
        Ptr(self.words.ptr_at(8))
    }
    pub(super) fn cursors(&self) -> KernelArg {
        Ptr(self.words.ptr_at(8) + 4 * (self.nbins as u64 + 1))
    }
    /// The rows of the bin starting at `offset` in the bins array.
    pub(super) fn bins(&self, offset: u64) -> KernelArg {
        Ptr(self.words.ptr_at(Self::HEADER) + 4 * offset)
    }
    pub(super) fn overflow(&self) -> KernelArg {
        Ptr(self.words.ptr_at(Self::HEADER) + 4 * self.m as u64)
    }
    /// Copies C's last row offset (nnz(C), after the scan) into the header,
    /// so that one read brings it with the numeric bins' counters.
    pub(super) fn copy_nnz(
        &self,
        r: &Run<'_, D, impl Scalar>,
        crpt: &DeviceArray<D, u64>,
    ) -> Result<()> {
        if let (Some(src), Some(dst)) = (&crpt.buf, &self.words.buf) {
            r.dev()
                .copy_device(&r.s[0], src, 8 * r.a.nrows, dst, 8 * 5, 8)?;
        }
        Ok(())
    }
    /// Reads the counters (waits for stream 0).
    pub(super) fn read(&self, r: &Run<'_, D, impl Scalar>) -> Result<Counts> {
        let mut h = vec![0u64; Self::HEADER];
        self.words.read(r.dev(), &r.s[0], 0, &mut h)?;
        let sizes: &[u32] = bytemuck::cast_slice(&h[8..Self::HIST]);
        let hist = &h[Self::HIST..Self::HEADER];
        let total: u128 = hist.iter().map(|&x| x as u128).sum();
        let mut acc = 0u128;
        let median = hist.iter().position(|&x| {
            acc += x as u128;
            2 * acc >= total && total > 0
        });
        let typical = median.map_or(0, |b| 3usize << b >> 1);
        Ok(Counts {
            stats: [h[0], h[1]],
            max: h[3],
            overflow: h[4] as u32,
            sizes: sizes[..=self.nbins].to_vec(),
            typical,
            nnz: h[5],
        })
    }
}

impl<D: Device, T: Scalar> Run<'_, D, T> {
    pub(super) fn dev(&self) -> &D {
        &self.e.device
    }

    pub(super) fn check(&self) -> Result<()> {
        if self.a.ncols != self.b.nrows {
            return Err(Error::DimensionMismatch {
                a_rows: self.a.nrows,
                a_cols: self.a.ncols,
                b_rows: self.b.nrows,
                b_cols: self.b.ncols,
            });
        }
        for (what, n) in [
            ("rows of A", self.a.nrows),
            ("rows of B", self.b.nrows),
            ("columns of B", self.b.ncols),
        ] {
            if n >= u32::MAX as usize {
                return Err(too_large(what, n));
            }
        }
        Ok(())
    }

    /// Launches kernel number `kernel` of the loaded set on stream `stream`.
    pub(super) fn launch(
        &self,
        stream: usize,
        kernel: usize,
        blocks: u32,
        threads: u32,
        shared: usize,
        args: &[KernelArg],
    ) -> Result<()> {
        let shape = LaunchShape {
            blocks,
            threads,
            shared_bytes: shared as u32,
        };
        // SAFETY: every launch of this module passes the parameter list of
        // the kernel it names in `spgemm.cuh` (or its generated wrapper),
        // with pointers into live arrays sized for the rows and bins passed;
        // the arrays outlive the launch (they are dropped after a join or a
        // synchronising read on stream 0, and freed in stream order).
        unsafe {
            self.dev()
                .launch(&self.s[stream], &self.ks.kernels[kernel], shape, args)?
        };
        Ok(())
    }

    pub(super) fn sms(&self) -> usize {
        self.dev().properties().multiprocessor_count as usize
    }

    /// Grid of a grid-stride kernel over `n` items, `per_block` a block.
    pub(super) fn grid(&self, n: usize, per_block: usize) -> u32 {
        blocks_for(n, per_block, self.sms() * 8)
    }

    /// Makes stream 0 wait for the others.
    pub(super) fn join(&self) -> Result<()> {
        for s in &self.s[1..] {
            let ev = self.dev().record(s)?;
            self.dev().wait(&self.s[0], &ev)?;
        }
        Ok(())
    }

    /// Makes the other streams wait for stream 0.
    pub(super) fn fork(&self) -> Result<()> {
        let ev = self.dev().record(&self.s[0])?;
        for s in &self.s[1..] {
            self.dev().wait(s, &ev)?;
        }
        Ok(())
    }

    /// Stream of the bin launched `order`-th (largest bins first, DCU §5.4).
    pub(super) fn stream_of(order: usize) -> usize {
        order % STREAMS
    }

    /// Thread-group size G for rows of B: DCU §5.1's rule (about 8 entries
    /// of B per thread) applied to the rows of B the median product comes
    /// from (`typical`, from setup) rather than to B's longest row; the
    /// kernels hand rows of B far longer than that to whole warps.
    pub(super) fn g(&self, typical: usize, row_threads: u32) -> KernelArg {
        U32(group_size(
            typical,
            self.dev().properties().warp_width,
            row_threads,
        ))
    }

    /// Whether single-entry rows of A may be copied directly: B's rows are
    /// sorted without duplicates.
    pub(super) fn direct_ok(&self) -> u32 {
        self.b.sorted as u32
    }

    /// Bytes a global-memory path may take: a quarter of free device memory.
    pub(super) fn global_budget(&self) -> Result<usize> {
        Ok(self.dev().memory_info()?.0 / 4)
    }

    /// How the dense global paths split `n` long rows: rows at once (at
    /// most two per multiprocessor, each with `row_bytes` of scratch, within
    /// [`Run::global_budget`]; 0 when not even one fits) and slices per row,
    /// so that a batch fills the device with blocks of at least
    /// [`DENSE_SLICE_WORK`] products or entries (`max_work`, the largest
    /// row's).
    pub(super) fn dense_batches(
        &self,
        n: usize,
        max_work: u64,
        row_bytes: usize,
    ) -> Result<(usize, u32)> {
        // At most two rows per multiprocessor at once: enough blocks with
        // the slices, and scratch far below the budget for products with
        // many long rows (measured on R-MAT 18: 15 GB peak instead of 46 GB,
        // 358 ms instead of 275 ms).
        let rows = n
            .min(2 * self.sms())
            .min(self.global_budget()? / row_bytes.max(1));
        let fill = (4 * self.sms()).div_ceil(rows.max(1)) as u64;
        let slices = fill
            .min(max_work.div_ceil(DENSE_SLICE_WORK))
            .clamp(1, 1 << 16);
        Ok((rows, slices as u32))
    }

    /// Binning, pass 1 (OpSparse Alg. 1, DCU Alg. 2): counts rows per bin of
    /// `crpt`'s values with kernel `count` and reads the counters back.
    pub(super) fn count_bins(
        &self,
        meta: &Meta<D>,
        crpt: &DeviceArray<D, u64>,
        count: usize,
    ) -> Result<Counts> {
        self.launch_count_bins(meta, crpt, count)?;
        meta.read(self)
    }

    /// Launches binning pass 1 without reading the counters back.
    pub(super) fn launch_count_bins(
        &self,
        meta: &Meta<D>,
        crpt: &DeviceArray<D, u64>,
        count: usize,
    ) -> Result<()> {
        let m = self.a.nrows;
        let args = [
            crpt.arg(),
            self.a.structure.rpt.arg(),
            U32(m as u32),
            U32(self.direct_ok()),
            meta.sizes(),
            meta.max_value(),
        ];
        self.launch(0, count, self.grid(m, BLOCK as usize), BLOCK, 0, &args)
    }

    /// Binning, pass 2 (OpSparse Alg. 2, DCU Alg. 3): writes row ids at
    /// per-bin offsets with kernel `fill`.
    pub(super) fn fill_bins(
        &self,
        meta: &Meta<D>,
        crpt: &DeviceArray<D, u64>,
        fill: usize,
    ) -> Result<()> {
        let m = self.a.nrows;
        let args = [
            crpt.arg(),
            self.a.structure.rpt.arg(),
            U32(m as u32),
            U32(self.direct_ok()),
            meta.sizes(),
            meta.cursors(),
            meta.bins(0),
        ];
        self.launch(0, fill, self.grid(m, BLOCK as usize), BLOCK, 0, &args)
    }

    /// Exclusive scan of `n` u64 values at `ptr` in place (recursive over tile sums).
    pub(super) fn scan(&self, ptr: u64, n: usize) -> Result<()> {
        let tiles = n.div_ceil(SCAN_TILE).max(1);
        let sums = DeviceArray::<D, u64>::alloc(
            self.dev(),
            &self.s[0],
            tiles,
            "scan tile sums",
            self.usage,
        )?;
        self.launch(
            0,
            k::SCAN_TILES,
            tiles as u32,
            SCAN_BLOCK,
            8 * SCAN_BLOCK as usize,
            &[Ptr(ptr), U64(n as u64), sums.arg()],
        )?;
        if tiles > 1 {
            self.scan(sums.ptr_at(0), tiles)?;
            self.launch(
                0,
                k::SCAN_ADD,
                tiles as u32,
                SCAN_BLOCK,
                0,
                &[Ptr(ptr), U64(n as u64), sums.arg()],
            )?;
        }
        self.usage.sub(8 * tiles);
        Ok(())
    }

    /// Both phases (or only the numeric one, from a plan), with times.
    /// The whole product (from `plan`'s symbolic result when given);
    /// `while_numeric(nnz(C))` runs on the host while the numeric kernels
    /// run on the device.
    pub(super) fn all(
        &self,
        plan: Option<&GpuPlan<D, T>>,
        while_numeric: &mut dyn FnMut(usize),
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        let dev = self.dev();
        let t0 = dev.record(&self.s[0])?;
        let nbins = self.ks.table.numeric.len();
        let (crpt, t1, t2, typical, meta, counts) = match plan {
            Some(p) => {
                let t2 = dev.record(&self.s[0])?;
                let meta = Meta::new(self, nbins)?;
                let mut counts = self.count_bins(&meta, &p.crpt, k::BIN_COUNT_NUMERIC)?;
                counts.nnz = p.nnz as u64;
                (p.crpt.clone(), None, t2, p.typical, meta, counts)
            }
            None => {
                let Offsets {
                    crpt,
                    after_setup,
                    typical,
                } = self.symbolic_offsets(true)?;
                let t2 = dev.record(&self.s[0])?;
                // Numeric binning counts and nnz(C) come back in one read.
                let meta = Meta::new(self, nbins)?;
                self.launch_count_bins(&meta, &crpt, k::BIN_COUNT_NUMERIC)?;
                meta.copy_nnz(self, &crpt)?;
                let counts = meta.read(self)?;
                (Arc::new(crpt), after_setup, t2, typical, meta, counts)
            }
        };
        let nnz = counts.nnz as usize;
        let (ccol, cval) = self.numeric(&crpt, nnz, typical, meta, counts)?;
        let t3 = dev.record(&self.s[0])?;
        while_numeric(nnz);
        dev.synchronize(&self.s[0])?;
        let ms = |a: &D::Event, b: &D::Event| dev.elapsed_ms(a, b).map(f64::from);
        let times = PhaseTimes {
            setup_ms: t1.as_ref().map_or(Ok(0.0), |t1| ms(&t0, t1))?,
            symbolic_ms: t1.as_ref().map_or(Ok(0.0), |t1| ms(t1, &t2))?,
            numeric_ms: ms(&t2, &t3)?,
            total_ms: ms(&t0, &t3)?,
            peak_bytes: 0,
        };
        let crpt = Arc::try_unwrap(crpt).or_else(|shared| self.copy_offsets(&shared))?;
        let structure = Arc::new(Structure {
            rpt: crpt,
            col: ccol,
            host: None,
        });
        let c = GpuMatrix {
            nrows: self.a.nrows,
            ncols: self.b.ncols,
            nnz,
            structure,
            val: cval,
            sorted: true,
        };
        Ok((c, times))
    }

    /// C's row offsets for a product run from a plan (the plan keeps its own).
    fn copy_offsets(&self, src: &DeviceArray<D, u64>) -> Result<DeviceArray<D, u64>> {
        let dst = DeviceArray::<D, u64>::alloc(
            self.dev(),
            &self.s[0],
            src.len(),
            "C row offsets",
            self.usage,
        )?;
        if let (Some(from), Some(to)) = (&src.buf, &dst.buf) {
            self.dev()
                .copy_device(&self.s[0], from, 0, to, 0, 8 * src.len())?;
        }
        Ok(dst)
    }
}
