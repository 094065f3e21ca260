//! Masked products on the device by dot products: `C⟨M⟩ = A ⊕.⊗ B` with a
//! structural mask, each entry `(i, j)` of M the `⊕` over the `k` stored
//! in both A's row `i` and B's column `j` (SuiteSparse:GraphBLAS's dot3;
//! Davis, "Algorithm 1000: SuiteSparse:GraphBLAS", ACM TOMS 45(4), 2019,
//! §6.3), for every semiring of [`Semiring`]. B's columns are formed on the
//! device (Bᵀ, its rows unordered); the kernels (`masked_dot.cuh`) are
//! compiled per value type and semiring.

use super::chunked::HostTimes;
use super::constants::EMPTY;
use super::engine::GpuEngine;
use super::kernels::{ColumnCountsArgs, Kernel, MaskedDotArgs, TransposeScatterArgs};
use super::launch::{shape, Launcher};
use super::memory::DeviceArray;
use super::staging::bytes_of;
use crate::csr::{split_rows_mut, CsrMatrix};
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::{try_zeroed, Error, Result};
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
    /// structural mask M (`M×N`): A is `M×K`, B is `K×N`, C is `M×N` with
    /// M's row order (sorted when M's rows are), its entries those of M
    /// that at least one `k` meets. Rows of A and B are sorted first when
    /// they are not; B's columns are formed on the device. The cost is
    /// about `nnz(M)` walks of the shorter of A's row `i` and B's column
    /// `j`, each `k` found in the other by binary search: far below the
    /// row-wise product's when M is far sparser than the products
    /// (triangle counting, `C⟨L⟩ = L ⊕.pair Lᵀ`).
    ///
    /// # Errors
    /// [`Error::NotOnBackend`] for a complemented mask;
    /// [`Error::DimensionMismatch`] unless A's columns are B's rows;
    /// [`Error::MaskShape`] unless M is `M×N`;
    /// [`Error::TooLarge`] past `u32` rows; device errors (compiling the
    /// semiring's kernel, out of memory); host out of memory.
    pub fn masked_dot<T: Scalar>(
        &self,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        semiring: Semiring,
    ) -> Result<CsrMatrix<T>> {
        self.masked_dot_timed(mask, a, b, semiring).map(|(c, _)| c)
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
        b: CsrView<'_, T>,
        semiring: Semiring,
    ) -> Result<(CsrMatrix<T>, HostTimes)> {
        if mask.complement() {
            return Err(Error::NotOnBackend(
                "a complemented mask runs on the CPU backend (--backend cpu); \
                 the GPU runs structural masks"
                    .into(),
            ));
        }
        crate::reference::check_dimensions(a.shape(), b.shape())?;
        if mask.shape() != (a.nrows(), b.ncols()) {
            return Err(Error::MaskShape {
                mask: mask.shape(),
                product: (a.nrows(), b.ncols()),
            });
        }
        if let Some(&rows) = [a.nrows(), b.nrows()]
            .iter()
            .find(|&&r| r >= u32::MAX as usize)
        {
            return Err(super::product::too_large("rows", rows));
        }
        let (a_sorted, b_sorted);
        let a = if a.is_sorted() {
            a
        } else {
            a_sorted = sorted(a)?;
            a_sorted.view()
        };
        let b = if b.is_sorted() {
            b
        } else {
            b_sorted = sorted(b)?;
            b_sorted.view()
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
        let mut cols = try_zeroed(mnnz, "columns of C")?;
        let mut vals = try_zeroed(mnnz, "values of C")?;
        self.launching(&kernels, |l| {
            self.masked_on_device(l, mask, a, b, semiring, &mut times, &mut cols, &mut vals)
        })?;
        let t = Instant::now();
        let c = assemble(structure.row_offsets, n, &cols, &vals)?;
        times.download_ms += t.elapsed().as_secs_f64() * 1e3;
        Ok((c, times))
    }

    /// Uploads M, A and B (M's structure once when it is A's), forms Bᵀ,
    /// runs the kernel and downloads its columns and values (M's length
    /// each) into `cols` and `vals`.
    #[allow(clippy::too_many_arguments)]
    fn masked_on_device<T: Scalar>(
        &self,
        l: &Launcher<'_, D>,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
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
        let alloc_rows = |n: usize, what| DeviceArray::<D, u64>::alloc(dev, s, n, what, l.usage);
        let alloc_cols = |n: usize, what| DeviceArray::<D, u32>::alloc(dev, s, n, what, l.usage);
        let alloc_vals = |n: usize, what| {
            DeviceArray::<D, T>::alloc(dev, s, if values { n } else { 0 }, what, l.usage)
        };
        let (arpt, acol, aval) = (
            alloc_rows(a.nrows() + 1, "row offsets of A")?,
            alloc_cols(a.nnz(), "column indices of A")?,
            alloc_vals(a.nnz(), "values of A")?,
        );
        let (brpt, bcol, bval) = (
            alloc_rows(b.nrows() + 1, "row offsets of B")?,
            alloc_cols(b.nnz(), "column indices of B")?,
            alloc_vals(b.nnz(), "values of B")?,
        );
        let mask_arrays = if mask_is_a {
            None
        } else {
            Some((
                alloc_rows(ms.nrows + 1, "row offsets of the mask")?,
                alloc_cols(ms.nnz(), "column indices of the mask")?,
            ))
        };
        let mut parts: Vec<(&[u8], &Option<D::Buffer>)> = vec![
            (bytemuck::cast_slice(a.row_offsets()), &arpt.buf),
            (bytemuck::cast_slice(a.col_indices()), &acol.buf),
            (bytemuck::cast_slice(a.values()), &aval.buf),
            (bytemuck::cast_slice(b.row_offsets()), &brpt.buf),
            (bytemuck::cast_slice(b.col_indices()), &bcol.buf),
            (bytemuck::cast_slice(b.values()), &bval.buf),
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
        let (btrpt, btcol, btval) = transpose_on_device(l, b, &brpt, &bcol, &bval)?;
        let mnnz = ms.nnz();
        let ccol = alloc_cols(mnnz, "columns of C")?;
        let cval = DeviceArray::<D, T>::alloc(dev, s, mnnz, "values of C", l.usage)?;
        let (mrpt, mcol) = match &mask_arrays {
            Some((r, c)) => (r.ptr(), c.ptr()),
            None => (arpt.ptr(), acol.ptr()),
        };
        let seg = lanes_per_entry(a, b, dev.properties().warp_width);
        let args = MaskedDotArgs {
            mrpt,
            mcol,
            m: ms.nrows as u32,
            mnnz: mnnz as u64,
            arpt: arpt.ptr(),
            acol: acol.ptr(),
            aval: aval.ptr(),
            brpt: brpt.ptr(),
            bcol: bcol.ptr(),
            bval: bval.ptr(),
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

/// A matrix's row offsets, column indices and values on the device.
type DeviceArrays<D, T> = (DeviceArray<D, u64>, DeviceArray<D, u32>, DeviceArray<D, T>);

/// Bᵀ (`N×K`) from B on the device (its row offsets, columns and values;
/// no values for a semiring that reads none): B's entries counted per
/// column, the counts scanned on the host into Bᵀ's row offsets, then each
/// entry placed at its column's offset plus a ticket, so the rows of Bᵀ
/// come out in no particular order.
fn transpose_on_device<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    b: CsrView<'_, T>,
    brpt: &DeviceArray<D, u64>,
    bcol: &DeviceArray<D, u32>,
    bval: &DeviceArray<D, T>,
) -> Result<DeviceArrays<D, T>> {
    let (dev, s) = (l.device, &l.streams[0]);
    let (n, nnz) = (b.ncols(), b.nnz());
    let counts = l.alloc::<u32>(0, n, "column counts of B")?;
    counts.zero(dev, s, 0, n)?;
    let count = ColumnCountsArgs {
        bcol: bcol.ptr(),
        nnz: nnz as u64,
        counts: counts.ptr(),
    };
    l.launch(
        0,
        Kernel::ColumnCounts,
        shape(l.grid(nnz, THREADS as usize), THREADS, 0),
        &count,
    )?;
    let mut offsets: Vec<u64> = try_zeroed(n + 1, "row offsets of Bᵀ")?;
    let mut per_column: Vec<u32> = try_zeroed(n, "column counts of B")?;
    l.read(&counts, 0, &mut per_column)?;
    for (j, &c) in per_column.iter().enumerate() {
        offsets[j + 1] = offsets[j] + u64::from(c);
    }
    let btrpt = DeviceArray::from_host(dev, s, &offsets, "row offsets of Bᵀ", l.usage)?;
    counts.zero(dev, s, 0, n)?;
    let btcol = l.alloc::<u32>(0, nnz, "column indices of Bᵀ")?;
    let btval = l.alloc::<T>(0, if bval.is_empty() { 0 } else { nnz }, "values of Bᵀ")?;
    let scatter = TransposeScatterArgs {
        brpt: brpt.ptr(),
        bcol: bcol.ptr(),
        bval: bval.ptr(),
        k: b.nrows() as u32,
        btrpt: btrpt.ptr(),
        fill: counts.ptr(),
        btcol: btcol.ptr(),
        btval: btval.ptr(),
    };
    let warps_per_block = (THREADS / dev.properties().warp_width.max(1)) as usize;
    l.launch(
        0,
        Kernel::TransposeScatter,
        shape(l.grid(b.nrows(), warps_per_block), THREADS, 0),
        &scatter,
    )?;
    Ok((btrpt, btcol, btval))
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
    let mut offsets = try_zeroed(nrows + 1, "row offsets of C")?;
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
    let mut ccol = try_zeroed(nnz, "columns of C")?;
    let mut cval = try_zeroed(nnz, "values of C")?;
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
