//! Setup, symbolic binning, symbolic kernels and the scan into C's row
//! offsets (OpSparse §5, steps 1–4; §5.1, §5.6.1).

use super::config::{Accumulator, LongRows};
use super::constants::{SETUP_LANES, SETUP_SHORT_LANES, SETUP_SHORT_ROW, SETUP_SPLIT};
use super::dense::bitmap_words;
use super::kernels::{
    self, CopySameRowsArgs, DevicePtr, Kernel, PackCountArgs, PackFillArgs, PackRows, Phase,
    SameRowsArgs, SetupArgs, SetupRows, SymbolicBinArgs, SymbolicDenseArgs, SymbolicGlobalArgs,
    SymbolicRows,
};
use super::launch::{blocks_for, shape, Launcher, BLOCK};
use super::memory::DeviceArray;
use super::meta::{Counts, Meta};
use super::product::{bounds_at, same_row_words, Product};
use crate::device::{Device, LaunchShape};
use crate::error::Result;
use crate::scalar::Scalar;

/// What the symbolic phase produces.
pub(super) struct Symbolic<D: Device> {
    /// C's row offsets, then the distinct-row bits (see [`distinct_rows`])
    /// and the repeat bits (see [`repeat_rows`]).
    pub(super) crpt: DeviceArray<D, u64>,
    /// nnz(C).
    pub(super) nnz: usize,
    /// The typical row of B for G (see `Counts::typical`).
    pub(super) typical: usize,
}

/// B packed into words of 32 columns: row offsets and entries (a word in
/// the high half, its mask of columns in the low half).
type PackedB<D> = (DeviceArray<D, u64>, DeviceArray<D, u64>);

/// Whether packing B into `runs` entries (words of 32 columns) from `nnz`
/// cuts its entries by more than 15%: KokkosKernels §3.2's rule for
/// running the symbolic phase on the packed matrix.
pub(super) fn packs(runs: u64, nnz: usize) -> bool {
    (runs as u128) * 100 < (nnz as u128) * 85
}

/// The symbolic phase up to the scan: C's row offsets on the device.
pub(super) struct Offsets<D: Device> {
    /// C's row offsets, then the distinct-row bits (see [`distinct_rows`])
    /// and the repeat bits (see [`repeat_rows`]).
    pub(super) crpt: DeviceArray<D, u64>,
    /// An event after setup, when timing.
    pub(super) after_setup: Option<D::Event>,
    /// The typical row of B for G (see `Counts::typical`).
    pub(super) typical: usize,
    /// Rows the symbolic kernels did not count, each taking the count of
    /// the row before it (the same columns; `same_rows.cuh`).
    pub(super) same_rows: u64,
}

/// Setup's results ([`Product::setup`]).
pub(super) struct Setup<D: Device> {
    /// nprod(i) of every row where C's row offsets go, then the
    /// distinct-row bits and the repeat bits (zero).
    pub(super) crpt: DeviceArray<D, u64>,
    /// The symbolic phase's counters, its first binning pass done.
    pub(super) meta: Meta<D>,
    /// What setup and that pass counted (`stats`: nprod(C) and the largest
    /// nprod(i)).
    pub(super) counts: Counts,
    /// B's runs in words of columns, when it may be packed.
    runs: Option<DeviceArray<D, u64>>,
    /// An event after setup, when timing.
    pub(super) after_setup: Option<D::Event>,
}

/// The bits after C's `m + 1` row offsets in `crpt`, one per row: set by
/// the shared symbolic kernels when nnz(i) = nprod(i) (every product of the
/// row has its own column), so the numeric kernels store each product's
/// value instead of adding it. Zero until then.
pub(super) fn distinct_rows<D: Device>(crpt: &DeviceArray<D, u64>, m: usize) -> DevicePtr {
    crpt.ptr_to(m + 1)
}

/// The bits after the distinct-row bits in `crpt`, one per row: set by the
/// symbolic kernels when a row has at least two products per entry of C,
/// so the numeric dense kernel reads a column's bit before setting it (most
/// products then skip an atomic). Zero until then.
pub(super) fn repeat_rows<D: Device>(crpt: &DeviceArray<D, u64>, m: usize) -> DevicePtr {
    crpt.ptr_to(m + 1 + m.div_ceil(64))
}

impl<D: Device, T: Scalar> Product<'_, D, T> {
    /// Setup, symbolic binning and kernels, scan, and nnz(C) read back (for
    /// plans).
    pub(super) fn symbolic(&self) -> Result<Symbolic<D>> {
        let Offsets { crpt, typical, .. } = self.symbolic_offsets(false)?;
        let mut nnz = [0u64];
        self.launcher.read(&crpt, self.m(), &mut nnz)?;
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
        let setup = self.setup(timed, false)?;
        self.count_rows(setup)
    }

    /// Setup (nprod(i) into C's row offsets, their total and largest, B's
    /// typical row) and the symbolic phase's first binning pass, counted
    /// and read back with the operands' pending checks (an error when they
    /// failed); with `sample`, for a product that may take the one pass,
    /// the one pass's sample too ([`Product::sample_with_setup`]).
    pub(super) fn setup(&self, timed: bool, sample: bool) -> Result<Setup<D>> {
        let (dev, m, l) = (self.device(), self.m(), &self.launcher);
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        // Row offsets, the distinct-row bits, the repeat bits, B's
        // bandwidths and the same-row bits in one allocation, all but the
        // offsets zeroed at once.
        let words = m.div_ceil(64);
        let crpt = l.alloc::<u64>(0, m + 1 + 3 * words + 3, "C row offsets")?;
        crpt.zero(dev, self.stream(0), m, 4 + 3 * words)?;
        let meta = Meta::new(l, m, l.table().symbolic.len())?;
        // Faults of the operands' checks, when pending: setup and the count
        // of B's runs return on one, and setup copies them beside the
        // counters.
        let faults = self.pending.map_or(DevicePtr(0), |p| p.faults());
        // Setup: SETUP_LANES lanes per row of A (a warp for long rows),
        // SETUP_SHORT_LANES when A's rows are short on average.
        let setup = SetupArgs {
            rows: SetupRows {
                arpt: a.rpt.ptr(),
                acol: a.col.ptr(),
                brpt: b.rpt.ptr(),
                crpt: crpt.ptr(),
                stats: meta.stats(),
                hist: meta.hist(),
                split: meta.split_rows(),
                nsplit: meta.nsplit(),
            },
            m: m as u32,
            faults,
            seen: meta.faults(),
            bcol: b.col.ptr(),
            k: self.b.nrows as u32,
            band: self.band(&crpt),
        };
        let (kernel, lanes) = if a.col.len() <= SETUP_SHORT_ROW * m {
            (Kernel::SetupShort, SETUP_SHORT_LANES)
        } else {
            (Kernel::Setup, SETUP_LANES)
        };
        let setup_grid = shape(l.grid(m * lanes, BLOCK as usize), BLOCK, 0);
        l.launch(0, kernel, setup_grid, &setup)?;
        if a.col.len() > SETUP_SPLIT {
            // Rows past SETUP_SPLIT entries (if any: the kernel reads how
            // many setup listed), spread over two blocks per multiprocessor
            // (which return at once when there are none).
            let grid = shape(2 * l.sms() as u32, BLOCK, 0);
            l.launch(0, Kernel::SetupSplit, grid, &setup.rows)?;
        }
        if self.counts_runs_once() {
            // The rows with the columns of the row before: their number
            // comes back with setup's counts.
            let args = SameRowsArgs {
                arpt: a.rpt.ptr(),
                acol: a.col.ptr(),
                m: m as u32,
                faults,
                same_rows: same_row_words(&crpt, m),
                nsame: meta.same_rows_total(),
            };
            // Every word at once: a word's lanes each follow a chain of
            // loads along a row.
            l.launch(
                0,
                Kernel::SameRows,
                self.word_warps(m, u32::MAX as usize),
                &args,
            )?;
        }
        if sample {
            self.sample_with_setup(&meta, &crpt)?;
        }
        // B's runs in words of columns, their total read back with setup's.
        let runs = if self.packing() {
            Some(self.count_runs(&meta, faults)?)
        } else {
            None
        };
        let after_setup = if timed {
            Some(dev.record(self.stream(0))?)
        } else {
            None
        };
        let counts = self.count_bins(&meta, &crpt, Phase::Symbolic, None)?;
        if let Some(p) = self.pending {
            if let Some(e) = p.error(l, &counts.faults)? {
                return Err(e);
            }
        }
        Ok(Setup {
            crpt,
            meta,
            counts,
            runs,
            after_setup,
        })
    }

    /// The symbolic kernels after [`Product::setup`], then the scan: C's
    /// row offsets.
    pub(super) fn count_rows(&self, setup: Setup<D>) -> Result<Offsets<D>> {
        let (m, l) = (self.m(), &self.launcher);
        let b = &*self.b.structure;
        let Setup {
            crpt,
            meta,
            counts,
            runs,
            after_setup,
        } = setup;
        let distinct = distinct_rows(&crpt, m);
        let table = l.table();
        let nbins = table.symbolic.len();
        if counts.stats[0] > 0 {
            // B packed, and its typical row (shorter: G follows it).
            let packed = match runs {
                Some(runs) if packs(counts.packed, b.col.len()) => Some((
                    self.pack(runs, counts.packed as usize)?,
                    (counts.typical as u128 * counts.packed as u128 / b.col.len() as u128).max(1)
                        as usize,
                )),
                _ => None,
            };
            self.fill_bins(&meta, &crpt, Phase::Symbolic, None)?;
            l.fork()?;
            let offsets = counts.offsets();
            for (order, (i, bin)) in table.symbolic.iter().enumerate().rev().enumerate() {
                let n = counts.sizes[i] as usize;
                if n == 0 {
                    continue;
                }
                let stream = Launcher::<D>::stream_of(order);
                let bins = meta.bins(offsets[i]);
                if self.symbolic_dense(i) {
                    let marks = [distinct, repeat_rows(&crpt, m)];
                    self.symbolic_dense_shared(stream, bins, n, &crpt, counts.typical, marks)?;
                    continue;
                }
                if bin.global() {
                    // The DCU table's global bin (DCU §5.4, kernel 8): on
                    // stream 0 (the largest bin comes first), where its
                    // scratch is allocated and freed.
                    debug_assert_eq!(stream, 0);
                    self.symbolic_global(&crpt, bins, n, counts.stats[1], counts.typical)?;
                    continue;
                }
                let packed = packed
                    .as_ref()
                    .filter(|_| kernels::symbolic_packed_fits(table, i));
                let (kernel, bytes, typical) = match packed {
                    Some((_, packed_typical)) => (
                        Kernel::SymbolicPackedBin(i),
                        kernels::symbolic_packed_bytes(table, i),
                        *packed_typical,
                    ),
                    None => (
                        Kernel::SymbolicBin(i),
                        kernels::symbolic_shared_bytes(table, i),
                        counts.typical,
                    ),
                };
                let g = self.group_size(typical, bin.row_threads);
                let mut rows = self.symbolic_rows(bins, n, &crpt, g);
                if let Some(((prpt, pcol), _)) = packed {
                    (rows.brpt, rows.bcol) = (prpt.ptr(), pcol.ptr());
                }
                let args = SymbolicBinArgs {
                    rows,
                    threshold: table.overflow_threshold(),
                    overflow: meta.overflow(),
                    noverflow: meta.noverflow(),
                    distinct_rows: distinct,
                    repeat_rows: repeat_rows(&crpt, m),
                    band: self.band(&crpt),
                };
                let blocks = blocks_for(n, bin.rows_per_block() as usize, usize::MAX);
                let grid = shape(blocks, bin.block_threads, bytes);
                l.launch(stream, kernel, grid, &args)?;
            }
            l.join()?;
            // A last bin counted with a bitmap has no overflow.
            let last_overflows = table.symbolic_overflows() && !self.symbolic_dense(nbins - 1);
            if last_overflows && counts.sizes[nbins - 1] > 0 {
                let overflow = meta.read(l)?.overflow as usize;
                if overflow > 0 {
                    let rows = meta.overflow();
                    self.symbolic_global(&crpt, rows, overflow, counts.stats[1], counts.typical)?;
                }
            }
        }
        drop(meta);
        if counts.same > 0 {
            // The rows that got no bin take their run's first row's count.
            let args = CopySameRowsArgs {
                crpt: crpt.ptr(),
                m: m as u32,
                same_rows: same_row_words(&crpt, m),
                distinct_rows: distinct,
                repeat_rows: repeat_rows(&crpt, m),
            };
            let grid = self.word_warps(m, l.sms() * 8);
            l.launch(0, Kernel::CopySameRows, grid, &args)?;
        }
        l.scan(crpt.ptr(), m + 1)?;
        Ok(Offsets {
            crpt,
            after_setup,
            typical: counts.typical,
            same_rows: counts.same,
        })
    }

    /// The grid of the same-row kernels over `rows` rows (of A, or of B):
    /// a warp a word of 32 rows, in blocks of [`BLOCK`] threads, at most
    /// `cap` blocks (the kernels stride over the words past them).
    pub(super) fn word_warps(&self, rows: usize, cap: usize) -> LaunchShape {
        let warp = self.device().properties().warp_width as usize;
        let n = rows.div_ceil(u32::BITS as usize) * warp;
        shape(blocks_for(n, BLOCK as usize, cap), BLOCK, 0)
    }

    /// The arguments every symbolic kernel over listed rows starts with:
    /// A's and B's structure, the `n` rows listed at `bins`, C's row
    /// offsets and G.
    pub(super) fn symbolic_rows(
        &self,
        bins: DevicePtr,
        n: usize,
        crpt: &DeviceArray<D, u64>,
        g: u32,
    ) -> SymbolicRows {
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        SymbolicRows {
            arpt: a.rpt.ptr(),
            acol: a.col.ptr(),
            brpt: b.rpt.ptr(),
            bcol: b.col.ptr(),
            bins,
            nrows: n as u32,
            crpt: crpt.ptr(),
            g,
        }
    }

    /// Whether the symbolic phase may pack B into words of columns
    /// (KokkosKernels §3.2; decided by [`packs`] once its runs are
    /// counted): under [`Accumulator::Packed`], outside a memory budget
    /// (packed B is not in its bound), and only when a bin that may run
    /// has a packed kernel.
    fn packing(&self) -> bool {
        let table = self.launcher.table();
        self.options.accumulator == Accumulator::Packed
            && self.options.memory_budget.is_none()
            && !self.b.structure.col.is_empty()
            && (0..table.symbolic.len())
                .any(|i| kernels::symbolic_packed_fits(table, i) && !self.symbolic_dense(i))
    }

    /// B's rows, as both packing passes take them.
    fn pack_rows(&self) -> PackRows {
        let b = &*self.b.structure;
        PackRows {
            brpt: b.rpt.ptr(),
            bcol: b.col.ptr(),
            kb: self.b.nrows as u32,
        }
    }

    /// Launches the count of B's runs in words of 32 columns on stream 0:
    /// per row into the returned array (`kb + 1` entries, the last zero,
    /// for the scan), their total into `meta`; nothing when the operands'
    /// pending checks faulted (`faults`, null when none are pending).
    fn count_runs(&self, meta: &Meta<D>, faults: DevicePtr) -> Result<DeviceArray<D, u64>> {
        let (l, kb) = (&self.launcher, self.b.nrows);
        let runs = l.alloc::<u64>(0, kb + 1, "packed row offsets of B")?;
        runs.zero(self.device(), self.stream(0), kb, 1)?;
        let args = PackCountArgs {
            rows: self.pack_rows(),
            prpt: runs.ptr(),
            total: meta.packed_total(),
            faults,
        };
        l.launch(
            0,
            Kernel::PackCount,
            shape(l.grid(kb, BLOCK as usize), BLOCK, 0),
            &args,
        )?;
        Ok(runs)
    }

    /// B packed into its `total` runs (counted per row in `runs`): row
    /// offsets (the scan of `runs`) and entries, a word and its mask each.
    fn pack(&self, runs: DeviceArray<D, u64>, total: usize) -> Result<PackedB<D>> {
        let (l, kb) = (&self.launcher, self.b.nrows);
        l.scan(runs.ptr(), kb + 1)?;
        let pcol = l.alloc::<u64>(0, total, "packed columns of B")?;
        let args = PackFillArgs {
            rows: self.pack_rows(),
            prpt: runs.ptr(),
            pcol: pcol.ptr(),
        };
        l.launch(
            0,
            Kernel::PackFill,
            shape(l.grid(kb, BLOCK as usize), BLOCK, 0),
            &args,
        )?;
        Ok((runs, pcol))
    }

    /// Counts the `n` rows listed at `rows` (those the last shared bin gave
    /// up on, or a global bin's) on stream 0: when C is narrow enough (or
    /// [`LongRows::Dense`]), a bitmap per row, each row split into slices of
    /// its entries of A over several blocks (equal stretches, or about equal
    /// products under [`SliceSplit::Products`](super::SliceSplit::Products);
    /// batches of rows within the global budget); else a hash table of `2·nprod` per block (OpSparse
    /// §5.6.1, kernel 8; DCU §5.4).
    fn symbolic_global(
        &self,
        crpt: &DeviceArray<D, u64>,
        bins: DevicePtr,
        n: usize,
        max_nprod: u64,
        typical: usize,
    ) -> Result<()> {
        let l = &self.launcher;
        let threads = 1024u32.min(self.device().properties().max_threads_per_block);
        let ncols = self.b.ncols;
        let words = bitmap_words(ncols);
        let blocks = n.min(l.sms() * 2).max(1);
        let rows = self.symbolic_rows(bins, n, crpt, self.group_size(typical, threads));
        let (rows_at_once, slices) = self.dense_batches(n, max_nprod, 4 * words)?;
        let dense = match self.options.long_rows {
            LongRows::Auto => (ncols as u64) <= 64 * max_nprod,
            LongRows::Dense | LongRows::Ranked => true,
            LongRows::SortedHash | LongRows::InPlaceHash => false,
        };
        if dense && rows_at_once >= 1 {
            let bits = l.alloc::<u32>(0, rows_at_once * words, "symbolic dense bitmaps")?;
            let tickets = l.alloc::<u32>(0, rows_at_once, "symbolic dense tickets")?;
            bits.zero(self.device(), self.stream(0), 0, bits.len())?;
            tickets.zero(self.device(), self.stream(0), 0, tickets.len())?;
            let mut args = SymbolicDenseArgs {
                rows,
                bits_all: bits.ptr(),
                words: words as u32,
                slices,
                tickets: tickets.ptr(),
                repeat_rows: repeat_rows(crpt, self.m()),
                bounds: DevicePtr(0),
            };
            let bounds = self.slice_bounds(0, bins, n, slices)?;
            // Batches of rows; the kernel leaves bitmaps and tickets zero.
            for start in (0..n).step_by(rows_at_once) {
                let count = (n - start).min(rows_at_once);
                args.rows.bins = bins.add(4 * start as u64);
                args.rows.nrows = count as u32;
                args.bounds = bounds_at(&bounds, start, slices);
                let grid = (count as u64 * slices as u64) as u32;
                l.launch(0, Kernel::SymbolicDense, shape(grid, threads, 0), &args)?;
            }
            if let Some(b) = bounds {
                l.release(b);
            }
            l.release(bits);
            l.release(tickets);
        } else {
            let tsize = (2 * max_nprod.min(ncols as u64).max(1)).next_power_of_two() as usize;
            let table = l.alloc::<u32>(0, blocks * tsize, "symbolic global hash tables")?;
            let args = SymbolicGlobalArgs {
                rows,
                table_all: table.ptr(),
                tsize: tsize as u32,
            };
            let grid = shape(blocks as u32, threads, 0);
            l.launch(0, Kernel::SymbolicGlobal, grid, &args)?;
            l.release(table);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn b_is_packed_when_it_loses_more_than_15_percent_of_its_entries() {
        assert!(super::packs(84, 100));
        assert!(!super::packs(85, 100));
        assert!(!super::packs(100, 100));
        assert!(!super::packs(0, 0));
        assert!(super::packs(u64::MAX / 2, usize::MAX));
    }
}
