//! Dense accumulators in shared memory for rows of a narrow C: the dense
//! accumulator of KokkosKernels (Deveci et al. 2018, §3.3: a value array
//! indexed by column, preferred when C has few columns) held in a block's
//! shared memory in place of a bin's hash table. A column is its own slot,
//! so there is no hashing or probing, and the row is written sorted by
//! reading its bitmap in column order, with no sort. On Hopper a row of C
//! of up to about 14,000 doubles fits twice per multiprocessor. Where only
//! the bitmap fits, ranked bitmaps keep the values compact: a value per
//! entry of the row, placed by the rank of its column in the bitmap
//! (KokkosKernels §3.2's bit-packed columns serving §3.3's accumulator).

use super::config::Accumulator;
use super::constants::{DENSE_SYMBOLIC_BLOCKS, DENSE_THREADS, RANKED_LONG_THREADS};
use super::kernels::{
    DevicePtr, Kernel, NumericDenseSharedArgs, NumericRankedArgs, NumericRows,
    SymbolicDenseSharedArgs,
};
use super::launch::{blocks_for, shape};
use super::memory::DeviceArray;
use super::product::Product;
use crate::device::{Device, DeviceProperties};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::table::Bin;

/// Resident blocks the numeric dense kernel is compiled for
/// (`SPGEMM_DENSE_NUMERIC_BLOCKS`: 3 on NVIDIA; 2 on AMD, where shared
/// memory holds two dense rows at most anyway).
const NUMERIC_DENSE_BLOCKS: usize = 3;
/// Static shared memory the kernels may add to the dynamic part, bytes.
const STATIC_SLACK: usize = 64;

/// 32-bit words of a bitmap of `ncols` columns (at least one).
pub(super) fn bitmap_words(ncols: usize) -> usize {
    ncols.div_ceil(32).max(1)
}

/// Dynamic shared memory of the numeric dense kernel, bytes: a value of
/// `value_bytes` and a bit per column of a `words`-word bitmap, then a
/// scan word per warp.
fn numeric_dense_bytes(words: usize, value_bytes: usize, warp_width: u32) -> usize {
    words * (32 * value_bytes + 4) + 4 * (DENSE_THREADS / warp_width) as usize
}

/// Dynamic shared memory of the ranked-bitmap kernel, bytes: `capacity`
/// values of `value_bytes`, a bit and a rank base (32 bits each) per
/// column word of a `words`-word bitmap, then a scan word per warp of a
/// block of `threads` (saturating: the global bin's capacity is
/// unbounded).
fn ranked_bytes(
    words: usize,
    capacity: usize,
    value_bytes: usize,
    threads: u32,
    warp_width: u32,
) -> usize {
    capacity
        .saturating_mul(value_bytes)
        .saturating_add(8 * words + 4 * (threads / warp_width) as usize)
}

/// The rule of [`Accumulator::Auto`] for one bin on a device: a shared bin
/// with a block per row whose table has at least `words` slots, and
/// `bytes` of shared memory per block that fit a block and `resident`
/// blocks of a multiprocessor.
fn dense_bin(p: &DeviceProperties, bin: &Bin, words: usize, bytes: usize, resident: usize) -> bool {
    !bin.global()
        && bin.rows_per_block() == 1
        && words <= bin.table_size as usize
        && bytes + STATIC_SLACK <= p.shared_memory_per_block_optin
        && resident * (bytes + STATIC_SLACK + p.reserved_shared_memory_per_block)
            <= p.shared_memory_per_multiprocessor
}

impl<D: Device, T: Scalar> Product<'_, D, T> {
    fn dense_words(&self) -> usize {
        bitmap_words(self.b.ncols)
    }

    fn numeric_dense_bytes(&self) -> usize {
        let warp = self.device().properties().warp_width;
        numeric_dense_bytes(self.dense_words(), std::mem::size_of::<T>(), warp)
    }

    /// Whether symbolic bin `i` counts with a bitmap in shared memory (the
    /// last bin too, whose rows then never overflow to the global kernels:
    /// a bitmap has room for every column). Measured on an H100 against the
    /// last bin's hash table and its overflow to the global bitmaps: R-MAT
    /// 18's symbolic phase 57 -> 7 ms, R-MAT 16-17 (Graph500) 8-12% faster
    /// in all, the other products of the H200 table unchanged.
    pub(super) fn symbolic_dense(&self, i: usize) -> bool {
        let t = self.launcher.table();
        let words = self.dense_words();
        self.options.accumulator != Accumulator::Hash
            && dense_bin(
                self.device().properties(),
                &t.symbolic[i],
                words,
                4 * words,
                1,
            )
    }

    /// Whether numeric bin `bin` accumulates in a dense row in shared
    /// memory.
    pub(super) fn numeric_dense(&self, bin: &Bin) -> bool {
        let p = self.device().properties();
        self.options.accumulator != Accumulator::Hash
            && dense_bin(p, bin, self.dense_words(), self.numeric_dense_bytes(), 2)
    }

    /// Whether numeric bin `bin` accumulates by ranked bitmaps
    /// ([`Kernel::NumericRanked`]): under
    /// [`Accumulator::Auto`], a shared bin with a block per row that does
    /// not take a dense row, whose table has at least as many slots as the
    /// bitmap has words, and whose ranked row (values for the bin's largest
    /// nnz(i)) fits a block's shared memory.
    pub(super) fn numeric_ranked(&self, bin: &Bin) -> bool {
        let p = self.device().properties();
        let capacity = usize::try_from(bin.max).unwrap_or(usize::MAX);
        let words = self.dense_words();
        let value = std::mem::size_of::<T>();
        let bytes = ranked_bytes(words, capacity, value, DENSE_THREADS, p.warp_width);
        self.options.accumulator.ranks()
            && !self.numeric_dense(bin)
            && dense_bin(p, bin, words, bytes, 1)
    }

    /// Blocks of a dense kernel over `n` rows: as many as fit the device
    /// at once with `bytes` each, up to `blocks` per multiprocessor.
    fn dense_grid(&self, n: usize, bytes: usize, blocks: usize) -> u32 {
        let p = self.device().properties();
        let by_smem = p.shared_memory_per_multiprocessor
            / (bytes + STATIC_SLACK + p.reserved_shared_memory_per_block);
        blocks_for(n, 1, blocks.min(by_smem).max(1) * self.launcher.sms())
    }

    /// Counts the `n` rows listed at `bins` with a bitmap per block
    /// ([`Kernel::SymbolicDenseShared`]) on `stream`, marking rows in
    /// `marks`: the distinct-row bits and the repeat bits (see
    /// `symbolic::distinct_rows` and `symbolic::repeat_rows`).
    pub(super) fn symbolic_dense_shared(
        &self,
        stream: usize,
        bins: DevicePtr,
        n: usize,
        crpt: &DeviceArray<D, u64>,
        typical: usize,
        marks: [DevicePtr; 2],
    ) -> Result<()> {
        let g = self.group_size(typical, DENSE_THREADS);
        let args = SymbolicDenseSharedArgs {
            rows: self.symbolic_rows(bins, n, crpt, g),
            words: self.dense_words() as u32,
            distinct_rows: marks[0],
            repeat_rows: marks[1],
        };
        let bytes = 4 * self.dense_words();
        let grid = self.dense_grid(n, bytes, DENSE_SYMBOLIC_BLOCKS);
        let grid = shape(grid, DENSE_THREADS, bytes);
        self.launcher
            .launch(stream, Kernel::SymbolicDenseShared, grid, &args)
    }

    /// Computes the `n` rows of a numeric bin, `rows`, with a dense row per
    /// block ([`Kernel::NumericDenseShared`]) on `stream`.
    pub(super) fn numeric_dense_shared(
        &self,
        stream: usize,
        rows: NumericRows,
        n: usize,
        typical: usize,
    ) -> Result<()> {
        let args = NumericDenseSharedArgs {
            rows,
            g: self.group_size(typical, DENSE_THREADS),
            words: self.dense_words() as u32,
        };
        let bytes = self.numeric_dense_bytes();
        let grid = self.dense_grid(n, bytes, NUMERIC_DENSE_BLOCKS);
        let grid = shape(grid, DENSE_THREADS, bytes);
        self.launcher
            .launch(stream, Kernel::NumericDenseShared, grid, &args)
    }

    /// The most entries a row past the last shared numeric table may have
    /// to accumulate by ranked bitmaps in one block's shared memory (the
    /// numeric binning's extra "ranked" bin), under [`Accumulator::Auto`]
    /// when the last shared bin takes a dense row or ranked bitmaps itself;
    /// 0 otherwise. Measured on
    /// an H100 against the global paths of [`LongRows::Auto`](super::config::LongRows::Auto) (dense
    /// accumulators in global memory, rows split into slices over blocks):
    /// see `docs/benchmarks/ranked-bitmaps-h100-2026-11-24.md`.
    pub(super) fn ranked_long_max(&self) -> u32 {
        let p = self.device().properties();
        let t = self.launcher.table();
        let Some(last) = t.numeric.iter().rev().find(|b| !b.global()) else {
            return 0;
        };
        if !self.options.accumulator.ranks() {
            return 0;
        }
        if !(self.numeric_dense(last) || self.numeric_ranked(last)) {
            return 0;
        }
        let words = self.dense_words();
        let fixed = ranked_bytes(words, 0, 0, RANKED_LONG_THREADS, p.warp_width) + STATIC_SLACK;
        let room = p.shared_memory_per_block_optin.saturating_sub(fixed) / std::mem::size_of::<T>();
        if (room as u64) <= last.max {
            return 0;
        }
        u32::try_from(room).unwrap_or(u32::MAX)
    }

    /// Whether a block's shared memory holds the bitmap and ranks of
    /// [`LongRows::Ranked`](super::config::LongRows::Ranked), whose values
    /// are in C.
    pub(super) fn ranked_in_c_fits(&self) -> bool {
        let p = self.device().properties();
        let bytes = ranked_bytes(self.dense_words(), 0, 0, RANKED_LONG_THREADS, p.warp_width);
        bytes + STATIC_SLACK <= p.shared_memory_per_block_optin
    }

    /// Computes the rows listed in `rows` by ranked bitmaps, a row per
    /// block, on `stream`, with room for `capacity` values a row (at least
    /// each row's nnz; 0: the values accumulate in C's own array) and rows
    /// of more than `limit` entries left to another kernel:
    /// [`Kernel::NumericRankedLong`] for rows past the shared tables
    /// (`long`), else [`Kernel::NumericRanked`].
    pub(super) fn numeric_ranked_shared(
        &self,
        stream: usize,
        rows: NumericRows,
        typical: usize,
        (capacity, limit): (u32, u32),
        long: bool,
    ) -> Result<()> {
        let p = self.device().properties();
        let (kernel, threads, resident) = if long {
            (Kernel::NumericRankedLong, RANKED_LONG_THREADS, 1)
        } else {
            (Kernel::NumericRanked, DENSE_THREADS, NUMERIC_DENSE_BLOCKS)
        };
        let words = self.dense_words();
        let value = std::mem::size_of::<T>();
        let bytes = ranked_bytes(words, capacity as usize, value, threads, p.warp_width);
        let args = NumericRankedArgs {
            rows,
            g: self.group_size(typical, threads),
            words: words as u32,
            capacity,
            limit,
        };
        let grid = self.dense_grid(rows.nrows as usize, bytes, resident);
        self.launcher
            .launch(stream, kernel, shape(grid, threads, bytes), &args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::{tests::props, KernelTable};

    /// The bins of a table that take the dense path for a C `ncols` wide
    /// with values of `value_bytes`: (symbolic, numeric) bin indices.
    fn dense_bins(
        p: &DeviceProperties,
        ncols: usize,
        value_bytes: usize,
    ) -> (Vec<usize>, Vec<usize>) {
        let t = KernelTable::for_device(p, value_bytes);
        let words = bitmap_words(ncols);
        let nbytes = numeric_dense_bytes(words, value_bytes, p.warp_width);
        let pick = |bins: &[Bin], bytes: usize, resident: usize| {
            (0..bins.len())
                .filter(|&i| dense_bin(p, &bins[i], words, bytes, resident))
                .collect::<Vec<_>>()
        };
        (pick(&t.symbolic, 4 * words, 1), pick(&t.numeric, nbytes, 2))
    }

    #[test]
    fn narrow_c_takes_dense_bins_with_a_block_per_row_on_hopper() {
        let hopper = props("sm_90", 32, 228 * 1024, 227 * 1024, 2048, 1024);
        let t = KernelTable::for_device(&hopper, 8);
        // bcsstk33: 8,738 columns, 274 words; a dense row of doubles in
        // 71 KB fits three times in 228 KB.
        let (sym, num) = dense_bins(&hopper, 8738, 8);
        assert!(!sym.is_empty() && !num.is_empty());
        for &i in &sym {
            let b = &t.symbolic[i];
            assert!(b.rows_per_block() == 1 && b.table_size >= 274);
        }
        // The last symbolic bin's rule is the run's (it may overflow); the
        // global numeric bin never takes a shared dense row.
        assert!(!num.contains(&(t.numeric.len() - 1)));
        for &i in &num {
            let b = &t.numeric[i];
            assert!(b.rows_per_block() == 1 && b.table_size >= 274);
        }
        // Bins of several short rows a block never do.
        assert!(t.numeric.iter().take(4).all(|b| b.rows_per_block() > 1));
        assert!(!num.contains(&3) && !sym.contains(&3));
    }

    #[test]
    fn wide_c_keeps_hash_tables_and_a_dense_row_must_fit_twice() {
        let hopper = props("sm_90", 32, 228 * 1024, 227 * 1024, 2048, 1024);
        // 4 M columns: 131,072 words, more than any table has slots.
        assert_eq!(dense_bins(&hopper, 1 << 22, 8), (vec![], vec![]));
        // 20,000 columns of doubles: 160 KB, once per SM: symbolic bitmap
        // only; in f32 (80 KB) the numeric bins too.
        let (sym, num) = dense_bins(&hopper, 20_000, 8);
        assert!(!sym.is_empty() && num.is_empty());
        assert!(!dense_bins(&hopper, 20_000, 4).1.is_empty());
        // The DCU (64 KB a CU): 8,738 columns of doubles do not fit twice,
        // 2,000 do.
        let dcu = props("gfx906", 64, 64 * 1024, 48 * 1024, 2560, 0);
        assert!(dense_bins(&dcu, 8738, 8).1.is_empty());
        assert!(!dense_bins(&dcu, 2000, 8).1.is_empty());
    }

    #[test]
    fn ranked_bitmaps_take_the_bins_whose_bitmap_fits_but_not_a_dense_row() {
        let hopper = props("sm_90", 32, 228 * 1024, 227 * 1024, 2048, 1024);
        let t = KernelTable::for_device(&hopper, 8);
        // The bins ranked under Auto's rule for a C `ncols` wide, doubles.
        let ranked = |ncols: usize| {
            let words = bitmap_words(ncols);
            let dense = numeric_dense_bytes(words, 8, 32);
            (0..t.numeric.len())
                .filter(|&i| {
                    let bin = &t.numeric[i];
                    let bytes = ranked_bytes(
                        words,
                        usize::try_from(bin.max).unwrap_or(usize::MAX),
                        8,
                        DENSE_THREADS,
                        32,
                    );
                    !dense_bin(&hopper, bin, words, dense, 2)
                        && dense_bin(&hopper, bin, words, bytes, 1)
                })
                .collect::<Vec<_>>()
        };
        // R-MAT 17: 4,096 words; the bins of rows from 1,171 entries (tables
        // of at least 4,772 slots) up to the last shared one, whose 9,682
        // doubles and 32 KB of bits and bases take 110 KB.
        let last_shared = t.numeric.len() - 2;
        assert_eq!(ranked(1 << 17), (7..=last_shared).collect::<Vec<_>>());
        assert!(t.numeric[6].table_size < 4096 && t.numeric[7].table_size >= 4096);
        assert!(
            ranked_bytes(
                4096,
                t.numeric[last_shared].max as usize,
                8,
                DENSE_THREADS,
                32
            ) < 111 * 1024
        );
        // bcsstk33 (8,738 columns): dense rows where a bitmap fits, so none.
        assert!(ranked(8738).is_empty());
        // 4 M columns: no bitmap fits a table.
        assert!(ranked(1 << 22).is_empty());
    }
}
