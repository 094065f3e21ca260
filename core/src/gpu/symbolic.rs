//! Setup, symbolic binning, symbolic kernels and the scan into C's row
//! offsets (OpSparse §5, steps 1–4; §5.1, §5.6.1).

use super::constants::SETUP_LANES;
use super::dense::bitmap_words;
use super::engine::{blocks_for, LongRows, BLOCK};
use super::memory::DeviceArray;
use super::program::{self, k};
use super::run::{offset, Meta, Run, U32};
use crate::device::{Device, KernelArg};
use crate::error::Result;
use crate::scalar::Scalar;

/// What the symbolic phase produces.
pub(super) struct Symbolic<D: Device> {
    /// C's row offsets, then the distinct-row bits (see [`distinct_rows`]).
    pub(super) crpt: DeviceArray<D, u64>,
    /// nnz(C).
    pub(super) nnz: usize,
    /// The typical row of B for G (see `Counts::typical`).
    pub(super) typical: usize,
}

/// The symbolic phase up to the scan: C's row offsets on the device.
pub(super) struct Offsets<D: Device> {
    /// C's row offsets, then the distinct-row bits (see [`distinct_rows`]).
    pub(super) crpt: DeviceArray<D, u64>,
    /// An event after setup, when timing.
    pub(super) after_setup: Option<D::Event>,
    /// The typical row of B for G (see `Counts::typical`).
    pub(super) typical: usize,
}

/// The bits after C's `m + 1` row offsets in `crpt`, one per row: set by
/// the shared symbolic kernels when nnz(i) = nprod(i) (every product of the
/// row has its own column), so the numeric kernels store each product's
/// value instead of adding it. Zero until then.
pub(super) fn distinct_rows<D: Device>(crpt: &DeviceArray<D, u64>, m: usize) -> KernelArg {
    KernelArg::Ptr(crpt.ptr_at(m + 1))
}

impl<D: Device, T: Scalar> Run<'_, D, T> {
    /// Setup, symbolic binning and kernels, scan, and nnz(C) read back (for
    /// plans).
    pub(super) fn symbolic(&self) -> Result<Symbolic<D>> {
        let Offsets { crpt, typical, .. } = self.symbolic_offsets(false)?;
        let mut nnz = [0u64];
        crpt.read(self.dev(), &self.s[0], self.a.nrows, &mut nnz)?;
        Ok(Symbolic {
            crpt,
            nnz: nnz[0] as usize,
            typical,
        })
    }

    /// Setup, symbolic binning and kernels, scan: C's row offsets (on the
    /// device, not read back), the event after setup when timing, and the
    /// typical row of B.
    pub(super) fn symbolic_offsets(&self, timed: bool) -> Result<Offsets<D>> {
        let (dev, m) = (self.dev(), self.a.nrows);
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        // Row offsets and the distinct-row bits in one allocation, the last
        // offset and the bits zeroed at once.
        let words = m.div_ceil(64);
        let crpt = DeviceArray::<D, u64>::alloc(
            dev,
            &self.s[0],
            m + 1 + words,
            "C row offsets",
            self.usage,
        )?;
        crpt.zero(dev, &self.s[0], m, 1 + words)?;
        let distinct = distinct_rows(&crpt, m);
        let table = &self.ks.table;
        let nbins = table.symbolic.len();
        let meta = Meta::new(self, nbins)?;
        // Setup: SETUP_LANES lanes per row of A (a warp for long rows).
        let setup_grid = self.grid(m * SETUP_LANES, BLOCK as usize);
        let setup = [
            a.rpt.arg(),
            a.col.arg(),
            b.rpt.arg(),
            U32(m as u32),
            crpt.arg(),
            meta.stats(),
            meta.hist(),
        ];
        self.launch(0, k::SETUP, setup_grid, BLOCK, 0, &setup)?;
        let after_setup = if timed {
            Some(dev.record(&self.s[0])?)
        } else {
            None
        };
        let counts = self.count_bins(&meta, &crpt, k::BIN_COUNT_SYMBOLIC)?;
        if counts.stats[0] > 0 {
            self.fill_bins(&meta, &crpt, k::BIN_FILL_SYMBOLIC)?;
            self.fork()?;
            let offsets = counts.offsets();
            for (order, (i, bin)) in table.symbolic.iter().enumerate().rev().enumerate() {
                let n = counts.sizes[i] as usize;
                if n == 0 {
                    continue;
                }
                if self.symbolic_dense(i) {
                    let rows = meta.bins(offsets[i]);
                    let stream = Self::stream_of(order);
                    self.symbolic_dense_shared(stream, rows, n, &crpt, counts.typical, distinct)?;
                    continue;
                }
                if bin.global() {
                    // The DCU table's global bin (DCU §5.4, kernel 8): on
                    // stream 0 (the largest bin comes first), where its
                    // scratch is allocated and freed.
                    debug_assert_eq!(Self::stream_of(order), 0);
                    let rows = meta.bins(offsets[i]);
                    self.symbolic_global(&crpt, rows, n, counts.stats[1], counts.typical)?;
                    continue;
                }
                let g = self.g(counts.typical, bin.row_threads);
                let mut args = self.symbolic_args(meta.bins(offsets[i]), n, &crpt, g);
                args.extend([
                    U32(table.overflow_threshold()),
                    meta.overflow(),
                    meta.noverflow(),
                    distinct,
                ]);
                let blocks = blocks_for(n, bin.rows_per_block() as usize, usize::MAX);
                self.launch(
                    Self::stream_of(order),
                    k::FIRST_BIN + i,
                    blocks,
                    bin.block_threads,
                    program::symbolic_shared_bytes(table, i),
                    &args,
                )?;
            }
            self.join()?;
            if table.symbolic_overflows() && counts.sizes[nbins - 1] > 0 {
                let overflow = meta.read(self)?.overflow as usize;
                if overflow > 0 {
                    let rows = meta.overflow();
                    self.symbolic_global(&crpt, rows, overflow, counts.stats[1], counts.typical)?;
                }
            }
        }
        drop(meta);
        self.scan(crpt.ptr_at(0), m + 1)?;
        Ok(Offsets {
            crpt,
            after_setup,
            typical: counts.typical,
        })
    }

    /// The arguments every symbolic kernel starts with: A's and B's row
    /// offsets and columns, the `n` rows listed at `rows`, C's row offsets
    /// and G.
    pub(super) fn symbolic_args(
        &self,
        rows: KernelArg,
        n: usize,
        crpt: &DeviceArray<D, u64>,
        g: KernelArg,
    ) -> Vec<KernelArg> {
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        vec![
            a.rpt.arg(),
            a.col.arg(),
            b.rpt.arg(),
            b.col.arg(),
            rows,
            U32(n as u32),
            crpt.arg(),
            g,
        ]
    }

    /// Counts the `n` rows listed at `rows` (those the last shared bin gave
    /// up on, or a global bin's) on stream 0: when C is narrow enough (or
    /// [`LongRows::Dense`]), a bitmap per row, each row split into slices of
    /// its entries of A over several blocks (batches of rows within the
    /// global budget); else a hash table of `2·nprod` per block (OpSparse
    /// §5.6.1, kernel 8; DCU §5.4).
    fn symbolic_global(
        &self,
        crpt: &DeviceArray<D, u64>,
        rows: KernelArg,
        n: usize,
        max_nprod: u64,
        typical: usize,
    ) -> Result<()> {
        let threads = 1024u32.min(self.dev().properties().max_threads_per_block);
        let ncols = self.b.ncols;
        let words = bitmap_words(ncols);
        let blocks = n.min(self.sms() * 2).max(1);
        let mut args = self.symbolic_args(rows, n, crpt, self.g(typical, threads));
        let (rows_at_once, slices) = self.dense_batches(n, max_nprod, 4 * words)?;
        let dense = match self.e.config.long_rows {
            LongRows::Auto => (ncols as u64) <= 64 * max_nprod,
            LongRows::Dense => true,
            LongRows::SortedHash | LongRows::InPlaceHash => false,
        };
        if dense && rows_at_once >= 1 {
            let bits = DeviceArray::<D, u32>::alloc(
                self.dev(),
                &self.s[0],
                rows_at_once * words,
                "symbolic dense bitmaps",
                self.usage,
            )?;
            let tickets = DeviceArray::<D, u32>::alloc(
                self.dev(),
                &self.s[0],
                rows_at_once,
                "symbolic dense tickets",
                self.usage,
            )?;
            bits.zero(self.dev(), &self.s[0], 0, bits.len())?;
            tickets.zero(self.dev(), &self.s[0], 0, tickets.len())?;
            args.extend([bits.arg(), U32(words as u32), U32(slices), tickets.arg()]);
            // Batches of rows; the kernel leaves bitmaps and tickets zero.
            for start in (0..n).step_by(rows_at_once) {
                let count = (n - start).min(rows_at_once);
                args[4] = offset(rows, 4 * start as u64);
                args[5] = U32(count as u32);
                let grid = (count as u64 * slices as u64) as u32;
                self.launch(0, k::SYMBOLIC_DENSE, grid, threads, 0, &args)?;
            }
            self.usage.sub(4 * (bits.len() + tickets.len()));
        } else {
            let tsize = (2 * max_nprod.min(ncols as u64).max(1)).next_power_of_two() as usize;
            let table = DeviceArray::<D, u32>::alloc(
                self.dev(),
                &self.s[0],
                blocks * tsize,
                "symbolic global hash tables",
                self.usage,
            )?;
            args.extend([table.arg(), U32(tsize as u32)]);
            self.launch(0, k::SYMBOLIC_GLOBAL, blocks as u32, threads, 0, &args)?;
            self.usage.sub(4 * table.len());
        }
        Ok(())
    }
}
