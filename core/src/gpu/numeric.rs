//! Numeric binning and the numeric kernels into C's arrays (OpSparse §5.5,
//! §5.6.2; DCU §5.3–5.4).

use super::constants::SORT_TILE;
use super::dense::bitmap_words;
use super::engine::{blocks_for, LongRows, BLOCK};
use super::memory::DeviceArray;
use super::program::{self, k};
use super::run::{offset, Counts, Meta, Run, U32, U64};
use super::symbolic::distinct_rows;
use crate::device::{Device, KernelArg};
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Rows per multiprocessor up to which [`LongRows::Auto`] takes the sorted
/// global hash (DCU kernel 8) rather than the in-place one (kernel 9). The
/// paper takes kernel 8 for few rows only (its row copies are memcpy
/// calls; ours are the sort's last pass). Measured on an H200 (132 SMs, C
/// 4 M columns wide, rows of 12,000-18,000 entries): 8, 264 and 800 rows,
/// sorted 3.07, 5.84 and 16.3 ms, in place 4.19, 7.83 and 22.6 ms; more
/// rows were not measured.
const SORTED_ROWS_PER_SM: usize = 8;

impl<D: Device, T: Scalar> Run<'_, D, T> {
    /// Numeric binning by nnz(i) (pass 1 already counted into `meta`,
    /// `counts`) and one kernel per bin, largest first on several streams:
    /// direct copies for single-entry rows of A, shared tables, and global
    /// memory for the longest rows.
    pub(super) fn numeric(
        &self,
        crpt: &DeviceArray<D, u64>,
        nnz: usize,
        typical: usize,
        meta: Meta<D>,
        counts: Counts,
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let dev = self.dev();
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        let ccol =
            DeviceArray::<D, u32>::alloc(dev, &self.s[0], nnz, "C column indices", self.usage)?;
        let cval = DeviceArray::<D, T>::alloc(dev, &self.s[0], nnz, "C values", self.usage)?;
        if nnz == 0 {
            return Ok((ccol, cval));
        }
        let table = &self.ks.table;
        let (nsym, nbins) = (table.shared_symbolic_bins(), table.numeric.len());
        self.fill_bins(&meta, crpt, k::BIN_FILL_NUMERIC)?;
        self.fork()?;
        let offsets = counts.offsets();
        let common = [
            a.rpt.arg(),
            a.col.arg(),
            self.a.val.arg(),
            b.rpt.arg(),
            b.col.arg(),
            self.b.val.arg(),
        ];
        let rows = |i: usize| -> Vec<KernelArg> {
            let mut v = common.to_vec();
            v.extend([
                meta.bins(offsets[i]),
                U32(counts.sizes[i]),
                crpt.arg(),
                ccol.arg(),
                cval.arg(),
            ]);
            v
        };
        let direct = counts.sizes[nbins] as usize;
        if direct > 0 {
            let warps = (BLOCK / dev.properties().warp_width) as usize;
            self.launch(
                Self::stream_of(1),
                k::NUMERIC_DIRECT,
                self.grid(direct, warps),
                BLOCK,
                0,
                &rows(nbins),
            )?;
        }
        let mut scratch = Vec::new();
        for (order, (i, bin)) in table.numeric.iter().enumerate().rev().enumerate() {
            let n = counts.sizes[i] as usize;
            if n == 0 {
                continue;
            }
            let stream = Self::stream_of(order);
            if self.numeric_dense(bin) {
                self.numeric_dense_shared(stream, rows(i), n, typical)?;
                continue;
            }
            let mut args = rows(i);
            args.push(self.g(typical, bin.row_threads));
            if bin.global() {
                scratch.push(self.numeric_global(
                    stream,
                    bin.block_threads,
                    n,
                    counts.max,
                    args,
                )?);
            } else {
                let blocks = blocks_for(n, bin.rows_per_block() as usize, usize::MAX);
                let shared = program::numeric_shared_bytes(table, i, self.ks.sort);
                args.push(distinct_rows(crpt, self.a.nrows));
                self.launch(
                    stream,
                    k::FIRST_BIN + nsym + i,
                    blocks,
                    bin.block_threads,
                    shared,
                    &args,
                )?;
            }
        }
        self.join()?;
        drop(scratch);
        Ok((ccol, cval))
    }

    /// The longest rows, `n` of them with at most `max_nnz` entries (see
    /// [`LongRows`]): dense accumulators when C is narrow enough; else the
    /// DCU paper's sorted global hash (kernel 8) for at most
    /// [`SORTED_ROWS_PER_SM`] rows per multiprocessor, its in-place one
    /// (kernel 9) for more (DCU §5.4). Returns the scratch arrays, to be kept until the kernels are
    /// done.
    fn numeric_global(
        &self,
        stream: usize,
        threads: u32,
        n: usize,
        max_nnz: u64,
        mut args: Vec<KernelArg>,
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let (dev, s) = (self.dev(), &self.s[stream]);
        let ncols = self.b.ncols;
        let words = bitmap_words(ncols);
        let value = std::mem::size_of::<T>();
        let row_bytes = words * (32 * value + 4);
        let (rows_at_once, slices) = self.dense_batches(n, max_nnz, row_bytes)?;
        let variant = match self.e.config.long_rows {
            LongRows::Auto if (ncols as u64) <= 16 * max_nnz && rows_at_once >= 1 => {
                LongRows::Dense
            }
            LongRows::Auto if n <= SORTED_ROWS_PER_SM * self.sms() => LongRows::SortedHash,
            LongRows::Auto => LongRows::InPlaceHash,
            LongRows::Dense if rows_at_once == 0 => LongRows::InPlaceHash,
            chosen => chosen,
        };
        // Batches of rows over the bin's list (argument 6) and count (7).
        let bins = args[6];
        let batches = |rows_at_once: usize| {
            (0..n).step_by(rows_at_once.max(1)).map(move |start| {
                let rows = (n - start).min(rows_at_once);
                (offset(bins, 4 * start as u64), rows)
            })
        };
        match variant {
            LongRows::Dense => {
                let (bits, vals) = self.scratch(
                    stream,
                    rows_at_once * words,
                    rows_at_once * words * 32,
                    ["numeric dense bitmaps", "numeric dense accumulators"],
                )?;
                vals.zero(dev, s, 0, vals.len())?;
                args.extend([vals.arg(), bits.arg(), U32(words as u32), U32(slices)]);
                // Slices accumulate, then slices of each row's bitmap write
                // it out, leaving the values zero for the next batch; the
                // bitmaps (read by every slice of their row for its first
                // position) are cleared before each batch.
                for (list, rows) in batches(rows_at_once) {
                    (args[6], args[7]) = (list, U32(rows as u32));
                    bits.zero(dev, s, 0, rows * words)?;
                    let grid = (rows as u64 * slices as u64) as u32;
                    self.launch(stream, k::NUMERIC_DENSE, grid, threads, 0, &args)?;
                    let scan = 4 * (threads / dev.properties().warp_width) as usize;
                    self.launch(stream, k::NUMERIC_DENSE_COMPACT, grid, threads, scan, &args)?;
                }
                Ok((bits, vals))
            }
            LongRows::SortedHash => self.numeric_sorted_hash(stream, n, max_nnz, args),
            _ => {
                let blocks = n.min(self.sms()).max(1);
                let tsize = (2 * max_nnz.max(1)).next_power_of_two() as usize;
                let (keys, vals) = self.scratch(
                    stream,
                    blocks * tsize,
                    blocks * tsize,
                    ["numeric global hash keys", "numeric global hash values"],
                )?;
                args.extend([keys.arg(), vals.arg(), U32(tsize as u32)]);
                self.launch(stream, k::NUMERIC_GLOBAL, blocks as u32, threads, 0, &args)?;
                Ok((keys, vals))
            }
        }
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
        mut args: Vec<KernelArg>,
    ) -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let (dev, s) = (self.dev(), &self.s[stream]);
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
        let (bins, crpt, ccol, cval) = (args[6], args[8], args[9], args[10]);
        args.extend([keys.arg(), vals.arg(), U32(tsize as u32), U32(slices)]);
        let p2 = tsize.next_power_of_two();
        let tiles = tsize.div_ceil(SORT_TILE) as u32;
        for start in (0..n).step_by(rows_at_once) {
            let rows = (n - start).min(rows_at_once);
            let list = offset(bins, 4 * start as u64);
            let slots = rows * tsize;
            let fill = [keys.arg(), U64(slots as u64)];
            self.launch(
                stream,
                k::FILL_EMPTY,
                self.grid(slots, BLOCK as usize),
                BLOCK,
                0,
                &fill,
            )?;
            vals.zero(dev, s, 0, slots)?;
            (args[6], args[7]) = (list, U32(rows as u32));
            let grid = (rows as u64 * slices as u64) as u32;
            self.launch(stream, k::NUMERIC_HASH_SLICES, grid, 1024, 0, &args)?;
            // Stage 0 sorts each tile; stage k > tile finishes merge stage k
            // inside the tiles; the pass that completes the sort writes C.
            let tile_pass = |stage: usize| {
                let last = stage.max(SORT_TILE) >= p2;
                let targs = [
                    keys.arg(),
                    vals.arg(),
                    U32(tsize as u32),
                    U32(tiles),
                    U32(stage as u32),
                    list,
                    crpt,
                    ccol,
                    cval,
                    U32(last as u32),
                ];
                let grid = rows as u32 * tiles;
                self.launch(stream, k::SORT_TILES, grid, SORT_TILE as u32 / 2, 0, &targs)
            };
            tile_pass(0)?;
            let mut stage = 2 * SORT_TILE;
            while stage <= p2 {
                let mut j = stage / 2;
                while j >= SORT_TILE {
                    let sargs = [
                        keys.arg(),
                        vals.arg(),
                        U32(tsize as u32),
                        U32(p2 as u32),
                        U32(stage as u32),
                        U32(j as u32),
                        U32(rows as u32),
                    ];
                    let pairs = rows * p2 / 2;
                    self.launch(
                        stream,
                        k::SORT_STEP,
                        self.grid(pairs, BLOCK as usize),
                        BLOCK,
                        0,
                        &sargs,
                    )?;
                    j /= 2;
                }
                tile_pass(stage)?;
                stage *= 2;
            }
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
        let (dev, s) = (self.dev(), &self.s[stream]);
        Ok((
            DeviceArray::alloc(dev, s, keys, what[0], self.usage)?,
            DeviceArray::alloc(dev, s, vals, what[1], self.usage)?,
        ))
    }
}
