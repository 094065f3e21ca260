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

/// Most rows sampled for [`SymbolicMode::Auto`]'s estimate of the
/// compression ratio.
const SAMPLE_ROWS: usize = 4096;
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
/// most 32 products: batched 8 to a warp, they gain most), never for rows
/// of a warp (the rank sort of up to 8 products a lane costs more than the
/// symbolic phase saves), and between them when the compression ratio is
/// at most [`ONE_PASS_MAX_COMPRESSION`] (the one pass sorts every product,
/// the numeric phase only the row's entries). Measured on an H200
/// (`docs/benchmarks/one-pass-h200-2026-11-27.md`, f64, against the
/// symbolic phase; the one pass forced for all): Erdős–Rényi 2²⁰ × 4 (4
/// lanes) 1.63× faster, the AMG pairs Poisson 64³ and 96³ · P (4 lanes,
/// compression 3.3) 1.03× and 1.31×, luxembourg_osm 1.23×; Erdős–Rényi
/// 2²⁰ × 8 and 2²² × 8 (8 lanes, compression 1.00) 1.11× and 1.49×; the
/// 7-point stencils 128³ and Poisson 96³ (8 lanes, compression 1.96)
/// 0.97× and 0.66×; Erdős–Rényi 2¹⁸ × 16 (a warp, 1.00) 0.70×.
pub fn one_pass_pays(
    lanes: u32,
    warp: u32,
    compression: impl FnOnce() -> Result<f64>,
) -> Result<bool> {
    Ok(match lanes {
        4 => true,
        l if l >= warp => false,
        _ => compression()? <= ONE_PASS_MAX_COMPRESSION,
    })
}

/// The sampled compression ratio up to which [`one_pass_pays`] takes the
/// one pass for rows of 8 or 16 lanes.
pub const ONE_PASS_MAX_COMPRESSION: f64 = 1.5;

impl<D: Device, T: Scalar> Product<'_, D, T> {
    /// Whether this product runs in one pass, from setup's `stats`
    /// (nprod(C) and the largest nprod(i)): under [`SymbolicMode::Bound`]
    /// or [`SymbolicMode::Auto`] (when [`one_pass_pays`], sampling the
    /// rows when it asks), when every row
    /// has at most [`DISTINCT_PER_LANE`] products per lane of a warp and
    /// C's arrays for nprod(C) entries fit a quarter of the free device
    /// memory.
    pub(super) fn one_pass_chosen(&self, setup: &Setup<D>) -> Result<bool> {
        let [nprod, longest] = setup.counts.stats;
        let warp = self.device().properties().warp_width;
        if nprod == 0 || longest > u64::from(DISTINCT_PER_LANE * warp) {
            return Ok(false);
        }
        let lanes = self.one_pass_lanes(longest);
        let wanted = match self.options.symbolic {
            SymbolicMode::Exact => false,
            SymbolicMode::Bound => true,
            SymbolicMode::Auto => {
                let compression = || -> Result<f64> {
                    // Sampled with setup unless the operands' checks were
                    // pending (only now are their arrays known sound) or
                    // the sizes said no row could take the one pass.
                    let [sampled, entries] = if !self.samples_with_setup() {
                        self.sample(&setup.meta, &setup.crpt)?;
                        setup.meta.read(&self.launcher)?.sample
                    } else {
                        setup.counts.sample
                    };
                    Ok(sampled as f64 / entries.max(1) as f64)
                };
                one_pass_pays(lanes, warp, compression)?
            }
        };
        if !wanted {
            return Ok(false);
        }
        let bytes = nprod as u128 * (4 + size_of::<T>()) as u128;
        Ok(bytes <= self.launcher.global_budget()? as u128)
    }

    /// Under [`SymbolicMode::Auto`] and with no checks of the operands
    /// pending, [`Product::sample`] right after setup: the sample comes
    /// back with setup's counters.
    pub(super) fn sample_with_setup(
        &self,
        meta: &Meta<D>,
        crpt: &DeviceArray<D, u64>,
    ) -> Result<()> {
        if self.samples_with_setup() {
            self.sample(meta, crpt)?;
        }
        Ok(())
    }

    /// Whether [`Product::sample_with_setup`] launches the sample: under
    /// [`SymbolicMode::Auto`], with no checks pending, unless A's and B's
    /// sizes put a row's products, nnz(A)·nnz(B) / (A's rows · B's rows)
    /// on average, past [`SAMPLE_PAST`] times the most the one pass takes
    /// ([`DISTINCT_PER_LANE`] a lane of a warp): the largest row then most
    /// likely has more too, and the sample (a launch even when its kernel
    /// finds nothing to do: bcsstk33's product 3% slower on an H200,
    /// `docs/benchmarks/plain-product-before-after-semirings-h200-2026-11-29.md`)
    /// is not launched. Where the average misleads and a row could take
    /// the one pass after all, [`Product::one_pass_chosen`] samples then,
    /// with a read-back of its own.
    fn samples_with_setup(&self) -> bool {
        let (a, b) = (self.a, self.b);
        let most = u128::from(DISTINCT_PER_LANE * self.device().properties().warp_width);
        let average =
            a.nnz as u128 * b.nnz as u128 / (a.nrows.max(1) as u128 * b.nrows.max(1) as u128);
        self.options.symbolic == SymbolicMode::Auto
            && self.pending.is_none()
            && average <= SAMPLE_PAST * most
    }

    /// Launches the sample of up to [`SAMPLE_ROWS`] rows spread evenly
    /// over A's (one in [`ROWS_PER_SAMPLE`] or more) ([`Kernel::OnePassSample`], a warp a row, rows of more
    /// products than the one pass takes left out, and nothing sampled when
    /// setup's largest nprod(i) leaves [`one_pass_pays`] no use for it:
    /// rows of 4 lanes or of a warp) after setup, which wrote
    /// each row's products into `crpt` and their largest into `meta`; the
    /// sample's products and entries go to `meta`'s sample words.
    fn sample(&self, meta: &Meta<D>, crpt: &DeviceArray<D, u64>) -> Result<()> {
        let (l, m) = (&self.launcher, self.m());
        if m == 0 {
            return Ok(());
        }
        let nsample = (m / ROWS_PER_SAMPLE).clamp(1, SAMPLE_ROWS);
        let args = OnePassSampleArgs {
            ops: self.one_pass_operands(),
            nprod: crpt.ptr(),
            stats: meta.stats(),
            nsample: nsample as u32,
            totals: meta.sample(),
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

    /// C in one pass after `setup`: its arrays allocated for nprod(C)
    /// entries and shortened to nnz(C), which is read back.
    pub(super) fn one_pass(&self, setup: Setup<D>) -> Result<OnePassC<D, T>> {
        let (dev, l, m) = (self.device(), &self.launcher, self.m());
        let nprod = setup.counts.stats[0] as usize;
        let crpt = setup.crpt;
        let mut ccol = l.alloc::<u32>(0, nprod, "C column indices")?;
        let mut cval = l.alloc::<T>(0, nprod, "C values")?;
        let lanes = self.one_pass_lanes(setup.counts.stats[1]);
        let groups = (THREADS / lanes) as usize;
        let ntiles = m.div_ceil(groups);
        let tiles = l.alloc::<u64>(0, ntiles + 1, "one-pass tiles")?;
        tiles.zero(dev, self.stream(0), 0, ntiles + 1)?;
        if let Some(ready) = self.values_ready {
            dev.wait(self.stream(0), ready)?;
        }
        let args = NumericOnePassArgs {
            ops: self.one_pass_operands(),
            crpt: crpt.ptr(),
            ccol: ccol.ptr(),
            cval: cval.ptr(),
            tiles: tiles.ptr(),
        };
        let kernel = Kernel::NumericOnePass(self.lanes_code(lanes));
        let grid = shape(ntiles as u32, THREADS, self.one_pass_bytes(lanes));
        l.launch(0, kernel, grid, &args)?;
        l.release(tiles);
        let mut nnz = [0u64];
        l.read(&crpt, m, &mut nnz)?;
        let nnz = nnz[0] as usize;
        ccol.truncate(nnz);
        cval.truncate(nnz);
        Ok((crpt, ccol, cval, nnz))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_lanes_always_a_warp_never_and_between_by_compression() {
        let unasked = || -> Result<f64> { panic!("sampled") };
        assert!(one_pass_pays(4, 32, unasked).unwrap());
        assert!(!one_pass_pays(32, 32, unasked).unwrap());
        assert!(!one_pass_pays(64, 64, unasked).unwrap());
        for lanes in [8, 16] {
            assert!(one_pass_pays(lanes, 32, || Ok(1.0)).unwrap());
            assert!(one_pass_pays(lanes, 32, || Ok(ONE_PASS_MAX_COMPRESSION)).unwrap());
            assert!(!one_pass_pays(lanes, 32, || Ok(1.96)).unwrap());
        }
        assert!(one_pass_pays(32, 64, || Ok(1.2)).unwrap());
        let failed = || -> Result<f64> { Err(crate::error::Error::Unsupported("x".into())) };
        assert!(one_pass_pays(8, 32, failed).is_err());
    }
}
