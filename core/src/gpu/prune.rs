//! Pruning of C on the device (`prune.cuh`): the entries a
//! [`Prune`] drops are marked by a warp per row (or, for columns, per row
//! of Cᵀ formed on the device) and removed row by row by the masked
//! program's kernels, so that C is pruned before it leaves the device. After a
//! product whose numeric bins pruned their rows as they wrote them
//! (`row_prune.cuh`), only the other rows are marked, in place, before
//! the compaction.

use super::engine::GpuEngine;
use super::kernels::{
    DevicePtr, KeptCountsArgs, Kernel, MoveKeptArgs, PruneColumnsArgs, PruneRowsArgs,
};
use super::launch::{shape, Launcher};
use super::masked::{transpose_on_device, THREADS};
use super::matrix::GpuMatrix;
use super::memory::DeviceArray;
use super::prune_in_pass::bits;
use super::PhaseTimes;
use crate::device::{Device, LaunchShape};
use crate::error::Result;
use crate::scalar::Scalar;
use crate::semiring::{Prune, Semiring};
use std::sync::Arc;

impl<D: Device> GpuEngine<D> {
    /// `c` (`M×N`, on the device) pruned as `prune` says, C left on the
    /// device with its rows in their order (sorted when `c`'s are):
    /// entries with `|c_ij|` below [`Prune::below`] dropped, then at most
    /// [`Prune::keep`] of the largest magnitudes kept per row (per column
    /// with [`Prune::columns`], found through Cᵀ formed on the device),
    /// ties to the lower column (row), as
    /// [`crate::semiring::pruned`] does on the host. `c` is consumed: its
    /// values move into the result when nothing is dropped.
    ///
    /// The mark of a row longer than `keep` takes 9 to 13 passes over the
    /// row in 64-bit types, 5 to 9 in 32-bit ones (radix selection of the
    /// `keep`-th largest magnitude, 8 bits a pass, then of the last kept
    /// column among its ties when they are not all kept); none over the
    /// other rows.
    ///
    /// # Errors
    /// [`crate::Error::Prune`] for a negative or NaN threshold;
    /// [`crate::Error::TooLarge`] past `u32` rows or columns; device
    /// errors (compiling the masked program on first use, out of memory);
    /// host out of memory.
    pub fn prune_device<T: Scalar>(
        &self,
        c: GpuMatrix<D, T>,
        prune: &Prune<T>,
    ) -> Result<GpuMatrix<D, T>> {
        if prune.is_none() {
            return Ok(c);
        }
        prune.check()?;
        self.prune_marked(c, prune, None)
    }

    /// `C = A ⊕.⊗ B` (A `M×K`, B `K×N`) with C's columns pruned as
    /// `prune` says ([`Prune::columns`] with a `keep`), not after C is
    /// formed: `Cᵀ = Bᵀ ⊕.⊗ Aᵀ` is multiplied with its rows pruned as
    /// [`GpuEngine::multiply_semiring_pruned`] prunes rows (as they are
    /// written), from Aᵀ and Bᵀ formed on the device (one transpose when B
    /// is A; their rows in no order, which the product takes), and
    /// transposed back with its rows sorted
    /// ([`GpuEngine::transpose_device_sorted`]). Every `⊗` of
    /// [`Semiring`] commutes, so Cᵀ's products are C's. The phase times
    /// are Cᵀ's product's.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply_semiring_pruned`] and
    /// [`GpuEngine::transpose_device`].
    pub(super) fn multiply_columns_kept<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<(GpuMatrix<D, T>, PhaseTimes)> {
        crate::reference::check_dimensions((a.nrows, a.ncols), (b.nrows, b.ncols))?;
        let same = a.same_structure(b) && a.val.ptr_at(0) == b.val.ptr_at(0);
        // Unsorted: sorting them first was slower (H200, 2026-12-01).
        let at = self.transpose_device(a)?;
        let bt = if same {
            None
        } else {
            Some(self.transpose_device(b)?)
        };
        let rows = Prune {
            columns: false,
            ..*prune
        };
        let (ct, times) =
            self.multiply_semiring_pruned(bt.as_ref().unwrap_or(&at), &at, semiring, &rows)?;
        drop((at, bt));
        Ok((self.transpose_device_sorted(&ct)?, times))
    }

    /// [`GpuEngine::prune_device`] for `c` fresh from a product whose
    /// numeric bins pruned the rows whose bit is set in `pruned_rows` (one
    /// bit a row) as they wrote them, their dropped entries' columns
    /// `SPGEMM_EMPTY`: the other rows are marked (in place where `c`'s
    /// structure is its own), then every marked entry is compacted away;
    /// a `keep` per column follows as there.
    ///
    /// # Errors
    /// As [`GpuEngine::prune_device`].
    pub(super) fn prune_after_numeric<T: Scalar>(
        &self,
        c: GpuMatrix<D, T>,
        prune: &Prune<T>,
        pruned_rows: &DeviceArray<D, u32>,
    ) -> Result<GpuMatrix<D, T>> {
        prune.check()?;
        self.prune_marked(c, prune, Some(pruned_rows.ptr()))
    }

    /// [`GpuEngine::prune_device`]'s marks and compactions; `done`: the
    /// bitmap of [`GpuEngine::prune_after_numeric`].
    fn prune_marked<T: Scalar>(
        &self,
        c: GpuMatrix<D, T>,
        prune: &Prune<T>,
        done: Option<DevicePtr>,
    ) -> Result<GpuMatrix<D, T>> {
        for (what, n) in [("rows", c.nrows), ("columns", c.ncols)] {
            if n >= u32::MAX as usize {
                return Err(super::product::too_large(what, n));
            }
        }
        let kernels = self.masked_kernels::<T>(Semiring::PlusTimes)?;
        self.launching(&kernels, |l| {
            let rows_keep = if prune.columns { None } else { prune.keep };
            let c = match done {
                Some(done) => prune_rows_left(l, c, prune.below, rows_keep, done)?,
                None => prune_rows(l, c, prune.below, rows_keep)?,
            };
            let c = match prune.keep {
                Some(keep) if prune.columns => prune_columns(l, c, keep)?,
                _ => c,
            };
            l.device.synchronize(&l.streams[0])?;
            Ok(c)
        })
    }
}

/// The launch shape of the pruning kernels: a warp per row of `rows`, each
/// with a histogram of 256 `u32` bins in shared memory.
fn warp_per_row<D: Device>(l: &Launcher<'_, D>, rows: usize) -> LaunchShape {
    let warps_per_block = (THREADS / l.device.properties().warp_width.max(1)) as usize;
    shape(
        l.grid(rows, warps_per_block),
        THREADS,
        warps_per_block * 256 * 4,
    )
}

/// `c`'s rows pruned: below `below`, then past the `keep` largest.
fn prune_rows<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    c: GpuMatrix<D, T>,
    below: Option<T>,
    keep: Option<usize>,
) -> Result<GpuMatrix<D, T>> {
    let outcol = l.alloc::<u32>(0, c.nnz, "columns of the pruned C")?;
    let args = PruneRowsArgs {
        crpt: c.structure.rpt.ptr(),
        ccol: c.structure.col.ptr(),
        cval: c.val.ptr(),
        m: c.nrows as u32,
        below: below.map_or(0, bits),
        has_below: u32::from(below.is_some()),
        keep: keep.map_or(u64::MAX, |k| k as u64),
        done: DevicePtr(0),
        outcol: outcol.ptr(),
    };
    l.launch(0, Kernel::PruneRows, warp_per_row(l, c.nrows), &args)?;
    without_dropped(l, c, outcol)
}

/// `c`'s rows pruned as [`prune_rows`] prunes them but for those whose bit
/// is set in `done` (pruned already, their dropped entries marked), the
/// marks written into C's own columns where its structure is not shared
/// (else into a copy of them), then compacted away.
fn prune_rows_left<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    mut c: GpuMatrix<D, T>,
    below: Option<T>,
    keep: Option<usize>,
    done: DevicePtr,
) -> Result<GpuMatrix<D, T>> {
    let col = match Arc::get_mut(&mut c.structure) {
        Some(own) => std::mem::replace(&mut own.col, l.alloc(0, 0, "no columns")?),
        None => {
            let shared = &c.structure.col;
            let col = l.alloc::<u32>(0, shared.len(), "columns of the pruned C")?;
            if let (Some(src), Some(dst)) = (&shared.buf, &col.buf) {
                l.device
                    .copy_device(&l.streams[0], src, 0, dst, 0, col.len() * 4)?;
            }
            col
        }
    };
    let args = PruneRowsArgs {
        crpt: c.structure.rpt.ptr(),
        ccol: col.ptr(),
        cval: c.val.ptr(),
        m: c.nrows as u32,
        below: below.map_or(0, bits),
        has_below: u32::from(below.is_some()),
        keep: keep.map_or(u64::MAX, |k| k as u64),
        done,
        outcol: col.ptr(),
    };
    l.launch(0, Kernel::PruneRows, warp_per_row(l, c.nrows), &args)?;
    without_dropped(l, c, col)
}

/// `c`'s columns pruned to their `keep` largest, through Cᵀ.
fn prune_columns<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    c: GpuMatrix<D, T>,
    keep: usize,
) -> Result<GpuMatrix<D, T>> {
    let (ctrpt, ctcol, ctval) = transpose_on_device(l, &c, true)?;
    let outcol = l.alloc::<u32>(0, c.nnz, "columns of the pruned C")?;
    if let (Some(src), Some(dst)) = (&c.structure.col.buf, &outcol.buf) {
        l.device
            .copy_device(&l.streams[0], src, 0, dst, 0, c.nnz * 4)?;
    }
    let args = PruneColumnsArgs {
        ctrpt: ctrpt.ptr(),
        ctcol: ctcol.ptr(),
        ctval: ctval.ptr(),
        n: c.ncols as u32,
        keep: keep as u64,
        crpt: c.structure.rpt.ptr(),
        ccol: c.structure.col.ptr(),
        sorted: u32::from(c.sorted),
        outcol: outcol.ptr(),
    };
    l.launch(0, Kernel::PruneColumns, warp_per_row(l, c.ncols), &args)?;
    let pruned = without_dropped(l, c, outcol);
    drop((ctrpt, ctcol, ctval));
    pruned
}

/// `c` with the entries whose column in `outcol` (a marked copy of
/// `c`'s columns, or its own columns taken out of it) is `SPGEMM_EMPTY`
/// compacted away; its values move into the result.
fn without_dropped<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    c: GpuMatrix<D, T>,
    outcol: DeviceArray<D, u32>,
) -> Result<GpuMatrix<D, T>> {
    let GpuMatrix {
        nrows,
        ncols,
        structure,
        val,
        sorted,
        ..
    } = c;
    // The compaction synchronises before it returns: C's old structure is
    // done with when it is dropped here.
    compact_rows(l, structure.rpt.ptr(), (nrows, ncols), outcol, val, sorted)
}

/// C from `m` rows at the row offsets `rows` (device, `m + 1`) of `ccol`
/// and `cval`, the entries whose column is `SPGEMM_EMPTY` dropped on the
/// device row by row (`spgemm_kept_counts`, `spgemm_move_kept`: a warp a
/// row counts its kept entries, their scan gives C's row offsets, only
/// nnz(C) is read back, and a warp a row moves them in order). Each
/// entry's column is read twice and only kept entries are written, where
/// the masked program's entry-by-entry compaction writes and scans a
/// place for every entry. Synchronises before it returns.
fn compact_rows<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    rows: DevicePtr,
    (m, ncols): (usize, usize),
    ccol: DeviceArray<D, u32>,
    cval: DeviceArray<D, T>,
    sorted: bool,
) -> Result<GpuMatrix<D, T>> {
    let crpt = l.alloc::<u64>(0, m + 1, "row offsets of C")?;
    let grid = shape(
        l.grid(
            m,
            (THREADS / l.device.properties().warp_width.max(1)) as usize,
        ),
        THREADS,
        0,
    );
    let counts = KeptCountsArgs {
        crpt: rows,
        ccol: ccol.ptr(),
        m: m as u32,
        counts: crpt.ptr(),
    };
    l.launch(0, Kernel::KeptCounts, grid, &counts)?;
    l.scan(crpt.ptr(), m + 1)?;
    let mut total = [0u64];
    l.read(&crpt, m, &mut total)?;
    let nnz = total[0] as usize;
    let outcol = l.alloc::<u32>(0, nnz, "columns of C")?;
    let outval = l.alloc::<T>(0, nnz, "values of C")?;
    let moves = MoveKeptArgs {
        crpt: rows,
        ccol: ccol.ptr(),
        cval: cval.ptr(),
        m: m as u32,
        offsets: crpt.ptr(),
        outcol: outcol.ptr(),
        outval: outval.ptr(),
    };
    l.launch(0, Kernel::MoveKept, grid, &moves)?;
    l.device.synchronize(&l.streams[0])?;
    drop((ccol, cval));
    Ok(GpuMatrix::of_arrays(
        (m, ncols),
        crpt,
        outcol,
        outval,
        sorted,
    ))
}
