//! The sequence of phases of one product (OpSparse §5, Fig. 2): setup →
//! symbolic binning → symbolic kernels → scan (`symbolic.rs`), then numeric
//! binning → numeric kernels (`numeric.rs`), timed by device events; or
//! only the numeric phases, from a plan's symbolic result.

use super::kernels::Phase;
use super::matrix::{GpuMatrix, GpuPlan, PhaseTimes, Structure};
use super::memory::DeviceArray;
use super::meta::Meta;
use super::numeric::COut;
use super::product::Product;
use super::symbolic::{distinct_rows, repeat_rows, Offsets};
use crate::device::Device;
use crate::error::Result;
use crate::scalar::Scalar;
use std::sync::Arc;

impl<D: Device, T: Scalar> Product<'_, D, T> {
    /// The whole product (from `plan`'s symbolic result when given), with
    /// the phase times.
    pub(super) fn multiply(
        &self,
        plan: Option<&GpuPlan<D, T>>,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        let (dev, s0) = (self.device(), self.stream(0));
        let start = dev.record(s0)?;
        let nbins = self.launcher.table().numeric.len();
        let (crpt, after_setup, before_numeric, typical, meta, counts) = match plan {
            Some(p) => {
                let before_numeric = dev.record(s0)?;
                let meta = Meta::new(&self.launcher, self.m(), nbins)?;
                let distinct = Some(distinct_rows(&p.crpt, self.m()));
                let mut counts = self.count_bins(&meta, &p.crpt, Phase::Numeric, distinct)?;
                counts.nnz = p.nnz as u64;
                (
                    p.crpt.clone(),
                    None,
                    before_numeric,
                    p.typical,
                    meta,
                    counts,
                )
            }
            None => {
                let Offsets {
                    crpt,
                    after_setup,
                    typical,
                } = self.symbolic_offsets(true)?;
                let before_numeric = dev.record(s0)?;
                // Numeric binning counts and nnz(C) come back in one read.
                let meta = Meta::new(&self.launcher, self.m(), nbins)?;
                let distinct = Some(distinct_rows(&crpt, self.m()));
                self.launch_count_bins(&meta, &crpt, Phase::Numeric, distinct)?;
                meta.copy_nnz(&self.launcher, &crpt)?;
                let counts = meta.read(&self.launcher)?;
                let crpt = Arc::new(crpt);
                (crpt, after_setup, before_numeric, typical, meta, counts)
            }
        };
        let nnz = counts.nnz as usize;
        let ccol = self.launcher.alloc::<u32>(0, nnz, "C column indices")?;
        let cval = self.launcher.alloc::<T>(0, nnz, "C values")?;
        if nnz > 0 {
            let out = COut {
                crpt: &crpt,
                distinct: distinct_rows(&crpt, self.m()),
                repeat: repeat_rows(&crpt, self.m()),
                col: &ccol,
                val: &cval,
            };
            self.numeric(&out, typical, meta, counts)?;
        }
        let end = dev.record(s0)?;
        dev.synchronize(s0)?;
        let ms = |a: &D::Event, b: &D::Event| dev.elapsed_ms(a, b).map(f64::from);
        let times = PhaseTimes {
            setup_ms: after_setup.as_ref().map_or(Ok(0.0), |t| ms(&start, t))?,
            symbolic_ms: after_setup
                .as_ref()
                .map_or(Ok(0.0), |t| ms(t, &before_numeric))?,
            numeric_ms: ms(&before_numeric, &end)?,
            total_ms: ms(&start, &end)?,
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
        let dst = self.launcher.alloc::<u64>(0, src.len(), "C row offsets")?;
        if let (Some(from), Some(to)) = (&src.buf, &dst.buf) {
            self.device()
                .copy_device(self.stream(0), from, 0, to, 0, 8 * src.len())?;
        }
        Ok(dst)
    }
}
