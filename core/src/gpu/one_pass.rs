//! Products with no symbolic phase (see [`SymbolicMode::Bound`]): every
//! row's products, nprod(i), bound its entries, so C's arrays are
//! allocated for nprod(C) entries after setup and one kernel computes,
//! counts and places every row (`one_pass.cuh`: 4 to a warp's lanes per
//! row, as few as hold its products, so that short rows are batched
//! several to a warp; a tile of rows per block placed by a single-pass
//! scan with decoupled look-back,
//! Merrill and Garland 2016, §4). The one-phase method with upper-bound
//! row sizes of Du et al., "OpSparse", §2.2.

use super::config::SymbolicMode;
use super::constants::DISTINCT_PER_LANE;
use super::kernels::{Kernel, NumericOnePassArgs, OnePassOperands, OnePassSampleArgs};
use super::launch::shape;
use super::memory::DeviceArray;
use super::meta::Meta;
use super::product::Product;
use super::symbolic::Setup;
use crate::device::Device;
use crate::error::Result;
use crate::scalar::Scalar;

/// Threads of a block of the one-pass kernels: a tile of rows, one per
/// group of lanes.
const THREADS: u32 = 256;

/// C computed in one pass: row offsets (`m + 1`), column indices and
/// values (`nnz` each), nnz(C).
pub(super) type OnePassC<D, T> = (
    DeviceArray<D, u64>,
    DeviceArray<D, u32>,
    DeviceArray<D, T>,
    usize,
);

/// One run of the one pass: C's column indices and values (room for the
/// entries it was given) and nnz(C) as its scan counted it.
type Pass<D, T> = (DeviceArray<D, u32>, DeviceArray<D, T>, usize);

/// Most rows sampled for [`SymbolicMode::Auto`]'s choice by the
/// compression ratio: 1,024 cost Poisson 96³'s product (which the sample
/// sends to the symbolic phase) about 0.005 ms of setup on an H200, 4,096
/// about 0.012 ms, its whole product then 1.03–1.04 ms against 1.01–1.03
/// without a sample (2026-11-29, four rounds alternated; the choices on
/// every product measured are the same).
const DECISION_SAMPLE_ROWS: usize = 1024;
/// Most rows sampled where C's arrays are sized from the sample
/// ([`SymbolicMode::Estimate`]): more rows, a closer estimate.
const ESTIMATE_SAMPLE_ROWS: usize = 4096;
/// A's rows per sampled row, at least: a small product is not computed
/// twice to choose how to compute it.
const ROWS_PER_SAMPLE: usize = 16;
/// How far past the one pass's longest row the estimated average row's
/// products must lie for [`Product::sample_with_setup`] to skip the sample.
const SAMPLE_PAST: u128 = 2;

/// Whether [`SymbolicMode::Auto`] takes the one pass for rows computed
/// `lanes` lanes a row on a device of `warp`-lane warps, whose sampled
/// compression ratio `compression` gives (asked only when the answer
/// depends on it; its errors are returned): always for rows of 4 lanes (at
/// most 32 products: batched 8 to a warp, they gain most); for rows of 8
/// or 16 lanes when the compression ratio is at most
/// [`ONE_PASS_MAX_COMPRESSION`], for rows of a warp when it is at most
/// [`ONE_PASS_MAX_COMPRESSION_WARP`] (the one pass ranks every product
/// against the row's others, the numeric phase only the row's entries:
/// where many products fall on one column, and the longer the rows, the
/// symbolic phase pays). Measured on an H200
/// (`docs/benchmarks/one-pass-places-h200-2026-11-30.md`, f64, the one
/// pass forced against the symbolic phase): Poisson 64³ (8 lanes,
/// compression 1.96) 1.32× faster; Erdős–Rényi 2²⁰ × 6 (8 lanes, 1.00)
/// 1.36×, 2¹⁸ × 10 (16 lanes) 1.45×, 2¹⁹ × 14 (a warp) 1.39×; the square
/// of Poisson 64³ times its prolongation (16 lanes, compression 6.6)
/// 0.80×; that square times Poisson 64³ and 96³'s times 96³ (a warp,
/// 2.78) 0.61× and 0.58×.
pub fn one_pass_pays(
    lanes: u32,
    warp: u32,
    compression: impl FnOnce() -> Result<f64>,
) -> Result<bool> {
    Ok(match lanes {
        4 => true,
        l if l >= warp => compression()? <= ONE_PASS_MAX_COMPRESSION_WARP,
        _ => compression()? <= ONE_PASS_MAX_COMPRESSION,
    })
}

/// The sampled compression ratio up to which [`one_pass_pays`] takes the
/// one pass for rows of 8 or 16 lanes.
pub const ONE_PASS_MAX_COMPRESSION: f64 = 2.5;

/// The sampled compression ratio up to which [`one_pass_pays`] takes the
/// one pass for rows of a warp.
pub const ONE_PASS_MAX_COMPRESSION_WARP: f64 = 1.25;

/// The room for C's entries that [`SymbolicMode::Estimate`] allocates:
/// `nprod` (nprod(C)) times the sampled rows' entries over their products
/// (`sample`: products, entries), times `percent` / 100, each step
/// rounded up, at most `nprod`; `nprod` itself when nothing was sampled.
pub fn estimated_room(nprod: u64, sample: [u64; 2], percent: u32) -> u64 {
    let [products, entries] = sample;
    if products == 0 {
        return nprod;
    }
    // Below 2^128 and 2^96: a sample's entries never exceed its products.
    let scaled = (nprod as u128 * entries as u128).div_ceil(products as u128);
    let wanted = scaled.saturating_mul(u128::from(percent)).div_ceil(100);
    wanted.min(nprod as u128) as u64
}

/// How one run of the one pass went: whether C's room came from an
/// estimate, and whether the estimate fell short so that it ran again.
#[derive(Clone, Copy, Debug)]
pub(super) struct OnePassRun {
    pub(super) estimated: bool,
    pub(super) rerun: bool,
}

impl<D: Device, T: Scalar> Product<'_, D, T> {
    /// The room for C's entries when this product runs in one pass, from
    /// setup's `stats` (nprod(C) and the largest nprod(i)); `None` when it
    /// runs the symbolic phase. The one pass can run when every row has at
    /// most [`DISTINCT_PER_LANE`] products per lane of a warp and C's
    /// arrays for the room fit a quarter of the free device memory; it
    /// does under [`SymbolicMode::Bound`] (room nprod(C)),
    /// [`SymbolicMode::Estimate`] (room [`estimated_room`]) and
    /// [`SymbolicMode::Auto`] when [`one_pass_pays`] (sampling the rows
    /// when it asks): room nprod(C), or the estimate where only that fits;
    /// at most `keep` entries a row where [`Product::prune`] keeps so many.
    pub(super) fn one_pass_room(&self, setup: &Setup<D>) -> Result<Option<(u64, bool)>> {
        let [nprod, longest] = setup.counts.stats;
        let warp = self.device().properties().warp_width;
        if nprod == 0 || longest > u64::from(DISTINCT_PER_LANE * warp) {
            return Ok(None);
        }
        let lanes = self.one_pass_lanes(longest);
        let percent = self.options.estimate_percent;
        let fits = |room: u64| -> Result<bool> {
            let bytes = room as u128 * (4 + size_of::<T>()) as u128;
            Ok(bytes <= self.launcher.global_budget()? as u128)
        };
        // Rows pruned to their `keep` largest need no more.
        let most = match self.prune {
            Some(p) if p.keep != u32::MAX => u64::from(p.keep) * self.m() as u64,
            _ => u64::MAX,
        };
        let estimate = || -> Result<u64> {
            let room = estimated_room(nprod, self.sampled(setup, true)?, percent);
            Ok(room.min(most))
        };
        let (room, estimated) = match self.options.symbolic {
            SymbolicMode::Exact => return Ok(None),
            SymbolicMode::Bound => (nprod.min(most), false),
            SymbolicMode::Estimate => (estimate()?, true),
            SymbolicMode::Auto => {
                let compression = || -> Result<f64> {
                    let [sampled, entries] = self.sampled(setup, false)?;
                    Ok(sampled as f64 / entries.max(1) as f64)
                };
                if !one_pass_pays(lanes, warp, compression)? {
                    return Ok(None);
                }
                if fits(nprod.min(most))? {
                    (nprod.min(most), false)
                } else {
                    (estimate()?, true)
                }
            }
        };
        Ok(fits(room)?.then_some((room, estimated)))
    }

    /// The products and entries of the one pass's sample: those read back
    /// with setup's counters when [`Product::sample_with_setup`] launched
    /// it (unless it found nothing and `every` asks for a sample whatever
    /// setup's stats say), else a sample launched now and read back. The
    /// sample's words hold nothing before a launch that sampled no row, so
    /// a second launch adds to nothing.
    fn sampled(&self, setup: &Setup<D>, every: bool) -> Result<[u64; 2]> {
        let with_setup = setup.counts.sample;
        if self.samples_with_setup() && (with_setup[0] > 0 || !every) {
            return Ok(with_setup);
        }
        // Sampled now: the operands' checks were pending (only now are
        // their arrays known sound), the sizes said no row could take the
        // one pass, or setup's stats left the sample nothing to choose.
        self.sample(&setup.meta, &setup.crpt, every)?;
        Ok(setup.meta.read(&self.launcher)?.sample)
    }

    /// Under [`SymbolicMode::Auto`] or [`SymbolicMode::Estimate`] and
    /// with no checks of the operands pending, [`Product::sample`] right
    /// after setup (every row's sample under `Estimate`, which sizes C from
    /// it): the sample comes back with setup's counters.
    pub(super) fn sample_with_setup(
        &self,
        meta: &Meta<D>,
        crpt: &DeviceArray<D, u64>,
    ) -> Result<()> {
        if self.samples_with_setup() {
            let every = self.options.symbolic == SymbolicMode::Estimate;
            self.sample(meta, crpt, every)?;
        }
        Ok(())
    }

    /// Whether [`Product::sample_with_setup`] launches the sample: under
    /// [`SymbolicMode::Auto`] or [`SymbolicMode::Estimate`], with no
    /// checks pending, unless A's and B's
    /// sizes put a row's products, nnz(A)·nnz(B) / (A's rows · B's rows)
    /// on average, past [`SAMPLE_PAST`] times the most the one pass takes
    /// ([`DISTINCT_PER_LANE`] a lane of a warp): the largest row then most
    /// likely has more too, and the sample (a launch even when its kernel
    /// finds nothing to do: bcsstk33's product 3% slower on an H200,
    /// `docs/benchmarks/plain-product-before-after-semirings-h200-2026-11-29.md`)
    /// is not launched. Where the average misleads and a row could take
    /// the one pass after all, [`Product::one_pass_room`] samples then,
    /// with a read-back of its own.
    fn samples_with_setup(&self) -> bool {
        let (a, b) = (self.a, self.b);
        let most = u128::from(DISTINCT_PER_LANE * self.device().properties().warp_width);
        let average =
            a.nnz as u128 * b.nnz as u128 / (a.nrows.max(1) as u128 * b.nrows.max(1) as u128);
        matches!(
            self.options.symbolic,
            SymbolicMode::Auto | SymbolicMode::Estimate
        ) && self.pending.is_none()
            && average <= SAMPLE_PAST * most
    }

    /// Launches the sample of up to [`DECISION_SAMPLE_ROWS`] rows
    /// ([`ESTIMATE_SAMPLE_ROWS`] with `every`) spread evenly
    /// over A's (one in [`ROWS_PER_SAMPLE`] or more) ([`Kernel::OnePassSample`], a warp a row, rows of more
    /// products than the one pass takes left out, and nothing sampled when
    /// setup's largest nprod(i) leaves [`one_pass_pays`] no use for it:
    /// rows of 4 lanes, unless `every`) after setup, which wrote
    /// each row's products into `crpt` and their largest into `meta`; the
    /// sample's products and entries go to `meta`'s sample words.
    fn sample(&self, meta: &Meta<D>, crpt: &DeviceArray<D, u64>, every: bool) -> Result<()> {
        let (l, m) = (&self.launcher, self.m());
        if m == 0 {
            return Ok(());
        }
        let most = if every {
            ESTIMATE_SAMPLE_ROWS
        } else {
            DECISION_SAMPLE_ROWS
        };
        let nsample = (m / ROWS_PER_SAMPLE).clamp(1, most);
        let args = OnePassSampleArgs {
            ops: self.one_pass_operands(),
            nprod: crpt.ptr(),
            stats: meta.stats(),
            nsample: nsample as u32,
            totals: meta.sample(),
            every: u32::from(every),
        };
        let warp = self.device().properties().warp_width;
        let groups = (THREADS / warp) as usize;
        let blocks = nsample.div_ceil(groups) as u32;
        let grid = shape(blocks, THREADS, self.one_pass_bytes(warp));
        l.launch(0, Kernel::OnePassSample, grid, &args)
    }

    /// A, B and A's rows, as both one-pass kernels take them.
    fn one_pass_operands(&self) -> OnePassOperands {
        let (a, b) = (&*self.a.structure, &*self.b.structure);
        OnePassOperands {
            arpt: a.rpt.ptr(),
            acol: a.col.ptr(),
            aval: self.a.val.ptr(),
            brpt: b.rpt.ptr(),
            bcol: b.col.ptr(),
            bval: self.b.val.ptr(),
            m: self.m() as u32,
        }
    }

    /// Dynamic shared memory of a block of the one-pass kernels with
    /// `lanes` lanes a row: each group's products twice and four slots,
    /// keys and values, and a count per group.
    fn one_pass_bytes(&self, lanes: u32) -> usize {
        let groups = (THREADS / lanes) as usize;
        let stride = 2 * (DISTINCT_PER_LANE * lanes) as usize + 4;
        groups * (stride * (4 + size_of::<T>()) + 8)
    }

    /// The kernels' name for `lanes` lanes a row: 0 for a warp.
    fn lanes_code(&self, lanes: u32) -> u32 {
        if lanes == self.device().properties().warp_width {
            0
        } else {
            lanes
        }
    }

    /// Lanes a row for rows of at most `longest` products: the fewest of
    /// 4, 8, 16 and a warp that hold [`DISTINCT_PER_LANE`] products each.
    fn one_pass_lanes(&self, longest: u64) -> u32 {
        let warp = self.device().properties().warp_width;
        [4, 8, 16]
            .into_iter()
            .find(|&g| u64::from(DISTINCT_PER_LANE * g) >= longest && g < warp)
            .unwrap_or(warp)
    }

    /// C in one pass after `setup` into arrays of `room` entries (from
    /// [`Product::one_pass_room`], `estimated` when sized by
    /// [`estimated_room`]), each row pruned as [`Product::prune`] says
    /// before it is counted, shortened to nnz(C), which is read back; when
    /// nnz(C) exceeds the room, again into arrays of exactly nnz(C).
    pub(super) fn one_pass(
        &self,
        setup: Setup<D>,
        (room, estimated): (u64, bool),
    ) -> Result<(OnePassC<D, T>, OnePassRun)> {
        let (dev, l, m) = (self.device(), &self.launcher, self.m());
        let crpt = setup.crpt;
        let lanes = self.one_pass_lanes(setup.counts.stats[1]);
        let groups = (THREADS / lanes) as usize;
        let ntiles = m.div_ceil(groups);
        let tiles = l.alloc::<u64>(0, ntiles + 1, "one-pass tiles")?;
        if let Some(ready) = self.values_ready {
            dev.wait(self.stream(0), ready)?;
        }
        let grid = shape(ntiles as u32, THREADS, self.one_pass_bytes(lanes));
        let (below, keep) = self.prune.map_or((None, u32::MAX), |p| (p.below, p.keep));
        let kernel = if below.is_some() || keep != u32::MAX {
            Kernel::NumericOnePassPruned(self.lanes_code(lanes))
        } else {
            Kernel::NumericOnePass(self.lanes_code(lanes))
        };
        let pass = |room: usize| -> Result<Pass<D, T>> {
            let ccol = l.alloc::<u32>(0, room, "C column indices")?;
            let cval = l.alloc::<T>(0, room, "C values")?;
            tiles.zero(dev, self.stream(0), 0, ntiles + 1)?;
            let args = NumericOnePassArgs {
                ops: self.one_pass_operands(),
                crpt: crpt.ptr(),
                ccol: ccol.ptr(),
                cval: cval.ptr(),
                tiles: tiles.ptr(),
                room: room as u64,
                below: below.unwrap_or(0),
                has_below: u32::from(below.is_some()),
                keep,
            };
            l.launch(0, kernel, grid, &args)?;
            let mut nnz = [0u64];
            l.read(&crpt, m, &mut nnz)?;
            Ok((ccol, cval, nnz[0] as usize))
        };
        let (mut ccol, mut cval, nnz) = pass(room as usize)?;
        let rerun = nnz > room as usize;
        if rerun {
            l.release(ccol);
            l.release(cval);
            (ccol, cval, _) = pass(nnz)?;
        }
        l.release(tiles);
        ccol.truncate(nnz);
        cval.truncate(nnz);
        Ok(((crpt, ccol, cval, nnz), OnePassRun { estimated, rerun }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_lanes_always_and_longer_rows_by_compression() {
        let unasked = || -> Result<f64> { panic!("sampled") };
        assert!(one_pass_pays(4, 32, unasked).unwrap());
        for lanes in [8, 16] {
            assert!(one_pass_pays(lanes, 32, || Ok(1.0)).unwrap());
            assert!(one_pass_pays(lanes, 32, || Ok(1.96)).unwrap());
            assert!(one_pass_pays(lanes, 32, || Ok(ONE_PASS_MAX_COMPRESSION)).unwrap());
            assert!(!one_pass_pays(lanes, 32, || Ok(3.3)).unwrap());
        }
        for warp in [32, 64] {
            assert!(one_pass_pays(warp, warp, || Ok(1.0)).unwrap());
            assert!(!one_pass_pays(warp, warp, || Ok(1.5)).unwrap());
        }
        assert!(one_pass_pays(32, 64, || Ok(2.0)).unwrap());
        let failed = || -> Result<f64> { Err(crate::error::Error::Unsupported("x".into())) };
        assert!(one_pass_pays(8, 32, failed).is_err());
    }

    #[test]
    fn room_scales_nprod_by_the_sampled_ratio_and_the_margin() {
        // Sampled compression 2: half of nprod, a quarter more, rounded up.
        assert_eq!(estimated_room(1000, [400, 200], 125), 625);
        assert_eq!(estimated_room(1001, [400, 200], 100), 501);
        // Never past nprod; nprod when nothing was sampled.
        assert_eq!(estimated_room(1000, [100, 100], 125), 1000);
        assert_eq!(estimated_room(1000, [0, 0], 125), 1000);
        // No room at all when asked for none: every entry overflows.
        assert_eq!(estimated_room(1000, [400, 200], 0), 0);
        // No overflow of the product in u64.
        assert_eq!(
            estimated_room(u64::MAX / 2, [u64::MAX / 2, u64::MAX / 4], 100),
            u64::MAX / 4
        );
    }
}
