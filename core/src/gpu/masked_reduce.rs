//! A masked product reduced to one scalar on the device, C never formed:
//! `⊕` over the entries of `C⟨M⟩ = A ⊕.⊗ B`, GraphBLAS's reduce to a
//! scalar with the semiring's monoid (Davis, "Algorithm 1000:
//! SuiteSparse:GraphBLAS", ACM TOMS 45(4), 2019, §2). Triangle counting
//! is its `plus_pair` case: `Σ C⟨L⟩`, `C = L ⊕.pair Lᵀ` (Wolf, Deveci,
//! Berry, Hammond and Rajamanickam, "Fast linear algebra-based triangle
//! counting with KokkosKernels", HPEC 2017, §III). The dot products of
//! `masked_dot.cuh`, one per entry of M, are `⊕`-reduced over each warp
//! and added to one value by an atomic `⊕` a warp: no columns or values of
//! C, no compaction, one value read back.

use super::engine::GpuEngine;
use super::kernels::{DevicePtr, MaskedDotArgs};
use super::launch::Launcher;
use super::masked::{
    check_shapes, dot_products, lanes_per_entry, require_sorted, transpose_on_device,
};
use super::matrix::{GpuMatrix, MaskArrays};
use super::memory::DeviceArray;
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::semiring::{Mask, Prune, Semiring};

impl<D: Device> GpuEngine<D> {
    /// `⊕` over the entries of `C⟨M⟩ = A ⊕.⊗ B` (structural mask M,
    /// `M×N`; A `M×K`, B `K×N`, or, with `b_transposed`, `b` is Bᵀ,
    /// `N×K`), from host matrices: A, B and M uploaded as
    /// [`GpuEngine::masked_dot`] uploads them, each entry of M the dot
    /// product of A's row and B's column (Bᵀ formed on the device unless
    /// given), the entries met reduced on the device without forming C
    /// (see the module's text); [`Semiring::reduce`] of C's values, with
    /// `⊕`'s identity for a C without entries. The order in which `⊕`
    /// meets the entries is not fixed: floating-point sums may differ in
    /// their last bits from run to run. A complemented mask forms C (as
    /// [`GpuEngine::masked_dot`] does) and reduces its values.
    ///
    /// # Errors
    /// As [`GpuEngine::masked_dot`] (and
    /// [`GpuEngine::masked_dot_transposed_b`], `b` named Bᵀ).
    pub fn masked_reduce<T: Scalar>(
        &self,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        semiring: Semiring,
        b_transposed: bool,
    ) -> Result<T> {
        if mask.complement() {
            let none = Prune::default();
            let c: CsrMatrix<T> = if b_transposed {
                self.masked_dot_transposed_b(mask, a, b, semiring, &none)?
            } else {
                self.masked_dot(mask, a, b, semiring, &none)?
            };
            return Ok(semiring.reduce(c.values()));
        }
        let structure = mask.structure();
        let (b_shape, name) = if b_transposed {
            ((b.ncols(), b.nrows()), "Bᵀ")
        } else {
            (b.shape(), "B")
        };
        check_shapes((structure.nrows, structure.ncols), a.shape(), b_shape)?;
        let reduced = self.with_uploaded(structure, a, (b, name), semiring, |l, m, ga, gb| {
            reduce_on_device(l, m, ga, gb, semiring, b_transposed)
        });
        reduced.map(|(v, _)| v)
    }

    /// [`GpuEngine::masked_reduce`] for matrices already on the device: M's
    /// structure is read (its values never are); A and `b` (B, or Bᵀ with
    /// `b_transposed`) must have rows sorted without repeated columns
    /// ([`GpuMatrix::sorted_rows`]; the checks of an upload or of borrowed
    /// arrays find it). Returns the reduced value, read back once the
    /// device is done.
    ///
    /// # Errors
    /// [`crate::Error::NotOnBackend`] when A's or `b`'s rows are not known
    /// to be sorted without repeated columns;
    /// [`crate::Error::DimensionMismatch`], [`crate::Error::MaskShape`] as
    /// [`GpuEngine::masked_dot`]; device errors.
    pub fn masked_reduce_device<T: Scalar, U: Scalar>(
        &self,
        mask: &GpuMatrix<D, U>,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        semiring: Semiring,
        b_transposed: bool,
    ) -> Result<T> {
        let (b_shape, name) = if b_transposed {
            ((b.ncols, b.nrows), "Bᵀ")
        } else {
            ((b.nrows, b.ncols), "B")
        };
        check_shapes((mask.nrows, mask.ncols), (a.nrows, a.ncols), b_shape)?;
        require_sorted([("A", a), (name, b)])?;
        let kernels = self.masked_kernels::<T>(semiring)?;
        self.launching(&kernels, |l| {
            reduce_on_device(l, MaskArrays::of(mask), a, b, semiring, b_transposed)
        })
    }
}

/// The dot products of M's entries reduced into one value on stream 0
/// (Bᵀ formed first unless `b` is Bᵀ), read back.
fn reduce_on_device<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    ms: MaskArrays,
    a: &GpuMatrix<D, T>,
    b: &GpuMatrix<D, T>,
    semiring: Semiring,
    b_transposed: bool,
) -> Result<T> {
    let identity = semiring.identity::<T>();
    if ms.nnz == 0 {
        return Ok(identity);
    }
    let total = DeviceArray::from_host(
        l.device,
        &l.streams[0],
        &[identity],
        "the reduced value",
        l.usage,
    )?;
    let formed = if b_transposed {
        None
    } else {
        Some(transpose_on_device(l, b, semiring.reads_values())?)
    };
    let none = DevicePtr(0);
    let ((brpt, bcol, bval), (btrpt, btcol, btval)) = match &formed {
        Some((rpt, col, val)) => (
            (b.structure.rpt.ptr(), b.structure.col.ptr(), b.val.ptr()),
            (rpt.ptr(), col.ptr(), val.ptr()),
        ),
        None => (
            (none, none, none),
            (b.structure.rpt.ptr(), b.structure.col.ptr(), b.val.ptr()),
        ),
    };
    let b_columns = if b_transposed { b.nrows } else { b.ncols };
    let seg = lanes_per_entry(a, (b.nnz, b_columns), l.device.properties().warp_width);
    let args = MaskedDotArgs {
        mrpt: ms.rpt,
        mcol: ms.col,
        m: ms.nrows as u32,
        mnnz: ms.nnz as u64,
        arpt: a.structure.rpt.ptr(),
        acol: a.structure.col.ptr(),
        aval: a.val.ptr(),
        brpt,
        bcol,
        bval,
        btrpt,
        btcol,
        btval,
        seg,
        ccol: none,
        cval: none,
        heavy: none,
        heavy_count: none,
        heavy_cap: 0,
        total: total.ptr(),
    };
    dot_products(l, args)?;
    let mut out = [identity];
    // The read waits for the kernels on stream 0.
    l.read(&total, 0, &mut out)?;
    drop(formed);
    Ok(out[0])
}
