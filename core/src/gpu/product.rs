//! One product in flight: its operands, its options and its launch
//! context, with what both phases share: the shape check, the thread-group
//! size G, and the two binning passes (OpSparse Alg. 1–2, DCU Alg. 2–3).
//! The phases are in `symbolic.rs`, `numeric.rs` and `dense.rs`, their
//! sequence in `pipeline.rs`.

use super::checks::PendingChecks;
use super::config::GpuConfig;
use super::config::{Accumulator, SliceSplit};
use super::constants::{DISTINCT_PER_LANE, PROMOTE_MIN_PRODUCTS, PROMOTE_ROWS_PER_MULTIPROCESSOR};
use super::kernels::{
    symbolic_registers, BinCountArgs, BinFillArgs, BinnedRows, DevicePtr, Kernel, Phase,
    SameRowsArgs, SliceBoundsArgs,
};
use super::launch::{shape, Launcher, BLOCK};
use super::matrix::GpuMatrix;
use super::memory::DeviceArray;
use super::meta::{Counts, Meta};
use super::prune_in_pass::InPass;
use crate::device::{Device, LaunchShape};
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::table::group_size;

/// Least work (products or entries of C) a block of the dense global paths
/// gets when a long row is split between blocks.
pub(super) const DENSE_SLICE_WORK: u64 = 16_384;

/// `C = A·B` in flight.
pub(super) struct Product<'a, D: Device, T: Scalar> {
    /// Device, kernels, streams and workspace.
    pub(super) launcher: Launcher<'a, D>,
    /// Accumulator and long-row choices.
    pub(super) options: &'a GpuConfig,
    pub(super) a: &'a GpuMatrix<D, T>,
    pub(super) b: &'a GpuMatrix<D, T>,
    /// The checks of A's and B's arrays (read in place from another
    /// library), launched but not yet answered: their faults come back
    /// with setup's counters.
    pub(super) pending: Option<&'a PendingChecks<D>>,
    /// Completes once B's values are in place (they may still be arriving
    /// while the symbolic phase runs, which reads only B's structure);
    /// `None`: they are.
    pub(super) values_ready: Option<&'a D::Event>,
    /// The pruning the one pass applies as it writes C's rows, when it
    /// runs (the caller prunes C after a symbolic phase).
    pub(super) prune: Option<InPass>,
}

/// The slice bounds ([`Product::slice_bounds`]) of the batch of rows that
/// starts at listed row `start`; null without bounds.
pub(super) fn bounds_at<D: Device>(
    bounds: &Option<DeviceArray<D, u64>>,
    start: usize,
    slices: u32,
) -> DevicePtr {
    bounds.as_ref().map_or(DevicePtr(0), |b| {
        b.ptr().add(8 * (start * (slices as usize + 1)) as u64)
    })
}

/// The three words after the repeat bits in C's row offsets `crpt` (`m`
/// rows, as setup allocates them): B's bandwidths below and above its
/// rows' indices and their mark, which setup leaves for the symbolic
/// binning ([`super::kernels::SetupArgs`]).
pub(super) fn band_words<D: Device>(crpt: &DeviceArray<D, u64>, m: usize) -> DevicePtr {
    crpt.ptr_to(m + 1 + 2 * m.div_ceil(64))
}

/// The bits after B's bandwidths in C's row offsets `crpt` (`m` rows, as
/// setup allocates them): a bit a row of A, set for the rows the symbolic
/// phase does not count because they have the columns of the row before
/// ([`super::kernels::SameRowsArgs`]).
pub(super) fn same_row_words<D: Device>(crpt: &DeviceArray<D, u64>, m: usize) -> DevicePtr {
    crpt.ptr_to(m + 4 + 2 * m.div_ceil(64))
}

/// The average products a row (nnz(A)/M · nnz(B)/K) past which the
/// symbolic phase is worth a pass of its own over A or B to lighten
/// ([`Product::symbolic_is_heavy`]).
pub(super) const HEAVY_MIN_PRODUCTS: usize = 128;
/// The least products in all (nnz(A) · nnz(B)/K) for which the symbolic
/// phase is worth such a pass ([`Product::symbolic_is_heavy`]).
pub(super) const HEAVY_MIN_TOTAL: usize = 1 << 25;

/// [`Error::TooLarge`] for a count past `u32::MAX`.
pub(super) fn too_large(what: &'static str, value: usize) -> Error {
    Error::TooLarge {
        what,
        value: value as u128,
        limit: u32::MAX as u128,
    }
}

/// What the numeric phase's binning knows beyond the symbolic phase's:
/// the rows' distinct-row bits, the typical length of the rows of B that
/// products come from (setup's histogram), the same-row bits of the
/// runs whose rows are computed together
/// ([`Kernel::NumericRuns`](super::kernels::Kernel::NumericRuns); null:
/// none) and B's (see [`Product::runs_of_b`]; null: none), and B's
/// bandwidths for the rows whose columns fit their tables' slots (see
/// [`Product::band`]; null: none).
#[derive(Clone, Copy)]
pub(super) struct NumericBinning {
    pub(super) distinct: DevicePtr,
    pub(super) typical: usize,
    pub(super) same_rows: DevicePtr,
    pub(super) b_same_rows: DevicePtr,
    pub(super) band: DevicePtr,
}

impl<D: Device, T: Scalar> Product<'_, D, T> {
    /// The device.
    pub(super) fn device(&self) -> &D {
        self.launcher.device
    }

    /// Stream number `i` of the product.
    pub(super) fn stream(&self, i: usize) -> &D::Stream {
        &self.launcher.streams[i]
    }

    /// Rows of A (and of C).
    pub(super) fn m(&self) -> usize {
        self.a.nrows
    }

    /// Checks that A's columns match B's rows and that every count a
    /// kernel takes as `u32` fits one.
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

    /// Thread-group size G for rows of B: DCU §5.1's rule (about 8 entries
    /// of B per thread) applied to the rows of B the median product comes
    /// from (`typical`, from setup) rather than to B's longest row; the
    /// kernels hand rows of B far longer than that to whole warps.
    pub(super) fn group_size(&self, typical: usize, row_threads: u32) -> u32 {
        group_size(typical, self.device().properties().warp_width, row_threads)
    }

    /// Whether single-entry rows of A may be copied directly (1) or not
    /// (0): B's rows are sorted without duplicates.
    pub(super) fn direct_ok(&self) -> u32 {
        self.b.sorted as u32
    }

    /// Whether the symbolic phase is heavy enough for a pass over A or B
    /// that lightens it to pay: rows of more than [`HEAVY_MIN_PRODUCTS`]
    /// products on average (shorter rows take the smallest bins whatever
    /// bounds them) and at least [`HEAVY_MIN_TOTAL`] in all (c-39's 17.8 M
    /// products, 0.36 ms, took 3–4% longer with B's bandwidths found on an
    /// H200). The products are estimated as nnz(A) · nnz(B) / B's rows.
    fn symbolic_is_heavy(&self) -> bool {
        let (m, k) = (self.a.nrows as u128, self.b.nrows.max(1) as u128);
        let products = self.a.nnz as u128 * self.b.nnz as u128 / k;
        products > HEAVY_MIN_PRODUCTS as u128 * m && products >= HEAVY_MIN_TOTAL as u128
    }

    /// Whether the symbolic binning bounds a row's entries by the columns
    /// its products can reach, from B's bandwidths that setup finds: A's
    /// and B's rows sorted (a row's first and last columns its least and
    /// greatest), B's rows countable in 32 bits, a heavy symbolic phase
    /// ([`Product::symbolic_is_heavy`]: setup then reads the first and last
    /// column of every row of B), and no symbolic bin sorting its
    /// products in registers (whose room is the bin's nprod).
    pub(super) fn bands_bound_rows(&self) -> bool {
        let table = self.launcher.table();
        self.a.sorted
            && self.b.sorted
            && self.b.nrows < u32::MAX as usize
            && self.symbolic_is_heavy()
            && (0..table.symbolic.len()).all(|i| !symbolic_registers(table, i, self.options.sort))
    }

    /// B's bandwidths and their mark in `crpt` (C's row offsets as setup
    /// allocates them) where setup finds them ([`Product::bands_bound_rows`];
    /// null otherwise): they bound the symbolic binning's rows, and a row
    /// whose columns they confine to a table's slots takes each column's
    /// slot without a hash (`row_window` in the kernels).
    pub(super) fn band(&self, crpt: &DeviceArray<D, u64>) -> DevicePtr {
        if self.bands_bound_rows() {
            band_words(crpt, self.m())
        } else {
            DevicePtr(0)
        }
    }

    /// Whether the symbolic phase counts only the first row of each run of
    /// rows of A with the same columns (PETSc's i-nodes: a node's degrees
    /// of freedom, a dense block's rows), the rows after it taking its
    /// count ([`Kernel::SameRows`](super::kernels::Kernel::SameRows)): a
    /// heavy symbolic phase ([`Product::symbolic_is_heavy`]), where the
    /// pass that finds the runs, one read of A's row offsets and of the
    /// columns of rows as long as the row before, costs little beside it.
    pub(super) fn counts_runs_once(&self) -> bool {
        self.symbolic_is_heavy()
    }

    /// The same-row bits in `crpt` (the symbolic phase's C row offsets)
    /// for the numeric phase to compute a few rows of each run together
    /// ([`Kernel::NumericRuns`](super::kernels::Kernel::NumericRuns)), when
    /// the symbolic phase marked `marked` rows and the product is not
    /// pruned as it is written; else null.
    pub(super) fn runs_together(&self, crpt: &DeviceArray<D, u64>, marked: u64) -> DevicePtr {
        if marked > 0 && self.prune.is_none() && self.counts_runs_once() {
            same_row_words(crpt, self.m())
        } else {
            DevicePtr(0)
        }
    }

    /// B's same-row bits for the numeric phase's runs (`a_marks`, from
    /// [`Product::runs_together`]; null: no runs, and none for B either):
    /// A's own where B has A's structure, else found by
    /// [`Kernel::SameRows`](super::kernels::Kernel::SameRows) over B's rows
    /// into a new array, returned to be kept until the numeric kernels are
    /// done.
    pub(super) fn runs_of_b(
        &self,
        a_marks: DevicePtr,
    ) -> Result<(DevicePtr, Option<DeviceArray<D, u32>>)> {
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        if a_marks == DevicePtr(0) || self.b.nrows >= u32::MAX as usize {
            return Ok((DevicePtr(0), None));
        }
        if a.rpt.ptr() == b.rpt.ptr() && a.col.ptr() == b.col.ptr() {
            return Ok((a_marks, None));
        }
        let l = &self.launcher;
        let k = self.b.nrows;
        // The bits, then (at an even word) the count the kernel adds to.
        let words = k.div_ceil(u32::BITS as usize).next_multiple_of(2);
        let marks = l.alloc::<u32>(0, words + 2, "same-row bits of B")?;
        marks.zero(self.device(), self.stream(0), 0, words + 2)?;
        let args = SameRowsArgs {
            arpt: b.rpt.ptr(),
            acol: b.col.ptr(),
            m: k as u32,
            faults: DevicePtr(0),
            same_rows: marks.ptr(),
            nsame: marks.ptr_to(words),
        };
        l.launch(
            0,
            Kernel::SameRows,
            self.word_warps(k, u32::MAX as usize),
            &args,
        )?;
        Ok((marks.ptr(), Some(marks)))
    }

    /// How the dense global paths split `n` long rows: rows at once (at
    /// most three per multiprocessor, each with `row_bytes` of scratch, within
    /// [`Launcher::global_budget`]; 0 when not even one fits) and slices per
    /// row, so that a batch fills the device with blocks of at least
    /// [`DENSE_SLICE_WORK`] products or entries (`max_work`, the largest
    /// row's).
    pub(super) fn dense_batches(
        &self,
        n: usize,
        max_work: u64,
        row_bytes: usize,
    ) -> Result<(usize, u32)> {
        let sms = self.launcher.sms();
        // At most three rows per multiprocessor at once: enough blocks with
        // the slices, and scratch far below the budget for products with
        // many long rows (measured on R-MAT 18: 15 GB peak instead of 46 GB,
        // 358 ms instead of 275 ms, against as many rows as fit). On an H100,
        // R-MAT 18 (Graph500), two runs each: 12 rows at once 736 ms, 96
        // rows 308, two per multiprocessor 289 and 288, three 271 and 265,
        // four 283 (one run); R-MAT 16-17 3-6% faster at three than at two.
        let rows = n
            .min(3 * sms)
            .min(self.launcher.global_budget()? / row_bytes.max(1));
        let fill = (4 * sms).div_ceil(rows.max(1)) as u64;
        let slices = fill
            .min(max_work.div_ceil(DENSE_SLICE_WORK))
            .clamp(1, 1 << 16);
        Ok((rows, slices as u32))
    }

    /// Under [`SliceSplit::Products`], where the `slices` slices of each of
    /// the `n` rows listed at `bins` start, on `stream`
    /// ([`Kernel::SliceBounds`], one launch for the rows of every batch):
    /// `n · (slices + 1)` entries of a fresh array, absolute positions in
    /// A's entries chosen so that the slices hold about equal products; a batch starting at row `start`
    /// finds its own at [`bounds_at`]. The array is to be kept until the
    /// slices' kernels are launched after it on `stream`. None under
    /// [`SliceSplit::Entries`] (the kernels then cut equal stretches of
    /// entries).
    pub(super) fn slice_bounds(
        &self,
        stream: usize,
        bins: DevicePtr,
        n: usize,
        slices: u32,
    ) -> Result<Option<DeviceArray<D, u64>>> {
        if self.options.slices == SliceSplit::Entries {
            return Ok(None);
        }
        let l = &self.launcher;
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        let bounds = l.alloc::<u64>(stream, n * (slices as usize + 1), "slice bounds")?;
        let args = SliceBoundsArgs {
            arpt: a.rpt.ptr(),
            acol: a.col.ptr(),
            brpt: b.rpt.ptr(),
            bins,
            nrows: n as u32,
            slices,
            bounds: bounds.ptr(),
        };
        let threads = 1024u32.min(self.device().properties().max_threads_per_block);
        let blocks = n.min(2 * l.sms()).max(1) as u32;
        l.launch(
            stream,
            Kernel::SliceBounds,
            shape(blocks, threads, 0),
            &args,
        )?;
        Ok(Some(bounds))
    }

    /// Binning, pass 1 (OpSparse Alg. 1, DCU Alg. 2) for `phase`: counts
    /// rows per bin of `crpt`'s values and reads the counters back. In the
    /// numeric phase, `numeric` says more of the rows.
    pub(super) fn count_bins(
        &self,
        meta: &Meta<D>,
        crpt: &DeviceArray<D, u64>,
        phase: Phase,
        numeric: Option<NumericBinning>,
    ) -> Result<Counts> {
        self.launch_count_bins(meta, crpt, phase, numeric)?;
        meta.read(&self.launcher)
    }

    /// Launches binning pass 1 without reading the counters back.
    pub(super) fn launch_count_bins(
        &self,
        meta: &Meta<D>,
        crpt: &DeviceArray<D, u64>,
        phase: Phase,
        numeric: Option<NumericBinning>,
    ) -> Result<()> {
        let args = BinCountArgs {
            rows: self.binned_rows(crpt, numeric),
            sizes: meta.sizes(),
            max_value: meta.max_value(),
        };
        let grid = self.binning_grid();
        self.launcher
            .launch(0, Kernel::BinCount(phase), grid, &args)
    }

    /// Binning, pass 2 (OpSparse Alg. 2, DCU Alg. 3) for `phase`: writes
    /// row ids at per-bin offsets.
    pub(super) fn fill_bins(
        &self,
        meta: &Meta<D>,
        crpt: &DeviceArray<D, u64>,
        phase: Phase,
        numeric: Option<NumericBinning>,
    ) -> Result<()> {
        let args = BinFillArgs {
            rows: self.binned_rows(crpt, numeric),
            sizes: meta.sizes(),
            cursor: meta.cursors(),
            bins: meta.bins(0),
        };
        let grid = self.binning_grid();
        self.launcher.launch(0, Kernel::BinFill(phase), grid, &args)
    }

    /// The arguments both binning passes start with, binning `crpt`'s
    /// values; with `numeric` (the numeric phase), rows for the distinct
    /// and the ranked bins too, and short rows of many products binned as
    /// longer ones in a product of few rows.
    fn binned_rows(
        &self,
        crpt: &DeviceArray<D, u64>,
        numeric: Option<NumericBinning>,
    ) -> BinnedRows {
        let (promote_max, promote_min_a) = numeric.map_or((0, 0), |n| self.promotion(n.typical));
        let band = match numeric {
            None => self.band(crpt),
            _ => DevicePtr(0),
        };
        let same_rows = match numeric {
            None if self.counts_runs_once() => same_row_words(crpt, self.m()),
            None => DevicePtr(0),
            Some(n) => n.same_rows,
        };
        BinnedRows {
            crpt: crpt.ptr(),
            arpt: self.a.structure.rpt.ptr(),
            m: self.m() as u32,
            direct_ok: self.direct_ok(),
            distinct_rows: numeric.map_or(DevicePtr(0), |n| n.distinct),
            distinct_max: numeric.map_or(0, |_| self.distinct_max()),
            ranked_max: numeric.map_or(0, |_| self.ranked_long_max()),
            promote_max,
            promote_min_a,
            acol: self.a.structure.col.ptr(),
            band,
            same_rows,
        }
    }

    /// Which rows the numeric binning takes for longer ones
    /// ([`PROMOTE_SHIFT`](super::constants::PROMOTE_SHIFT)): those of at
    /// most the short-row bins' entries (several rows a block) and at
    /// least the entries of A that make [`PROMOTE_MIN_PRODUCTS`] products
    /// with rows of B of `typical` entries, in a product of at most
    /// [`PROMOTE_ROWS_PER_MULTIPROCESSOR`] rows per multiprocessor; (0, 0)
    /// for none.
    fn promotion(&self, typical: usize) -> (u32, u32) {
        if self.m() > PROMOTE_ROWS_PER_MULTIPROCESSOR * self.launcher.sms() {
            return (0, 0);
        }
        let table = self.launcher.table();
        let short = table.numeric.iter().take_while(|b| b.rows_per_block() > 1);
        let max = short
            .last()
            .map_or(0, |b| b.max.min(u64::from(u32::MAX)) as u32);
        let min_a = PROMOTE_MIN_PRODUCTS.div_ceil(typical.max(1)).max(1);
        (max, min_a as u32)
    }

    /// The most entries a row of the distinct bin may have
    /// ([`Kernel::NumericDistinct`]: [`DISTINCT_PER_LANE`] per lane of a
    /// warp); 0 when the accumulator choice leaves every row to the hash
    /// tables.
    pub(super) fn distinct_max(&self) -> u32 {
        match self.options.accumulator {
            Accumulator::Auto | Accumulator::Unranked | Accumulator::Packed => {
                DISTINCT_PER_LANE * self.device().properties().warp_width
            }
            Accumulator::DenseHash | Accumulator::Hash => 0,
        }
    }

    /// Grid of the binning passes: a grid-stride loop over the rows.
    fn binning_grid(&self) -> LaunchShape {
        shape(self.launcher.grid(self.m(), BLOCK as usize), BLOCK, 0)
    }
}
