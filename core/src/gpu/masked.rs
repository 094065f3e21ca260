//! Masked products on the device by dot products: `C⟨M⟩ = A ⊕.⊗ B` with a
//! structural mask, each entry `(i, j)` of M the `⊕` over the `k` stored
//! in both A's row `i` and Bᵀ's row `j` (SuiteSparse:GraphBLAS's dot3;
//! Davis, "Algorithm 1000: SuiteSparse:GraphBLAS", ACM TOMS 45(4), 2019,
//! §6.3), for every semiring of [`Semiring`]. The kernel
//! (`masked_dot.cuh`) is compiled per value type and semiring.

use super::chunked::HostTimes;
use super::constants::EMPTY;
use super::engine::GpuEngine;
use super::kernels::{Kernel, MaskedDotArgs};
use super::launch::{shape, Launcher};
use super::memory::DeviceArray;
use super::staging::bytes_of;
use crate::csr::{split_rows_mut, CsrMatrix};
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::{try_filled, Error, Result};
use crate::scalar::Scalar;
use crate::semiring::{Mask, Semiring};
use rayon::prelude::*;
use std::time::Instant;

/// Threads per block of the masked dot-product kernel.
const THREADS: u32 = 256;

/// Lanes per entry of M: half the shorter operand's mean row length,
/// rounded up to a power of two, at least 1 and at most the warp.
fn lanes_per_entry<T: Scalar>(a: CsrView<'_, T>, bt: CsrView<'_, T>, warp: u32) -> u32 {
    let mean = |m: CsrView<'_, T>| m.nnz().div_ceil(m.nrows().max(1));
    let shorter = mean(a).min(mean(bt)) as u32;
    shorter
        .div_ceil(2)
        .next_power_of_two()
        .clamp(1, warp.max(1))
}

/// `m` with its rows sorted (two stable counting-sort transposes).
fn sorted<T: Scalar>(m: CsrView<'_, T>) -> Result<CsrMatrix<T>> {
    m.transpose()?.view().transpose()
}

impl<D: Device> GpuEngine<D> {
    /// `C⟨M⟩ = A ⊕.⊗ B` on the device by a dot product per entry of the
    /// structural mask M (`M×N`): A is `M×K`, `bt` is Bᵀ (`N×K`, B's
    /// columns as rows), C is `M×N` with rows sorted, its entries those of
    /// M that at least one `k` meets. Rows of A and Bᵀ are sorted first
    /// when they are not. The cost is about `nnz(M)` merges of a row of A
    /// with a row of Bᵀ (each lane walking the shorter, searching the
    /// longer): far below the row-wise product's when M is far sparser
    /// than the products (triangle counting, `C⟨L⟩ = L ⊕.pair Lᵀ`).
    ///
    /// # Errors
    /// [`Error::NotOnBackend`] for a complemented mask;
    /// [`Error::DimensionMismatch`] unless A and Bᵀ have the same number
    /// of columns; [`Error::MaskShape`] unless M is `M×N`;
    /// [`Error::TooLarge`] past `u32` rows; device errors (compiling the
    /// semiring's kernel, out of memory); host out of memory.
    pub fn masked_dot<T: Scalar>(
        &self,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        bt: CsrView<'_, T>,
        semiring: Semiring,
    ) -> Result<CsrMatrix<T>> {
        self.masked_dot_timed(mask, a, bt, semiring).map(|(c, _)| c)
    }

    /// [`GpuEngine::masked_dot`] with the wall-clock times of its upload,
    /// kernel and download (C's assembly on the host included in the
    /// download).
    ///
    /// # Errors
    /// As [`GpuEngine::masked_dot`].
    pub fn masked_dot_timed<T: Scalar>(
        &self,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        bt: CsrView<'_, T>,
        semiring: Semiring,
    ) -> Result<(CsrMatrix<T>, HostTimes)> {
        if mask.complement() {
            return Err(Error::NotOnBackend(
                "a complemented mask runs on the CPU backend (--backend cpu); \
                 the GPU runs structural masks"
                    .into(),
            ));
        }
        if a.ncols() != bt.ncols() {
            return Err(Error::DimensionMismatch {
                a_rows: a.nrows(),
                a_cols: a.ncols(),
                b_rows: bt.ncols(),
                b_cols: bt.nrows(),
            });
        }
        if mask.shape() != (a.nrows(), bt.nrows()) {
            return Err(Error::MaskShape {
                mask: mask.shape(),
                product: (a.nrows(), bt.nrows()),
            });
        }
        if a.nrows() >= u32::MAX as usize {
            return Err(super::product::too_large("rows", a.nrows()));
        }
        let (a_sorted, bt_sorted);
        let a = if a.is_sorted() {
            a
        } else {
            a_sorted = sorted(a)?;
            a_sorted.view()
        };
        let bt = if bt.is_sorted() {
            bt
        } else {
            bt_sorted = sorted(bt)?;
            bt_sorted.view()
        };
        let mut times = HostTimes {
            apart: true,
            ..HostTimes::default()
        };
        let structure = mask.structure();
        let (m, n, mnnz) = (structure.nrows, structure.ncols, structure.nnz());
        if mnnz == 0 {
            return Ok((CsrMatrix::zeros(m, n)?, times));
        }
        let kernels = self.masked_kernels::<T>(semiring)?;
        let mut cols = try_filled(mnnz, 0u32, "columns of C")?;
        let mut vals = try_filled(mnnz, T::ZERO, "values of C")?;
        self.launching(&kernels, |l| {
            self.masked_on_device(l, mask, a, bt, semiring, &mut times, &mut cols, &mut vals)
        })?;
        let t = Instant::now();
        let c = assemble(structure.row_offsets, n, &cols, &vals)?;
        times.download_ms += t.elapsed().as_secs_f64() * 1e3;
        Ok((c, times))
    }

    /// Uploads M, A and Bᵀ (M's structure once when it is A's), runs the
    /// kernel and downloads its columns and values (M's length each) into
    /// `cols` and `vals`.
    #[allow(clippy::too_many_arguments)]
    fn masked_on_device<T: Scalar>(
        &self,
        l: &Launcher<'_, D>,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        bt: CsrView<'_, T>,
        semiring: Semiring,
        times: &mut HostTimes,
        cols: &mut [u32],
        vals: &mut [T],
    ) -> Result<()> {
        let t = Instant::now();
        let (dev, s) = (&self.device, &l.streams[0]);
        let ms = mask.structure();
        let mask_is_a = std::ptr::eq(ms.row_offsets, a.row_offsets())
            && std::ptr::eq(ms.col_indices, a.col_indices());
        let values = semiring.reads_values();
        let rows = |r: &[usize], what| DeviceArray::<D, u64>::alloc(dev, s, r.len(), what, l.usage);
        let cols_of =
            |c: &[u32], what| DeviceArray::<D, u32>::alloc(dev, s, c.len(), what, l.usage);
        let vals_of = |v: &[T], what| {
            DeviceArray::<D, T>::alloc(dev, s, if values { v.len() } else { 0 }, what, l.usage)
        };
        let (arpt, acol, aval) = (
            rows(a.row_offsets(), "row offsets of A")?,
            cols_of(a.col_indices(), "column indices of A")?,
            vals_of(a.values(), "values of A")?,
        );
        let (btrpt, btcol, btval) = (
            rows(bt.row_offsets(), "row offsets of Bᵀ")?,
            cols_of(bt.col_indices(), "column indices of Bᵀ")?,
            vals_of(bt.values(), "values of Bᵀ")?,
        );
        let mask_arrays = if mask_is_a {
            None
        } else {
            Some((
                rows(ms.row_offsets, "row offsets of the mask")?,
                cols_of(ms.col_indices, "column indices of the mask")?,
            ))
        };
        let mnnz = ms.nnz();
        let ccol = DeviceArray::<D, u32>::alloc(dev, s, mnnz, "columns of C", l.usage)?;
        let cval = DeviceArray::<D, T>::alloc(dev, s, mnnz, "values of C", l.usage)?;
        let mut parts: Vec<(&[u8], &Option<D::Buffer>)> = vec![
            (bytemuck::cast_slice(a.row_offsets()), &arpt.buf),
            (bytemuck::cast_slice(a.col_indices()), &acol.buf),
            (bytemuck::cast_slice(a.values()), &aval.buf),
            (bytemuck::cast_slice(bt.row_offsets()), &btrpt.buf),
            (bytemuck::cast_slice(bt.col_indices()), &btcol.buf),
            (bytemuck::cast_slice(bt.values()), &btval.buf),
        ];
        if let Some((mrpt, mcol)) = &mask_arrays {
            parts.push((bytemuck::cast_slice(ms.row_offsets), &mrpt.buf));
            parts.push((bytemuck::cast_slice(ms.col_indices), &mcol.buf));
        }
        // Arrays of no length (values a pair semiring does not read, empty
        // operands) have no buffer and nothing to copy.
        let parts: Vec<(&[u8], &D::Buffer)> = parts
            .into_iter()
            .filter_map(|(bytes, buf)| Some((bytes, buf.as_ref()?)))
            .collect();
        self.staging.with(|st| st.upload(dev, s, &parts))?;
        times.upload_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let (mrpt, mcol) = match &mask_arrays {
            Some((r, c)) => (r.ptr(), c.ptr()),
            None => (arpt.ptr(), acol.ptr()),
        };
        let seg = lanes_per_entry(a, bt, dev.properties().warp_width);
        let args = MaskedDotArgs {
            mrpt,
            mcol,
            m: ms.nrows as u32,
            mnnz: mnnz as u64,
            arpt: arpt.ptr(),
            acol: acol.ptr(),
            aval: aval.ptr(),
            btrpt: btrpt.ptr(),
            btcol: btcol.ptr(),
            btval: btval.ptr(),
            seg,
            ccol: ccol.ptr(),
            cval: cval.ptr(),
        };
        let per_block = (THREADS / seg) as usize;
        l.launch(
            0,
            Kernel::MaskedDot,
            shape(l.grid(mnnz, per_block), THREADS, 0),
            &args,
        )?;
        dev.synchronize(s)?;
        times.multiply_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        self.staging.with(|st| {
            let mut parts: Vec<_> = [(&ccol.buf, bytes_of(cols)), (&cval.buf, bytes_of(vals))]
                .into_iter()
                .filter_map(|(b, out)| b.as_ref().map(|b| (b, 0, out)))
                .collect();
            st.download(dev, s, &mut parts)
        })?;
        times.download_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok(())
    }
}

/// C from the kernel's output: M's entries in M's order, those with column
/// [`EMPTY`] (no product met) dropped; rows sorted when M's are.
fn assemble<T: Scalar>(
    mask_offsets: &[usize],
    ncols: usize,
    cols: &[u32],
    vals: &[T],
) -> Result<CsrMatrix<T>> {
    let nrows = mask_offsets.len() - 1;
    let mut offsets = try_filled(nrows + 1, 0usize, "row offsets of C")?;
    offsets[1..].par_iter_mut().enumerate().for_each(|(i, o)| {
        *o = cols[mask_offsets[i]..mask_offsets[i + 1]]
            .iter()
            .filter(|&&c| c != EMPTY)
            .count()
    });
    for i in 0..nrows {
        offsets[i + 1] += offsets[i];
    }
    let nnz = offsets[nrows];
    let mut ccol = try_filled(nnz, 0u32, "columns of C")?;
    let mut cval = try_filled(nnz, T::ZERO, "values of C")?;
    split_rows_mut(&offsets, &mut ccol, &mut cval)
        .into_par_iter()
        .enumerate()
        .for_each(|(i, (rc, rv))| {
            let range = mask_offsets[i]..mask_offsets[i + 1];
            let kept = cols[range.clone()]
                .iter()
                .zip(&vals[range])
                .filter(|(&c, _)| c != EMPTY);
            for ((oc, ov), (&c, &v)) in rc.iter_mut().zip(rv.iter_mut()).zip(kept) {
                *oc = c;
                *ov = v;
            }
        });
    CsrMatrix::new(nrows, ncols, offsets, ccol, cval)
}
