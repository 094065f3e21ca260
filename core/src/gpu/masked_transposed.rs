//! `C⟨M⟩ = A ⊕.⊗ Bᵀ` on the device with B given as its transpose (Bᵀ,
//! rows sorted), as GraphBLAS's transposing descriptor gives it: the dot
//! products of `masked_dot.cuh` walk the shorter of A's row `i` and Bᵀ's
//! row `j` and search the other, so neither B nor its transpose is formed
//! (triangle counting's `C⟨L⟩ = L ⊕.pair Lᵀ` uploads L once, as A, Bᵀ and
//! the mask). Where C's grid is small (`grid.rs`) B is formed on the device
//! from Bᵀ for the grid's push.

use super::engine::GpuEngine;
use super::grid::{grid_on_device, grid_pays};
use super::kernels::{DevicePtr, MaskedDotArgs};
use super::launch::Launcher;
use super::masked::{
    check_shapes, compact, dot_products, empty_product, lanes_per_entry, require_sorted,
    transpose_on_device,
};
use super::matrix::{GpuMatrix, MaskArrays};
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::semiring::{Mask, Prune, Semiring};

impl<D: Device> GpuEngine<D> {
    /// `C⟨M⟩ = A ⊕.⊗ Bᵀ` for a structural mask M (`M×N`), with A `M×K` and
    /// B given as its transpose `bt` (`N×K`), C `M×N` as
    /// [`GpuEngine::masked_dot`] computes it: A, `bt` and M uploaded (one
    /// upload where they are the same arrays), each entry `(i, j)` of M
    /// the dot product of A's row `i` and `bt`'s row `j`, the shorter
    /// walked and the other searched; nothing transposed. Rows of A and
    /// `bt` are sorted first when they are not. A complemented mask runs
    /// as [`GpuEngine::complement_host`] does on B formed on the host.
    ///
    /// # Errors
    /// As [`GpuEngine::masked_dot`], `bt`'s rows named as Bᵀ's.
    pub fn masked_dot_transposed_b<T: Scalar>(
        &self,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        bt: CsrView<'_, T>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<CsrMatrix<T>> {
        if mask.complement() {
            let b = bt.transpose()?;
            return self
                .complement_host(mask, a, b.view(), semiring, prune)
                .map(|(c, _)| c);
        }
        let structure = mask.structure();
        check_shapes(
            (structure.nrows, structure.ncols),
            a.shape(),
            (bt.ncols(), bt.nrows()),
        )?;
        self.dot_products_from_host(
            structure,
            a,
            (bt, "Bᵀ"),
            semiring,
            prune,
            given_bt_on_device,
        )
        .map(|(c, _)| c)
    }
}

impl<D: Device> GpuEngine<D> {
    /// `C⟨M⟩ = A ⊕.⊗ Bᵀ` as [`GpuEngine::masked_dot_transposed_b`] for
    /// matrices already on the device, C left there: M's structure is read
    /// (its values never are), A and `bt` (`N×K`) must have rows sorted
    /// without repeated columns ([`GpuMatrix::sorted_rows`]). Returns when
    /// C is complete.
    ///
    /// # Errors
    /// [`crate::Error::NotOnBackend`] when A's or `bt`'s rows are not known to be
    /// sorted without repeated columns; [`crate::Error::DimensionMismatch`],
    /// [`crate::Error::MaskShape`] as [`GpuEngine::masked_dot`]; device errors.
    pub fn masked_dot_transposed_b_device<T: Scalar, U: Scalar>(
        &self,
        mask: &GpuMatrix<D, U>,
        a: &GpuMatrix<D, T>,
        bt: &GpuMatrix<D, T>,
        semiring: Semiring,
    ) -> Result<GpuMatrix<D, T>> {
        check_shapes(
            (mask.nrows, mask.ncols),
            (a.nrows, a.ncols),
            (bt.ncols, bt.nrows),
        )?;
        require_sorted([("A", a), ("Bᵀ", bt)])?;
        let kernels = self.masked_kernels::<T>(semiring)?;
        self.launching(&kernels, |l| {
            let c = given_bt_on_device(l, MaskArrays::of(mask), a, bt, semiring)?;
            l.device.synchronize(&l.streams[0])?;
            Ok(c)
        })
    }
}

/// The dot products of A's rows and `bt`'s (both sorted), C compacted,
/// on stream 0; or, where C's grid and the products are small, B formed
/// from `bt` and the products pushed into a dense grid of C.
fn given_bt_on_device<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    ms: MaskArrays,
    a: &GpuMatrix<D, T>,
    bt: &GpuMatrix<D, T>,
    semiring: Semiring,
) -> Result<GpuMatrix<D, T>> {
    let (m, mnnz) = (ms.nrows, ms.nnz);
    if mnnz == 0 {
        return empty_product(l, &ms);
    }
    if grid_pays(&ms, a.nnz, bt.nnz) {
        let (rpt, col, val) = transpose_on_device(l, bt, semiring.reads_values())?;
        let b = GpuMatrix::of_arrays((bt.ncols, bt.nrows), rpt, col, val, false);
        return grid_on_device(l, ms, false, a, &b, semiring);
    }
    let ccol = l.alloc::<u32>(0, mnnz, "columns of C")?;
    let cval = l.alloc::<T>(0, mnnz, "values of C")?;
    let seg = lanes_per_entry(a, (bt.nnz, bt.nrows), l.device.properties().warp_width);
    let none = DevicePtr(0);
    let args = MaskedDotArgs {
        mrpt: ms.rpt,
        mcol: ms.col,
        m: m as u32,
        mnnz: mnnz as u64,
        arpt: a.structure.rpt.ptr(),
        acol: a.structure.col.ptr(),
        aval: a.val.ptr(),
        brpt: none,
        bcol: none,
        bval: none,
        btrpt: bt.structure.rpt.ptr(),
        btcol: bt.structure.col.ptr(),
        btval: bt.val.ptr(),
        seg,
        ccol: ccol.ptr(),
        cval: cval.ptr(),
        heavy: none,
        heavy_count: none,
        heavy_cap: 0,
        total: DevicePtr(0),
    };
    dot_products(l, args)?;
    compact(l, ms.rpt, (m, ms.ncols), ccol, cval, ms.sorted)
}
