//! Masked products on the device by dot products: `C⟨M⟩ = A ⊕.⊗ B` with a
//! structural mask, each entry `(i, j)` of M the `⊕` over the `k` stored
//! in both A's row `i` and B's column `j` (SuiteSparse:GraphBLAS's dot3;
//! Davis, "Algorithm 1000: SuiteSparse:GraphBLAS", ACM TOMS 45(4), 2019,
//! §6.3), for every semiring of [`Semiring`]. B's columns are formed on the
//! device (Bᵀ, its rows unordered); the kernels (`masked_dot.cuh`) are
//! compiled per value type and semiring.

use super::chunked::HostTimes;
use super::engine::GpuEngine;
use super::grid::{grid_on_device, grid_pays};
use super::kernels::{
    ColumnCountsArgs, CompactEntriesArgs, CompactOffsetsArgs, DevicePtr, KeepFlagsArgs, Kernel,
    MaskedDotArgs, MaskedDotHeavyArgs, SortRowsArgs, TransposeScatterArgs,
};
use super::launch::{shape, Launcher};
use super::matrix::{GpuMatrix, MaskArrays};
use super::memory::DeviceArray;
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::{try_zeroed, Error, Result};
use crate::scalar::Scalar;
use crate::semiring::{Mask, Prune, Semiring};
use crate::structure::Structure;
use std::time::Instant;

/// Threads per block of the masked dot-product kernel.
pub(super) const THREADS: u32 = 256;

/// Entries of M the heavy list holds at most: entries whose shorter side
/// is long (`SPGEMM_HEAVY_MIN`), a block each; those past it are computed
/// by segments as the rest are.
const HEAVY_CAP: usize = 1 << 16;

/// Threads of a block of the heavy entries' kernel
/// (`SPGEMM_HEAVY_THREADS`).
const HEAVY_THREADS: u32 = 256;

/// Entries of B each block of the transpose's scatter takes at a time
/// (`SPGEMM_SCATTER_CHUNK` in `masked_dot.cuh`: counted per column in
/// shared memory, one range of tickets per column).
const SCATTER_CHUNK: usize = 2048;

/// Lanes per entry of M: half the shorter operand's mean row length (A's
/// rows, B's columns: `b` their entries and number), rounded up to a power of two, at least 1 and at
/// most the warp.
pub(super) fn lanes_per_entry<D: Device, T>(
    a: &GpuMatrix<D, T>,
    b: (usize, usize),
    warp: u32,
) -> u32 {
    let mean = |nnz: usize, rows: usize| nnz.div_ceil(rows.max(1));
    let shorter = mean(a.nnz, a.nrows).min(mean(b.0, b.1)) as u32;
    shorter
        .div_ceil(2)
        .next_power_of_two()
        .clamp(1, warp.max(1))
}

/// The device side of masked dot products: C from M's arrays, A and B
/// (or Bᵀ) on the device, under a semiring.
pub(super) type OnDevice<D, T> = fn(
    &Launcher<'_, D>,
    MaskArrays,
    &GpuMatrix<D, T>,
    &GpuMatrix<D, T>,
    Semiring,
) -> Result<GpuMatrix<D, T>>;

impl<D: Device> GpuEngine<D> {
    /// `C⟨M⟩ = A ⊕.⊗ B` on the device by a dot product per entry of the
    /// structural mask M (`M×N`): A is `M×K`, B is `K×N`, C is `M×N` with
    /// M's row order (sorted when M's rows are), its entries those of M
    /// that at least one `k` meets. Rows of A and B are sorted first when
    /// they are not; B's columns are formed on the device. The cost is
    /// about `nnz(M)` walks of the shorter of A's row `i` and B's column
    /// `j`, each `k` found in the other by binary search: far below the
    /// row-wise product's when M is far sparser than the products
    /// (triangle counting, `C⟨L⟩ = L ⊕.pair Lᵀ`). A complemented mask runs
    /// as [`GpuEngine::complement_host`] does.
    ///
    /// # Errors
    /// [`Error::NotOnBackend`] for A or B with a column repeated within a
    /// row under a structural mask (the CPU backend takes those);
    /// [`Error::DimensionMismatch`] unless A's columns are B's rows;
    /// [`Error::MaskShape`] unless M is `M×N`;
    /// [`Error::TooLarge`] past `u32` rows; device errors (compiling the
    /// semiring's kernel, out of memory); host out of memory; as
    /// [`GpuEngine::prune_device`].
    pub fn masked_dot<T: Scalar>(
        &self,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<CsrMatrix<T>> {
        self.masked_dot_timed(mask, a, b, semiring, prune)
            .map(|(c, _)| c)
    }

    /// [`GpuEngine::masked_dot`] with the wall-clock times of its upload,
    /// the device's work (B's columns, the dot products, C compacted and
    /// pruned as `prune` says) and C's download.
    ///
    /// # Errors
    /// As [`GpuEngine::masked_dot`].
    pub fn masked_dot_timed<T: Scalar>(
        &self,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<(CsrMatrix<T>, HostTimes)> {
        if mask.complement() {
            return self.complement_host(mask, a, b, semiring, prune);
        }
        let structure = mask.structure();
        check_shapes((structure.nrows, structure.ncols), a.shape(), b.shape())?;
        self.dot_products_from_host(structure, a, (b, "B"), semiring, prune, masked_on_device)
    }

    /// The host side of the masked dot products, for B as it is
    /// ([`GpuEngine::masked_dot`]) or given as Bᵀ
    /// ([`GpuEngine::masked_dot_transposed_b`]): A and `b` (named
    /// `b.1` in errors) sorted where they are not, uploaded (once where
    /// they are the same arrays) with M's structure, `on_device` run on
    /// them, C pruned as `prune` says and downloaded, with the wall-clock
    /// times of the upload, the device's work and the download. Shapes are
    /// the caller's to check.
    pub(super) fn dot_products_from_host<T: Scalar>(
        &self,
        structure: Structure<'_>,
        a: CsrView<'_, T>,
        (b, name): (CsrView<'_, T>, &str),
        semiring: Semiring,
        prune: &Prune<T>,
        on_device: OnDevice<D, T>,
    ) -> Result<(CsrMatrix<T>, HostTimes)> {
        let mut times = HostTimes {
            apart: true,
            ..HostTimes::default()
        };
        let ((c, t), upload_ms) =
            self.with_uploaded(structure, a, (b, name), semiring, |l, m, ga, gb| {
                let t = Instant::now();
                let c = on_device(l, m, ga, gb, semiring)?;
                l.device.synchronize(&l.streams[0])?;
                Ok((c, t))
            })?;
        times.upload_ms = upload_ms;
        let c = self.prune_device(c, prune)?;
        times.multiply_ms = t.elapsed().as_secs_f64() * 1e3;
        let t = Instant::now();
        let c = self.download(&c)?;
        times.download_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok((c, times))
    }

    /// A and `b` (named `name` in errors) sorted where they are not,
    /// uploaded (once where they are the same arrays, their values only
    /// where the semiring reads them) with M's structure (A's arrays where
    /// it is A's), then `f` on them in the same launch; with the upload's
    /// milliseconds.
    pub(super) fn with_uploaded<T: Scalar, R>(
        &self,
        structure: Structure<'_>,
        a: CsrView<'_, T>,
        (b, name): (CsrView<'_, T>, &str),
        semiring: Semiring,
        f: impl FnOnce(&Launcher<'_, D>, MaskArrays, &GpuMatrix<D, T>, &GpuMatrix<D, T>) -> Result<R>,
    ) -> Result<(R, f64)> {
        let b_is_a = a.same_arrays(&b);
        let (a_sorted, b_sorted) = sorted_copies(a, b, name)?;
        let a = a_sorted.as_ref().map_or(a, CsrMatrix::view);
        let b = if b_is_a {
            a
        } else {
            b_sorted.as_ref().map_or(b, CsrMatrix::view)
        };
        let kernels = self.masked_kernels::<T>(semiring)?;
        self.launching(&kernels, |l| {
            let t = Instant::now();
            let values = semiring.reads_values();
            let ga = self.upload_sorted(l, a, values)?;
            let gb = if b_is_a {
                None
            } else {
                Some(self.upload_sorted(l, b, values)?)
            };
            let gb = gb.as_ref().unwrap_or(&ga);
            let own_mask = UploadedMask::of(l, structure, a)?;
            let m = own_mask.arrays(&ga);
            l.device.synchronize(&l.streams[0])?;
            let upload_ms = t.elapsed().as_secs_f64() * 1e3;
            Ok((f(l, m, &ga, gb)?, upload_ms))
        })
    }

    /// `C⟨M⟩ = A ⊕.⊗ B` as [`GpuEngine::masked_dot`] for matrices already
    /// on the device, C left there: M's structure is read (its values
    /// never are), A and B must have rows sorted without repeated columns
    /// ([`GpuMatrix::sorted_rows`]; the checks of an upload or of borrowed
    /// arrays find it). Returns when C is complete.
    ///
    /// # Errors
    /// [`Error::NotOnBackend`] when A's or B's rows are not known to be
    /// sorted without repeated columns; [`Error::DimensionMismatch`],
    /// [`Error::MaskShape`] as [`GpuEngine::masked_dot`]; device errors.
    pub fn masked_dot_device<T: Scalar, U: Scalar>(
        &self,
        mask: &GpuMatrix<D, U>,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        semiring: Semiring,
    ) -> Result<GpuMatrix<D, T>> {
        check_shapes(
            (mask.nrows, mask.ncols),
            (a.nrows, a.ncols),
            (b.nrows, b.ncols),
        )?;
        require_sorted([("A", a), ("B", b)])?;
        let kernels = self.masked_kernels::<T>(semiring)?;
        self.launching(&kernels, |l| {
            let c = masked_on_device(l, MaskArrays::of(mask), a, b, semiring)?;
            l.device.synchronize(&l.streams[0])?;
            Ok(c)
        })
    }
}

impl<D: Device> GpuEngine<D> {
    /// `mᵀ` (`N×M` for `m` `M×N`) formed on the device from `m` there: its
    /// entries counted per column, the counts scanned on the device into
    /// `mᵀ`'s row offsets, each entry placed by a ticket, so that the rows
    /// of `mᵀ` come out in no particular order (the product's kernels take
    /// them so; [`GpuMatrix::sorted_rows`] is false). Galerkin products
    /// form `Pᵀ` this way.
    ///
    /// # Errors
    /// Device errors (compiling the transpose's kernels on first use, out
    /// of memory); host out of memory.
    pub fn transpose_device<T: Scalar>(&self, m: &GpuMatrix<D, T>) -> Result<GpuMatrix<D, T>> {
        self.transposed(m, false)
    }

    /// `mᵀ` formed as [`GpuEngine::transpose_device`] forms it, then each
    /// of its rows sorted by column in place (`spgemm_sort_rows`: bitonic
    /// sorts, a warp a row of up to 2,048 entries over the warps of a
    /// block — 256 on NVIDIA GPUs — and a block a longer one, in shared
    /// memory up to 2,048 entries and in global memory beyond). `m`'s rows
    /// need no order; `mᵀ` is marked sorted ([`GpuMatrix::sorted_rows`])
    /// when `m` is known to repeat no column in a row.
    ///
    /// # Errors
    /// As [`GpuEngine::transpose_device`].
    pub fn transpose_device_sorted<T: Scalar>(
        &self,
        m: &GpuMatrix<D, T>,
    ) -> Result<GpuMatrix<D, T>> {
        self.transposed(m, true)
    }

    /// `mᵀ`, its rows sorted when `sort`.
    fn transposed<T: Scalar>(&self, m: &GpuMatrix<D, T>, sort: bool) -> Result<GpuMatrix<D, T>> {
        for (what, n) in [("columns", m.ncols), ("rows", m.nrows)] {
            if n >= u32::MAX as usize {
                return Err(super::product::too_large(what, n));
            }
        }
        let kernels = self.masked_kernels::<T>(Semiring::PlusTimes)?;
        self.launching(&kernels, |l| {
            let (rpt, col, val) = transpose_on_device(l, m, true)?;
            if sort {
                let args = SortRowsArgs {
                    crpt: rpt.ptr(),
                    ccol: col.ptr(),
                    cval: val.ptr(),
                    m: m.ncols as u32,
                };
                let blocks = l.grid(
                    m.ncols,
                    (THREADS / l.device.properties().warp_width.max(1)) as usize,
                );
                l.launch(0, Kernel::SortRows, shape(blocks, THREADS, 0), &args)?;
            }
            l.device.synchronize(&l.streams[0])?;
            Ok(GpuMatrix::of_arrays(
                (m.ncols, m.nrows),
                rpt,
                col,
                val,
                sort && m.sorted,
            ))
        })
    }
}

/// [`Error::DimensionMismatch`] unless A's columns are B's rows,
/// [`Error::MaskShape`] unless the mask is A's rows by B's columns.
pub(super) fn check_shapes(
    mask: (usize, usize),
    a: (usize, usize),
    b: (usize, usize),
) -> Result<()> {
    crate::reference::check_dimensions(a, b)?;
    if mask != (a.0, b.1) {
        return Err(Error::MaskShape {
            mask,
            product: (a.0, b.1),
        });
    }
    Ok(())
}

/// The mask's structure on the device: arrays of its own, or none when it
/// is A's (A's uploaded arrays serve).
pub(super) struct UploadedMask<'s, D: Device> {
    structure: Structure<'s>,
    own: Option<(DeviceArray<D, u64>, DeviceArray<D, u32>)>,
}

impl<'s, D: Device> UploadedMask<'s, D> {
    /// `structure` uploaded unless it is the host matrix `a`'s.
    pub(super) fn of<T: Scalar>(
        l: &Launcher<'_, D>,
        structure: Structure<'s>,
        a: CsrView<'_, T>,
    ) -> Result<Self> {
        let mask_is_a = std::ptr::eq(structure.row_offsets, a.row_offsets())
            && std::ptr::eq(structure.col_indices, a.col_indices());
        let own = if mask_is_a {
            None
        } else {
            let (dev, s) = (l.device, &l.streams[0]);
            let offsets: &[u64] = bytemuck::cast_slice(structure.row_offsets);
            Some((
                DeviceArray::from_host(dev, s, offsets, "row offsets of the mask", l.usage)?,
                DeviceArray::from_host(
                    dev,
                    s,
                    structure.col_indices,
                    "column indices of the mask",
                    l.usage,
                )?,
            ))
        };
        Ok(Self { structure, own })
    }

    /// The mask's arrays for the kernels (`ga`: A on the device).
    pub(super) fn arrays<T: Scalar>(&self, ga: &GpuMatrix<D, T>) -> MaskArrays {
        match &self.own {
            Some((rpt, col)) => MaskArrays {
                rpt: rpt.ptr(),
                col: col.ptr(),
                nrows: self.structure.nrows,
                ncols: self.structure.ncols,
                nnz: self.structure.nnz(),
                sorted: false,
            },
            None => MaskArrays::of(ga),
        }
    }
}

/// Sorted copies of A's and B's rows, each where it was needed.
type SortedCopies<T> = (Option<CsrMatrix<T>>, Option<CsrMatrix<T>>);

/// Sorted copies of A and of B (or Bᵀ, named `b_name`) where their rows
/// are not sorted ([`canonical`]); none for B when it is A's arrays.
///
/// # Errors
/// As [`canonical`].
pub(super) fn sorted_copies<T: Scalar>(
    a: CsrView<'_, T>,
    b: CsrView<'_, T>,
    b_name: &str,
) -> Result<SortedCopies<T>> {
    let a_copy = (!a.is_sorted()).then(|| canonical(a, "A")).transpose()?;
    let b_copy = (!a.same_arrays(&b) && !b.is_sorted())
        .then(|| canonical(b, b_name))
        .transpose()?;
    Ok((a_copy, b_copy))
}

/// [`Error::NotOnBackend`] naming the first of `operands` on the device
/// whose rows are not known to be sorted without repeated columns.
pub(super) fn require_sorted<D: Device, T: Scalar>(
    operands: [(&str, &GpuMatrix<D, T>); 2],
) -> Result<()> {
    match operands.into_iter().find(|(_, m)| !m.sorted) {
        Some((name, _)) => Err(Error::NotOnBackend(format!(
            "a masked product on the device needs {name}'s rows sorted without repeated \
             columns (check them when borrowing the arrays, or use the CPU backend)"
        ))),
        None => Ok(()),
    }
}

/// `m` with its rows sorted (two stable counting-sort transposes);
/// [`Error::NotOnBackend`] naming the first row that repeats a column
/// (the dot products would meet only one of its entries).
fn canonical<T: Scalar>(m: CsrView<'_, T>, name: &str) -> Result<CsrMatrix<T>> {
    let sorted = m.transpose()?.view().transpose()?;
    if let Err(Error::UnsortedRow { row, col, .. }) = sorted.view().check_sorted() {
        return Err(Error::NotOnBackend(format!(
            "row {row} of {name} repeats column {col}: masked products on the GPU need rows \
             without repeated columns (the CPU backend takes them)"
        )));
    }
    Ok(sorted)
}

impl<D: Device> GpuEngine<D> {
    /// `m` (rows sorted without repeated columns) copied to the device
    /// through the staging buffers, its values only when `values`.
    pub(super) fn upload_sorted<T: Scalar>(
        &self,
        l: &Launcher<'_, D>,
        m: CsrView<'_, T>,
        values: bool,
    ) -> Result<GpuMatrix<D, T>> {
        let (dev, s) = (l.device, &l.streams[0]);
        if m.nrows() >= u32::MAX as usize {
            return Err(super::product::too_large("rows", m.nrows()));
        }
        let nval = if values { m.nnz() } else { 0 };
        let rpt = DeviceArray::<D, u64>::alloc(dev, s, m.nrows() + 1, "row offsets", l.usage)?;
        let col = DeviceArray::<D, u32>::alloc(dev, s, m.nnz(), "column indices", l.usage)?;
        let val = DeviceArray::<D, T>::alloc(dev, s, nval, "values", l.usage)?;
        let parts: Vec<(&[u8], &D::Buffer)> = [
            (bytemuck::cast_slice(m.row_offsets()), &rpt.buf),
            (bytemuck::cast_slice(m.col_indices()), &col.buf),
            (bytemuck::cast_slice(&m.values()[..nval]), &val.buf),
        ]
        .into_iter()
        .filter_map(|(bytes, buf)| Some((bytes, buf.as_ref()?)))
        .collect();
        self.staging.with(|st| st.upload(dev, s, &parts))?;
        Ok(GpuMatrix::of_arrays(
            (m.nrows(), m.ncols()),
            rpt,
            col,
            val,
            true,
        ))
    }
}

/// Forms Bᵀ, runs the dot products (one per entry of M, C's column
/// `SPGEMM_EMPTY` where none met) and compacts C, on stream 0; or, where
/// C's grid and the products are small (`grid.rs`), pushes the products
/// into a dense grid of C instead.
pub(super) fn masked_on_device<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    ms: MaskArrays,
    a: &GpuMatrix<D, T>,
    b: &GpuMatrix<D, T>,
    semiring: Semiring,
) -> Result<GpuMatrix<D, T>> {
    let dev = l.device;
    let (m, mnnz) = (ms.nrows, ms.nnz);
    if mnnz == 0 {
        return empty_product(l, &ms);
    }
    if grid_pays(&ms, a.nnz, b.nnz) {
        return grid_on_device(l, ms, false, a, b, semiring);
    }
    let (btrpt, btcol, btval) = transpose_on_device(l, b, semiring.reads_values())?;
    let ccol = l.alloc::<u32>(0, mnnz, "columns of C")?;
    let cval = l.alloc::<T>(0, mnnz, "values of C")?;
    let seg = lanes_per_entry(a, (b.nnz, b.ncols), dev.properties().warp_width);
    let args = MaskedDotArgs {
        mrpt: ms.rpt,
        mcol: ms.col,
        m: m as u32,
        mnnz: mnnz as u64,
        arpt: a.structure.rpt.ptr(),
        acol: a.structure.col.ptr(),
        aval: a.val.ptr(),
        brpt: b.structure.rpt.ptr(),
        bcol: b.structure.col.ptr(),
        bval: b.val.ptr(),
        btrpt: btrpt.ptr(),
        btcol: btcol.ptr(),
        btval: btval.ptr(),
        seg,
        ccol: ccol.ptr(),
        cval: cval.ptr(),
        heavy: DevicePtr(0),
        heavy_count: DevicePtr(0),
        heavy_cap: 0,
        total: DevicePtr(0),
    };
    dot_products(l, args)?;
    drop((btrpt, btcol, btval));
    compact(l, ms.rpt, (m, ms.ncols), ccol, cval, ms.sorted)
}

/// Launches the masked dot products `args` describes (its heavy list
/// filled in here) on stream 0: a segment of `args.seg` lanes per entry of
/// M, and a block per entry whose shorter side is long (up to
/// [`HEAVY_CAP`] of them; the hubs of a power-law graph), so that a few
/// long dot products do not leave the grid waiting on one segment.
pub(super) fn dot_products<D: Device>(l: &Launcher<'_, D>, mut args: MaskedDotArgs) -> Result<()> {
    let mnnz = args.mnnz as usize;
    let cap = mnnz.min(HEAVY_CAP);
    let heavy = l.alloc::<u64>(0, cap, "the mask's heavy entries")?;
    let count = l.alloc::<u64>(0, 1, "the mask's heavy entries' count")?;
    count.zero(l.device, &l.streams[0], 0, 1)?;
    args.heavy = heavy.ptr();
    args.heavy_count = count.ptr();
    args.heavy_cap = cap as u64;
    let per_block = (THREADS / args.seg) as usize;
    l.launch(
        0,
        Kernel::MaskedDot,
        shape(l.grid(mnnz, per_block), THREADS, 0),
        &args,
    )?;
    let long = MaskedDotHeavyArgs {
        heavy: args.heavy,
        heavy_count: args.heavy_count,
        heavy_cap: args.heavy_cap,
        mrpt: args.mrpt,
        mcol: args.mcol,
        m: args.m,
        arpt: args.arpt,
        acol: args.acol,
        aval: args.aval,
        brpt: args.brpt,
        bcol: args.bcol,
        bval: args.bval,
        btrpt: args.btrpt,
        btcol: args.btcol,
        btval: args.btval,
        ccol: args.ccol,
        cval: args.cval,
        total: args.total,
    };
    l.launch(
        0,
        Kernel::MaskedDotHeavy,
        shape(l.grid(cap, 1), HEAVY_THREADS, 0),
        &long,
    )?;
    l.release(heavy);
    l.release(count);
    Ok(())
}

/// C without entries, of the mask's shape.
pub(super) fn empty_product<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    ms: &MaskArrays,
) -> Result<GpuMatrix<D, T>> {
    let zeros: Vec<u64> = try_zeroed(ms.nrows + 1, "row offsets of C")?;
    let rpt = DeviceArray::from_host(l.device, &l.streams[0], &zeros, "row offsets of C", l.usage)?;
    let (col, val) = (
        l.alloc(0, 0, "columns of C")?,
        l.alloc(0, 0, "values of C")?,
    );
    Ok(GpuMatrix::of_arrays(
        (ms.nrows, ms.ncols),
        rpt,
        col,
        val,
        ms.sorted,
    ))
}

/// Candidate entries past which [`compact`] reads nnz(C) before moving
/// the kept entries (into room for nnz(C) only); up to it, C gets room for
/// every candidate and nnz(C) is read once at the end: one wait for the
/// device instead of two, for at most 12 MiB (f64) held past nnz(C) until
/// C is dropped.
const READ_AT_END: usize = 1 << 20;

/// C from `m` rows of entries at the row offsets `rows` (device, `m + 1`)
/// in `ccol` and `cval`, those whose column is `SPGEMM_EMPTY` dropped on
/// the device, entry by entry (one long row spreads over the whole grid):
/// each entry flagged kept or not, the flags scanned into the kept entries'
/// places (only their number read back), the kept entries moved there in
/// their order (C's rows sorted when `sorted`) and C's row offsets taken
/// from the places of the rows' first entries. Past [`READ_AT_END`]
/// candidates, no copy of the entries when every one is kept.
pub(super) fn compact<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    rows: DevicePtr,
    (m, ncols): (usize, usize),
    ccol: DeviceArray<D, u32>,
    cval: DeviceArray<D, T>,
    sorted: bool,
) -> Result<GpuMatrix<D, T>> {
    let n = ccol.len();
    let entries = shape(l.grid(n + 1, THREADS as usize), THREADS, 0);
    let places = l.alloc::<u64>(0, n + 1, "places of C's kept entries")?;
    let flags = KeepFlagsArgs {
        ccol: ccol.ptr(),
        n: n as u64,
        flags: places.ptr(),
    };
    l.launch(0, Kernel::KeepFlags, entries, &flags)?;
    l.scan(places.ptr(), n + 1)?;
    let crpt = l.alloc::<u64>(0, m + 1, "row offsets of C")?;
    let offsets = CompactOffsetsArgs {
        rows,
        m: m as u32,
        places: places.ptr(),
        crpt: crpt.ptr(),
    };
    let row_shape = shape(l.grid(m + 1, THREADS as usize), THREADS, 0);
    let move_kept = |room: usize| -> Result<(DeviceArray<D, u32>, DeviceArray<D, T>)> {
        let outcol = l.alloc::<u32>(0, room, "columns of C")?;
        let outval = l.alloc::<T>(0, room, "values of C")?;
        let args = CompactEntriesArgs {
            ccol: ccol.ptr(),
            cval: cval.ptr(),
            n: n as u64,
            places: places.ptr(),
            outcol: outcol.ptr(),
            outval: outval.ptr(),
        };
        l.launch(0, Kernel::CompactEntries, entries, &args)?;
        Ok((outcol, outval))
    };
    let mut total = [0u64];
    if n <= READ_AT_END {
        l.launch(0, Kernel::CompactOffsets, row_shape, &offsets)?;
        let (mut outcol, mut outval) = move_kept(n)?;
        // The read waits for every kernel above on stream 0.
        l.read(&places, n, &mut total)?;
        let nnz = total[0] as usize;
        outcol.truncate(nnz);
        outval.truncate(nnz);
        return Ok(GpuMatrix::of_arrays(
            (m, ncols),
            crpt,
            outcol,
            outval,
            sorted,
        ));
    }
    l.read(&places, n, &mut total)?;
    let nnz = total[0] as usize;
    l.launch(0, Kernel::CompactOffsets, row_shape, &offsets)?;
    if nnz == n {
        // Every entry kept: C's columns and values as they stand.
        l.device.synchronize(&l.streams[0])?;
        return Ok(GpuMatrix::of_arrays((m, ncols), crpt, ccol, cval, sorted));
    }
    let (outcol, outval) = move_kept(nnz)?;
    // The uncompacted arrays are freed when this returns: done with first.
    l.device.synchronize(&l.streams[0])?;
    Ok(GpuMatrix::of_arrays(
        (m, ncols),
        crpt,
        outcol,
        outval,
        sorted,
    ))
}

/// A matrix's row offsets, column indices and values on the device.
type DeviceArrays<D, T> = (DeviceArray<D, u64>, DeviceArray<D, u32>, DeviceArray<D, T>);

/// Bᵀ (`N×K`) from B on the device (its row offsets, columns and values;
/// no values for a semiring that reads none): B's entries counted per
/// column, the counts scanned on the device into Bᵀ's row offsets, then each
/// entry placed at its column's offset plus a ticket, so the rows of Bᵀ
/// come out in no particular order.
pub(super) fn transpose_on_device<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    b: &GpuMatrix<D, T>,
    values: bool,
) -> Result<DeviceArrays<D, T>> {
    let (dev, s) = (l.device, &l.streams[0]);
    let (n, nnz) = (b.ncols, b.nnz);
    let (brpt, bcol) = (&b.structure.rpt, &b.structure.col);
    let btrpt = l.alloc::<u64>(0, n + 1, "row offsets of Bᵀ")?;
    btrpt.zero(dev, s, 0, n + 1)?;
    let count = ColumnCountsArgs {
        bcol: bcol.ptr(),
        nnz: nnz as u64,
        counts: btrpt.ptr(),
    };
    l.launch(
        0,
        Kernel::ColumnCounts,
        shape(l.grid(nnz, THREADS as usize), THREADS, 0),
        &count,
    )?;
    l.scan(btrpt.ptr(), n + 1)?;
    let counts = l.alloc::<u32>(0, n, "tickets per column of B")?;
    counts.zero(dev, s, 0, n)?;
    let btcol = l.alloc::<u32>(0, nnz, "column indices of Bᵀ")?;
    let btval = l.alloc::<T>(0, if values { nnz } else { 0 }, "values of Bᵀ")?;
    let scatter = TransposeScatterArgs {
        brpt: brpt.ptr(),
        bcol: bcol.ptr(),
        bval: b.val.ptr(),
        k: b.nrows as u32,
        nnz: nnz as u64,
        btrpt: btrpt.ptr(),
        fill: counts.ptr(),
        btcol: btcol.ptr(),
        btval: btval.ptr(),
    };
    // THREADS · SPGEMM_SCATTER_PER_THREAD (8) covers a block's entries.
    l.launch(
        0,
        Kernel::TransposeScatter,
        shape(l.grid(nnz, SCATTER_CHUNK), THREADS, 0),
        &scatter,
    )?;
    Ok((btrpt, btcol, btval))
}
