//! Numeric binning and the numeric kernels into C's arrays (OpSparse §5.5,
//! §5.6.2; DCU §5.3–5.4).

use super::config::LongRows;
use super::constants::{RUN_MAX, RUN_ROWS, RUN_THREADS, SORT_TILE};
use super::dense::bitmap_words;
use super::kernels::{
    self, DevicePtr, FillEmptyArgs, FillIdentityArgs, Kernel, NumericBinArgs, NumericBinPrunedArgs,
    NumericDenseArgs, NumericDistinctPrunedArgs, NumericGlobalArgs, NumericHashSlicesArgs,
    NumericRows, NumericRunsArgs, Phase, SortStepArgs, SortTilesArgs,
};
use super::launch::{blocks_for, shape, Launcher, BLOCK};
use super::memory::DeviceArray;
use super::meta::{Counts, Meta};
use super::product::{bounds_at, NumericBinning, Product};
use super::prune_in_pass::InPass;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::semiring::Semiring;

/// Rows per multiprocessor up to which [`LongRows::Auto`] takes the sorted
/// global hash (DCU kernel 8) rather than the in-place one (kernel 9). The
/// paper takes kernel 8 for few rows only (its row copies are memcpy
/// calls; ours are the sort's last pass). Measured on an H200 (132 SMs, C
/// 4 M columns wide, rows of 12,000-18,000 entries): 8, 264 and 800 rows,
/// sorted 3.07, 5.84 and 16.3 ms, in place 4.19, 7.83 and 22.6 ms; more
/// rows were not measured.
const SORTED_ROWS_PER_SM: usize = 8;

/// Entries up to which [`LongRows::Auto`]'s ranked bitmaps with the values
/// in C take a long row (one block each); longer rows keep the dense
/// slices, so that a few huge rows are not the tail. Swept on an H100
/// (ms; `ranked-bitmaps-h100-2026-11-24.md`): R-MAT 18 154 / 121 / 87 / 84 with
/// limits of 32 Ki / 64 Ki / 128 Ki entries / none, short rows + 24 rows
/// of 40,000 (C rows of about 200,000) 4.1 / 4.2 / 4.2 / 5.1, R-MAT 17
/// (Graph500) 42.7 / 34.7 / 34.7 / 34.7.
const RANKED_IN_C_MAX: u32 = 1 << 17;

/// Bitmap words (32 columns each) that one block of the dense accumulators'
/// writing kernel compacts. Measured on an H100 against the accumulating
/// kernel's slice count (two per row for R-MAT 18's 396 rows at once) and
/// fixed counts: R-MAT 17 (Graph500, 4,096 words) 26.4 GFLOPS with 2
/// slices, 28.6 with 8, 29.4 with 16, 28.4 with 32; R-MAT 18 (8,192 words)
/// 21.8, 23.0, 23.8, 23.6; short rows + 24 rows of 40,000 (16,384 words)
/// 13.2, 13.5, 13.6, 14.7, 15.2 with 64.
const COMPACT_WORDS: usize = 256;

/// Where the numeric phase writes C: its row offsets (the product's rows
/// of them), the distinct-row bits of those rows (see
/// [`distinct_rows`](super::symbolic::distinct_rows)) and their repeat bits
/// (see [`repeat_rows`](super::symbolic::repeat_rows))
/// and the whole column and value arrays, which rows are written into at
/// their offsets.
pub(super) struct COut<'c, D: Device, T> {
    pub(super) crpt: &'c DeviceArray<D, u64>,
    pub(super) distinct: DevicePtr,
    pub(super) repeat: DevicePtr,
    pub(super) col: &'c DeviceArray<D, u32>,
    pub(super) val: &'c DeviceArray<D, T>,
}

/// Dynamic shared memory of a block of [`Kernel::NumericDistinct`] holding
/// `entries` products (a warp's rows, all its warps) of `value_bytes`
/// values: their columns, then their values.
pub(super) fn distinct_shared_bytes(entries: u32, value_bytes: usize) -> usize {
    entries as usize * (4 + value_bytes)
}

/// Dynamic shared memory of a block of [`Kernel::NumericRuns`] with
/// values of `value_bytes`: 2·[`RUN_MAX`] keys, [`RUN_ROWS`] values a key,
/// two counters and a window of [`RUN_THREADS`] entries of A.
pub(super) fn runs_shared_bytes(value_bytes: usize) -> usize {
    let keys = 2 * RUN_MAX as usize;
    keys * (4 + RUN_ROWS as usize * value_bytes) + 4 * (2 + RUN_THREADS as usize)
}

impl<D: Device, T: Scalar> Product<'_, D, T> {
    /// Sets the first `n` of the global accumulators `vals` to the identity
    /// of the semiring's `⊕`: zeros (by a memset) for `+`, else by a
    /// kernel.
    fn start_values(&self, stream: usize, vals: &DeviceArray<D, T>, n: usize) -> Result<()> {
        let l = &self.launcher;
        if matches!(l.kernels.semiring, Semiring::PlusTimes | Semiring::PlusPair) {
            return vals.zero(self.device(), self.stream(stream), 0, n);
        }
        let args = FillIdentityArgs {
            vals: vals.ptr(),
            n: n as u64,
        };
        let grid = shape(l.grid(n, BLOCK as usize), BLOCK, 0);
        l.launch(stream, Kernel::FillIdentity, grid, &args)
    }

    /// The pruning that `kernel` (a pruned numeric kernel) applies as it
    /// writes its rows: the product's, when it prunes after a symbolic
    /// phase (a bitmap to mark the rows) and its kernels include `kernel`.
    fn pruning(&self, kernel: Kernel) -> Option<InPass> {
        self.prune.filter(|p| {
            p.pruned_rows != DevicePtr(0) && self.launcher.kernels.kernels.contains_key(&kernel)
        })
    }

    /// Numeric binning by nnz(i) (pass 1 already counted into `meta`,
    /// `counts`, with the same `binning`) and one kernel per bin, largest
    /// first on several streams: direct copies for single-entry rows of A,
    /// runs of rows with the same columns, shared tables, and global
    /// memory for the longest rows. Writes C's rows of A's rows into `out`.
    pub(super) fn numeric(
        &self,
        out: &COut<'_, D, T>,
        binning: NumericBinning,
        meta: Meta<D>,
        counts: Counts,
    ) -> Result<()> {
        let (dev, l) = (self.device(), &self.launcher);
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        let crpt = out.crpt;
        let table = l.table();
        let nbins = table.numeric.len();
        let typical = binning.typical;
        self.fill_bins(&meta, crpt, Phase::Numeric, Some(binning))?;
        l.fork()?;
        let offsets = counts.offsets();
        let rows = |i: usize| NumericRows {
            arpt: a.rpt.ptr(),
            acol: a.col.ptr(),
            aval: self.a.val.ptr(),
            brpt: b.rpt.ptr(),
            bcol: b.col.ptr(),
            bval: self.b.val.ptr(),
            bins: meta.bins(offsets[i]),
            nrows: counts.sizes[i],
            crpt: crpt.ptr(),
            ccol: out.col.ptr(),
            cval: out.val.ptr(),
        };
        let direct = counts.sizes[nbins] as usize;
        if direct > 0 {
            let warps = (BLOCK / dev.properties().warp_width) as usize;
            let grid = shape(l.grid(direct, warps), BLOCK, 0);
            l.launch(
                Launcher::<D>::stream_of(1),
                Kernel::NumericDirect,
                grid,
                &rows(nbins),
            )?;
        }
        let distinct = counts.sizes[nbins + 1] as usize;
        if distinct > 0 {
            let warps = BLOCK / dev.properties().warp_width;
            let grid = l.grid(distinct, warps as usize);
            let bytes = distinct_shared_bytes(warps * self.distinct_max(), size_of::<T>());
            let grid = shape(grid, BLOCK, bytes);
            let stream = Launcher::<D>::stream_of(2);
            match self.pruning(Kernel::NumericDistinctPruned) {
                Some(p) => {
                    let args = NumericDistinctPrunedArgs {
                        rows: rows(nbins + 1),
                        below: p.below.unwrap_or(0),
                        has_below: u32::from(p.below.is_some()),
                        keep: p.keep,
                        pruned_rows: p.pruned_rows,
                    };
                    l.launch(stream, Kernel::NumericDistinctPruned, grid, &args)?;
                }
                None => l.launch(stream, Kernel::NumericDistinct, grid, &rows(nbins + 1))?,
            }
        }
        let runs = counts.sizes[nbins + 3] as usize;
        if runs > 0 {
            let args = NumericRunsArgs {
                rows: rows(nbins + 3),
                g: self.group_size(typical, RUN_THREADS),
                same_rows: binning.same_rows,
                b_same_rows: binning.b_same_rows,
            };
            let bytes = runs_shared_bytes(size_of::<T>());
            let grid = shape(l.grid(runs, 1), RUN_THREADS, bytes);
            l.launch(0, Kernel::NumericRuns, grid, &args)?;
        }
        let ranked = counts.sizes[nbins + 2] as usize;
        if ranked > 0 {
            let capacity = self.ranked_long_max().min(counts.max as u32);
            self.numeric_ranked_shared(
                Launcher::<D>::stream_of(3),
                rows(nbins + 2),
                typical,
                (capacity, u32::MAX),
                true,
            )?;
        }
        let mut scratch = Vec::new();
        for (order, (i, bin)) in table.numeric.iter().enumerate().rev().enumerate() {
            let n = counts.sizes[i] as usize;
            if n == 0 {
                continue;
            }
            let stream = Launcher::<D>::stream_of(order);
            if self.numeric_dense(bin) {
                self.numeric_dense_shared(stream, rows(i), n, typical)?;
                continue;
            }
            if self.numeric_ranked(bin) {
                let room = (bin.max as u32, u32::MAX);
                self.numeric_ranked_shared(stream, rows(i), typical, room, false)?;
                continue;
            }
            let g = self.group_size(typical, bin.row_threads);
            if bin.global() {
                let threads = bin.block_threads;
                let global = self.numeric_global(
                    stream,
                    threads,
                    counts.max,
                    rows(i),
                    (g, typical),
                    out.repeat,
                );
                scratch.push(global?);
            } else {
                let blocks = blocks_for(n, bin.rows_per_block() as usize, usize::MAX);
                let shared = kernels::numeric_shared_bytes(table, i, l.kernels.sort);
                let grid = shape(blocks, bin.block_threads, shared);
                let pruned = Kernel::NumericBinPruned(i);
                if let Some(p) = self.pruning(pruned) {
                    let args = NumericBinPrunedArgs {
                        rows: rows(i),
                        g,
                        distinct_rows: out.distinct,
                        band: binning.band,
                        below: p.below.unwrap_or(0),
                        has_below: u32::from(p.below.is_some()),
                        keep: p.keep,
                        pruned_rows: p.pruned_rows,
                    };
                    l.launch(stream, pruned, grid, &args)?;
                } else {
                    let args = NumericBinArgs {
                        rows: rows(i),
                        g,
                        distinct_rows: out.distinct,
                        band: binning.band,
                    };
                    l.launch(stream, Kernel::NumericBin(i), grid, &args)?;
                }
            }
        }
        l.join()?;
        drop(scratch);
        Ok(())
    }

    /// The longest rows, the `rows.nrows` of `rows` with at most `max_nnz`
    /// entries (see [`LongRows`]): when C is narrow enough, ranked bitmaps
    /// with the values in C for rows of up to [`RANKED_IN_C_MAX`] entries
    /// (under [`Accumulator::Auto`](super::Accumulator::Auto), when a block holds the bitmap) and
    /// dense accumulators for the others; else the DCU paper's sorted
    /// global hash (kernel 8) for at most [`SORTED_ROWS_PER_SM`] rows per
    /// multiprocessor, its in-place one (kernel 9) for more (DCU §5.4).
    /// `typical`: the typical row of B, for the ranked kernel's G.
    /// `repeat`: the rows' repeat bits (see
    /// [`repeat_rows`](super::symbolic::repeat_rows)), for the dense path.
    /// Returns the scratch arrays, to be kept until the kernels are done.
    fn numeric_global(
        &self,
        stream: usize,
        threads: u32,
        max_nnz: u64,
        rows: NumericRows,
        (g, typical): (u32, usize),
        repeat: DevicePtr,
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let l = &self.launcher;
        let n = rows.nrows as usize;
        let ncols = self.b.ncols;
        let words = bitmap_words(ncols);
        let value = std::mem::size_of::<T>();
        let row_bytes = words * (32 * value + 4);
        let (rows_at_once, slices) = self.dense_batches(n, max_nnz, row_bytes)?;
        let narrow = (ncols as u64) <= 16 * max_nnz;
        let ranked = self.options.accumulator.ranks();
        let variant = match self.options.long_rows {
            LongRows::Auto if narrow && ranked && self.ranked_in_c_fits() => LongRows::Ranked,
            LongRows::Auto if narrow && rows_at_once >= 1 => LongRows::Dense,
            LongRows::Auto if n <= SORTED_ROWS_PER_SM * l.sms() => LongRows::SortedHash,
            LongRows::Auto => LongRows::InPlaceHash,
            LongRows::Dense if rows_at_once == 0 => LongRows::InPlaceHash,
            LongRows::Ranked if !self.ranked_in_c_fits() => {
                if rows_at_once == 0 {
                    LongRows::InPlaceHash
                } else {
                    LongRows::Dense
                }
            }
            chosen => chosen,
        };
        let dense = |skip_upto: u32| {
            let batches = (rows_at_once, slices);
            self.dense_long_rows(stream, threads, rows, (g, repeat), batches, skip_upto)
        };
        match variant {
            LongRows::Ranked => {
                // Under Auto, rows of more than RANKED_IN_C_MAX entries,
                // which one block each would leave as the tail, keep the
                // dense slices.
                let auto = self.options.long_rows == LongRows::Auto && rows_at_once >= 1;
                let limit = if auto { RANKED_IN_C_MAX } else { u32::MAX };
                self.numeric_ranked_shared(stream, rows, typical, (0, limit), true)?;
                if max_nnz > limit as u64 {
                    dense(limit)
                } else {
                    self.scratch(stream, 0, 0, ["no scratch", "no scratch"])
                }
            }
            LongRows::Dense => dense(0),
            LongRows::SortedHash => self.numeric_sorted_hash(stream, n, max_nnz, rows, g),
            _ => {
                let blocks = n.min(l.sms()).max(1);
                let tsize = (2 * max_nnz.max(1)).next_power_of_two() as usize;
                let (keys, vals) = self.scratch(
                    stream,
                    blocks * tsize,
                    blocks * tsize,
                    ["numeric global hash keys", "numeric global hash values"],
                )?;
                let args = NumericGlobalArgs {
                    rows,
                    g,
                    table_keys: keys.ptr(),
                    table_vals: vals.ptr(),
                    max_tsize: tsize as u32,
                };
                let grid = shape(blocks as u32, threads, 0);
                l.launch(stream, Kernel::NumericGlobal, grid, &args)?;
                Ok((keys, vals))
            }
        }
    }

    /// The longest rows by dense accumulators in global memory
    /// ([`LongRows::Dense`]): batches of `rows_at_once` rows, each split
    /// into `slices` slices over several blocks (see
    /// [`GpuConfig::slices`](super::GpuConfig::slices)); rows of at most
    /// `skip_upto` entries are skipped (another kernel's). Returns the
    /// scratch arrays, to be kept until the kernels are done.
    fn dense_long_rows(
        &self,
        stream: usize,
        threads: u32,
        rows: NumericRows,
        (g, repeat): (u32, DevicePtr),
        (rows_at_once, slices): (usize, u32),
        skip_upto: u32,
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let (dev, s, l) = (self.device(), self.stream(stream), &self.launcher);
        let n = rows.nrows as usize;
        let words = bitmap_words(self.b.ncols);
        let (bits, vals) = self.scratch(
            stream,
            rows_at_once * words,
            rows_at_once * words * 32,
            ["numeric dense bitmaps", "numeric dense accumulators"],
        )?;
        self.start_values(stream, &vals, vals.len())?;
        let mut args = NumericDenseArgs {
            rows,
            g,
            dense_all: vals.ptr(),
            bits_all: bits.ptr(),
            words: words as u32,
            slices,
            repeat_rows: repeat,
            skip_upto,
            bounds: DevicePtr(0),
        };
        // The writing kernel's slices: about COMPACT_WORDS bitmap
        // words each (at least the accumulating kernel's count).
        let compact_slices = slices.max(words.div_ceil(COMPACT_WORDS) as u32);
        // Slices accumulate, then slices of each row's bitmap write
        // it out, leaving the values zero for the next batch; the
        // bitmaps (read by every slice of their row for its first
        // position) are cleared before each batch.
        let bounds = self.slice_bounds(stream, rows.bins, n, slices)?;
        for start in (0..n).step_by(rows_at_once) {
            let count = (n - start).min(rows_at_once);
            args.rows.bins = rows.bins.add(4 * start as u64);
            args.rows.nrows = count as u32;
            bits.zero(dev, s, 0, count * words)?;
            args.bounds = bounds_at(&bounds, start, slices);
            let grid = (count as u64 * slices as u64) as u32;
            l.launch(stream, Kernel::NumericDense, shape(grid, threads, 0), &args)?;
            let scan = 4 * (threads / dev.properties().warp_width) as usize;
            let compact_args = NumericDenseArgs {
                slices: compact_slices,
                ..args
            };
            let grid = (count as u64 * compact_slices as u64) as u32;
            let compact = shape(grid, threads, scan);
            l.launch(stream, Kernel::NumericDenseCompact, compact, &compact_args)?;
        }
        if let Some(b) = bounds {
            l.release(b);
        }
        Ok((bits, vals))
    }

    /// The DCU paper's first global variant (kernel 8, DCU §5.4): for each
    /// batch of rows a hash table of `1.5·max_nnz` slots per row, filled by
    /// slices of each row over several blocks; the tables bitonic-sorted
    /// device-wide (tiles sorted in shared memory, merge steps wider than a
    /// tile one launch each); the first nnz(i) slots of each row copied
    /// into C by the last pass.
    fn numeric_sorted_hash(
        &self,
        stream: usize,
        n: usize,
        max_nnz: u64,
        rows: NumericRows,
        g: u32,
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let l = &self.launcher;
        let tsize = (3 * max_nnz.max(1)).div_ceil(2);
        if tsize > 1 << 31 {
            return Err(Error::TooLarge {
                what: "hash table slots of a row",
                value: tsize as u128,
                limit: 1 << 31,
            });
        }
        let tsize = tsize as usize;
        let row_bytes = tsize * (4 + std::mem::size_of::<T>());
        let (rows_at_once, slices) = self.dense_batches(n, max_nnz, row_bytes)?;
        let rows_at_once = rows_at_once.max(1);
        let (keys, vals) = self.scratch(
            stream,
            rows_at_once * tsize,
            rows_at_once * tsize,
            ["sorted hash keys", "sorted hash values"],
        )?;
        let mut args = NumericHashSlicesArgs {
            rows,
            g,
            keys_all: keys.ptr(),
            vals_all: vals.ptr(),
            tsize: tsize as u32,
            slices,
            bounds: DevicePtr(0),
        };
        let p2 = tsize.next_power_of_two();
        let tiles = tsize.div_ceil(SORT_TILE) as u32;
        let bounds = self.slice_bounds(stream, rows.bins, n, slices)?;
        for start in (0..n).step_by(rows_at_once) {
            let count = (n - start).min(rows_at_once);
            let bins = rows.bins.add(4 * start as u64);
            let slots = count * tsize;
            let fill = FillEmptyArgs {
                keys: keys.ptr(),
                n: slots as u64,
            };
            let fill_grid = shape(l.grid(slots, BLOCK as usize), BLOCK, 0);
            l.launch(stream, Kernel::FillEmpty, fill_grid, &fill)?;
            self.start_values(stream, &vals, slots)?;
            args.rows.bins = bins;
            args.rows.nrows = count as u32;
            args.bounds = bounds_at(&bounds, start, slices);
            let grid = (count as u64 * slices as u64) as u32;
            l.launch(
                stream,
                Kernel::NumericHashSlices,
                shape(grid, 1024, 0),
                &args,
            )?;
            // Stage 0 sorts each tile; stage k > tile finishes merge stage k
            // inside the tiles; the pass that completes the sort writes C.
            let tile_pass = |stage: usize| {
                let last = stage.max(SORT_TILE) >= p2;
                let targs = SortTilesArgs {
                    keys_all: keys.ptr(),
                    vals_all: vals.ptr(),
                    tsize: tsize as u32,
                    tiles,
                    stage: stage as u32,
                    bins,
                    crpt: rows.crpt,
                    ccol: rows.ccol,
                    cval: rows.cval,
                    write_out: last as u32,
                };
                let grid = shape(count as u32 * tiles, SORT_TILE as u32 / 2, 0);
                l.launch(stream, Kernel::SortTiles, grid, &targs)
            };
            tile_pass(0)?;
            let mut stage = 2 * SORT_TILE;
            while stage <= p2 {
                let mut j = stage / 2;
                while j >= SORT_TILE {
                    let sargs = SortStepArgs {
                        keys_all: keys.ptr(),
                        vals_all: vals.ptr(),
                        tsize: tsize as u32,
                        p2: p2 as u32,
                        k: stage as u32,
                        j: j as u32,
                        nrows: count as u32,
                    };
                    let pairs = count * p2 / 2;
                    let grid = shape(l.grid(pairs, BLOCK as usize), BLOCK, 0);
                    l.launch(stream, Kernel::SortStep, grid, &sargs)?;
                    j /= 2;
                }
                tile_pass(stage)?;
                stage *= 2;
            }
        }
        if let Some(b) = bounds {
            l.release(b);
        }
        Ok((keys, vals))
    }

    /// Scratch of the global-memory paths on `stream`: `keys` words
    /// (keys or bitmaps) and `vals` values, named by `what` in errors.
    fn scratch(
        &self,
        stream: usize,
        keys: usize,
        vals: usize,
        what: [&'static str; 2],
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let l = &self.launcher;
        Ok((
            l.alloc(stream, keys, what[0])?,
            l.alloc(stream, vals, what[1])?,
        ))
    }
}
