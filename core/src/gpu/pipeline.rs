//! The sequence of phases of one product (OpSparse §5, Fig. 2): setup →
//! symbolic binning → symbolic kernels → scan (`symbolic.rs`), then numeric
//! binning → numeric kernels (`numeric.rs`), timed by device events; or
//! only the numeric phases, from a plan's symbolic result.

use super::checks::check_grid;
use super::kernels::{DevicePtr, Kernel, NarrowOffsetsArgs, Phase};
use super::launch::Launcher;
use super::matrix::{GpuMatrix, GpuPlan, PhaseTimes, Structure};
use super::memory::DeviceArray;
use super::meta::{Counts, Meta};
use super::numeric::COut;
use super::one_pass::OnePassRun;
use super::product::{NumericBinning, Product};
use super::symbolic::{distinct_rows, repeat_rows, Offsets};
use crate::device::Device;
use crate::error::Result;
use crate::scalar::Scalar;
use std::sync::Arc;

impl<D: Device, T: Scalar> Product<'_, D, T> {
    /// The whole product (from `plan`'s symbolic result when given), with
    /// the phase times: [`Product::enqueue`], then a wait for its end.
    pub(super) fn multiply(
        &self,
        plan: Option<&GpuPlan<D, T>>,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        let run = self.enqueue(plan, false)?;
        let times = run.events.times(self.device())?;
        Ok((run.c, times))
    }

    /// The whole product (from `plan`'s symbolic result when given) up to
    /// its last kernel, without waiting for it: C (complete once
    /// `PhaseEvents::done` has completed), its row offsets narrowed to
    /// int32 when `int32_offsets` and nnz(C) fits, and the phases' events
    /// on stream 0. The host still waits inside for what it must read
    /// (bin counts, nnz(C)).
    pub(super) fn enqueue(
        &self,
        plan: Option<&GpuPlan<D, T>>,
        int32_offsets: bool,
    ) -> Result<Enqueued<D, T>> {
        let (dev, s0) = (self.device(), self.stream(0));
        let start = dev.record(s0)?;
        let nbins = self.launcher.table().numeric.len();
        let mut one_pass = None;
        let mut same_rows = 0;
        let (crpt, ccol, cval, nnz, after_setup, before_numeric) = match plan {
            Some(p) => {
                let before_numeric = dev.record(s0)?;
                let meta = Meta::new(&self.launcher, self.m(), nbins)?;
                let binning = NumericBinning {
                    distinct: distinct_rows(&p.crpt, self.m()),
                    typical: p.typical,
                    same_rows: DevicePtr(0),
                    b_same_rows: DevicePtr(0),
                    band: DevicePtr(0),
                };
                let mut counts = self.count_bins(&meta, &p.crpt, Phase::Numeric, Some(binning))?;
                counts.nnz = p.nnz as u64;
                let (ccol, cval, nnz) = self.numeric_into(&p.crpt, binning, meta, counts)?;
                (p.crpt.clone(), ccol, cval, nnz, None, before_numeric)
            }
            None => {
                let mut setup = self.setup(true, true)?;
                if let Some(room) = self.one_pass_room(&setup)? {
                    let after_setup = setup.after_setup.take();
                    let before_numeric = dev.record(s0)?;
                    let ((crpt, ccol, cval, nnz), run) = self.one_pass(setup, room)?;
                    one_pass = Some(run);
                    (Arc::new(crpt), ccol, cval, nnz, after_setup, before_numeric)
                } else {
                    let offsets = self.count_rows(setup)?;
                    same_rows = offsets.same_rows;
                    let Offsets {
                        crpt,
                        after_setup,
                        typical,
                        ..
                    } = offsets;
                    let before_numeric = dev.record(s0)?;
                    // Numeric binning counts and nnz(C) come back in one read.
                    let meta = Meta::new(&self.launcher, self.m(), nbins)?;
                    let runs = self.runs_together(&crpt, same_rows);
                    let (b_same_rows, _b_marks) = self.runs_of_b(runs)?;
                    let binning = NumericBinning {
                        distinct: distinct_rows(&crpt, self.m()),
                        typical,
                        same_rows: runs,
                        b_same_rows,
                        band: self.band(&crpt),
                    };
                    self.launch_count_bins(&meta, &crpt, Phase::Numeric, Some(binning))?;
                    meta.copy_nnz(&self.launcher, &crpt)?;
                    let counts = meta.read(&self.launcher)?;
                    let crpt = Arc::new(crpt);
                    let (ccol, cval, nnz) = self.numeric_into(&crpt, binning, meta, counts)?;
                    (crpt, ccol, cval, nnz, after_setup, before_numeric)
                }
            }
        };
        let end = dev.record(s0)?;
        let crpt = Arc::try_unwrap(crpt).or_else(|shared| self.copy_offsets(&shared))?;
        let narrow = if int32_offsets && nnz <= i32::MAX as usize {
            Some(narrow_offsets(&self.launcher, &crpt, self.m() + 1)?)
        } else {
            None
        };
        let done = dev.record(s0)?;
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
        let events = PhaseEvents {
            start,
            after_setup,
            before_numeric,
            end,
            done,
            one_pass,
            same_rows,
        };
        Ok(Enqueued {
            c,
            offsets_i32: narrow,
            events,
        })
    }

    /// C's column indices and values for the row offsets `crpt` (nnz(C)
    /// in `counts`), written by the numeric phase once B's values are in
    /// place; and nnz(C).
    fn numeric_into(
        &self,
        crpt: &DeviceArray<D, u64>,
        binning: NumericBinning,
        meta: Meta<D>,
        counts: Counts,
    ) -> Result<CEntries<D, T>> {
        let nnz = counts.nnz as usize;
        let ccol = self.launcher.alloc::<u32>(0, nnz, "C column indices")?;
        let cval = self.launcher.alloc::<T>(0, nnz, "C values")?;
        if nnz > 0 {
            let out = COut {
                crpt,
                distinct: distinct_rows(crpt, self.m()),
                repeat: repeat_rows(crpt, self.m()),
                col: &ccol,
                val: &cval,
            };
            if let Some(ready) = self.values_ready {
                self.device().wait(self.stream(0), ready)?;
            }
            self.numeric(&out, binning, meta, counts)?;
        }
        Ok((ccol, cval, nnz))
    }

    /// C's row offsets for a product run from a plan (the plan keeps its own).
    fn copy_offsets(&self, src: &DeviceArray<D, u64>) -> Result<DeviceArray<D, u64>> {
        let dst = self.launcher.alloc::<u64>(0, src.len(), "C row offsets")?;
        if let (Some(from), Some(to)) = (&src.buf, &dst.buf) {
            self.device()
                .copy_device(self.stream(0), from, 0, to, 0, 8 * src.len())?;
        }
        Ok(dst)
    }
}

/// C's column indices and values, and nnz(C).
type CEntries<D, T> = (DeviceArray<D, u32>, DeviceArray<D, T>, usize);

/// The events of one product's phases on its first stream (see
/// [`GpuEngine::multiply_ordered`](super::GpuEngine::multiply_ordered)):
/// its phase times once the last has completed.
pub struct PhaseEvents<D: Device> {
    start: D::Event,
    after_setup: Option<D::Event>,
    before_numeric: D::Event,
    end: D::Event,
    done: D::Event,
    one_pass: Option<OnePassRun>,
    same_rows: u64,
}

impl<D: Device> PhaseEvents<D> {
    /// After the product's last kernel (and C's int32 row offsets, when
    /// asked for): work that waits for it sees C complete.
    pub fn done(&self) -> &D::Event {
        &self.done
    }

    /// The phase times, milliseconds between the events (`peak_bytes` 0),
    /// waiting for the product first.
    ///
    /// # Errors
    /// A device failure of the product or of the events.
    pub fn times(&self, dev: &D) -> Result<PhaseTimes> {
        dev.sync_event(&self.done)?;
        let ms = |a: &D::Event, b: &D::Event| dev.elapsed_ms(a, b).map(f64::from);
        Ok(PhaseTimes {
            setup_ms: self
                .after_setup
                .as_ref()
                .map_or(Ok(0.0), |t| ms(&self.start, t))?,
            symbolic_ms: self
                .after_setup
                .as_ref()
                .map_or(Ok(0.0), |t| ms(t, &self.before_numeric))?,
            numeric_ms: ms(&self.before_numeric, &self.end)?,
            total_ms: ms(&self.start, &self.end)?,
            peak_bytes: 0,
            one_pass: self.one_pass.is_some(),
            one_pass_estimated: self.one_pass.is_some_and(|r| r.estimated),
            one_pass_rerun: self.one_pass.is_some_and(|r| r.rerun),
            rows_counted_once: self.same_rows as usize,
        })
    }
}

/// The first `n` row offsets at `rpt` narrowed to int32 into a new array,
/// on stream 0 (the caller checked that they fit).
pub(super) fn narrow_offsets<D: Device>(
    l: &Launcher<'_, D>,
    rpt: &DeviceArray<D, u64>,
    n: usize,
) -> Result<DeviceArray<D, i32>> {
    let out = l.alloc::<i32>(0, n, "int32 row offsets")?;
    let args = NarrowOffsetsArgs {
        wide: rpt.ptr(),
        narrow: out.ptr(),
        n: n as u64,
    };
    l.launch(0, Kernel::NarrowOffsets, check_grid(l, n), &args)?;
    Ok(out)
}

/// A product enqueued by [`GpuEngine::multiply_ordered`](super::GpuEngine::multiply_ordered): C and its int32
/// row offsets, complete in the order of the caller's stream.
pub struct Enqueued<D: Device, T> {
    /// C (`M×N`, sorted rows).
    pub c: GpuMatrix<D, T>,
    /// C's `M + 1` row offsets as int32, when asked for and nnz(C) fits.
    pub offsets_i32: Option<DeviceArray<D, i32>>,
    /// The product's events: its phase times once it has ended.
    pub events: PhaseEvents<D>,
}
