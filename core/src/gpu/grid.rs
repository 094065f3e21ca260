//! Masked products pushed into a dense grid of C on the device, for masks
//! whose grid (rows times columns) is small against the operands: a
//! breadth-first search's step, `f⟨¬v⟩ = f ⊕.pair A` with the frontier `f`
//! and the visited set `v` one row each. Each product `a_ik ⊗ b_kj` the
//! mask keeps sets bit `j` of row `i`'s bitmap and, for semirings with
//! values, is added by `⊕` into a dense `M×N` array that starts at `⊕`'s
//! identity; the bitmaps are then counted, scanned and written out as C
//! with sorted rows. Neither B's transpose (the dot products' need) nor the
//! complement is formed: the push step of Yang, Buluç and Owens,
//! "Implementing Push-Pull Efficiently in GraphBLAS" (ICPP 2018), with the
//! bitmap output of SuiteSparse:GraphBLAS's saxpy (Davis, "Algorithm 1037:
//! SuiteSparse:GraphBLAS: Parallel Graph Algorithms in the Language of
//! Sparse Linear Algebra", ACM TOMS 49(3), 2023). Kernels: `grid.cuh`, in
//! the masked program.

use super::kernels::{GridCountsArgs, GridFillArgs, GridPrepareArgs, GridProductsArgs, Kernel};
use super::launch::{shape, Launcher};
use super::matrix::{GpuMatrix, MaskArrays};
use crate::device::Device;
use crate::error::Result;
use crate::scalar::Scalar;
use crate::semiring::Semiring;

/// Threads per block of the grid's kernels.
const THREADS: u32 = 256;

/// Bits of one word of the grid's bitmaps (`SPGEMM_GRID_WORD_BITS`).
const WORD_BITS: usize = 32;

/// Products a block takes at a time: `THREADS` threads of
/// `SPGEMM_GRID_ITEMS` (4) products.
const TILE: usize = THREADS as usize * 4;

/// Whether a product under the mask `m` (A `M×K` with `a_nnz` entries, B
/// with `b_nnz`) runs on the dense grid: the grid (`M·N`) no larger than A's
/// and B's entries together, as the explicit complement asks too, and the
/// products, at most `M · nnz(B)`, no more than twice those entries, which
/// is about what forming Bᵀ for the dot products touches (always so for one
/// row: its products reach each row of B at most once per entry of A).
pub(super) fn grid_pays(m: &MaskArrays, a_nnz: usize, b_nnz: usize) -> bool {
    let entries = a_nnz.saturating_add(b_nnz);
    m.ncols > 0
        && m.ncols < u32::MAX as usize
        && m.nrows < u32::MAX as usize
        && m.nrows
            .checked_mul(m.ncols)
            .is_some_and(|grid| grid <= entries)
        && m.nrows.saturating_mul(b_nnz) <= entries.saturating_mul(2)
}

/// `C⟨M⟩` (`complement` false) or `C⟨¬M⟩` (true) `= A ⊕.⊗ B` on the dense
/// grid, on stream 0: M's structure as a bitmap, the products pushed into
/// C's bitmap (and dense values, but for `any_pair`, whose values are all
/// 1), C written out with sorted rows. A's and B's rows may be in any
/// order and repeat columns. C's columns and values keep the grid's size
/// (`M·N` entries, no more than A's and B's) until C is dropped. Returns
/// when C is complete. The caller checks [`grid_pays`].
///
/// # Errors
/// Device errors (out of memory, a failed launch).
pub(super) fn grid_on_device<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    ms: MaskArrays,
    complement: bool,
    a: &GpuMatrix<D, T>,
    b: &GpuMatrix<D, T>,
    semiring: Semiring,
) -> Result<GpuMatrix<D, T>> {
    let (dev, s) = (l.device, &l.streams[0]);
    let (m, n) = (ms.nrows, ms.ncols);
    let words = n.div_ceil(WORD_BITS);
    let nwords = m * words;
    let maskbits = l.alloc::<u32>(0, nwords, "the mask's bitmap")?;
    maskbits.zero(dev, s, 0, nwords)?;
    let hit = l.alloc::<u32>(0, nwords, "C's bitmap")?;
    hit.zero(dev, s, 0, nwords)?;
    let nvals = if semiring == Semiring::AnyPair {
        0
    } else {
        m * n
    };
    let gval = l.alloc::<T>(0, nvals, "C's dense values")?;
    let offs = l.alloc::<u64>(0, a.nnz + 1, "products per entry of A")?;
    let prepare = GridPrepareArgs {
        acol: a.structure.col.ptr(),
        annz: a.nnz as u64,
        brpt: b.structure.rpt.ptr(),
        lens: offs.ptr(),
        mrpt: ms.rpt,
        mcol: ms.col,
        m: m as u32,
        mnnz: ms.nnz as u64,
        words: words as u32,
        maskbits: maskbits.ptr(),
        gval: gval.ptr(),
        nvals: nvals as u64,
    };
    let prepared = (a.nnz + 1).max(ms.nnz).max(nvals);
    l.launch(
        0,
        Kernel::GridPrepare,
        shape(l.grid(prepared, THREADS as usize), THREADS, 0),
        &prepare,
    )?;
    l.scan(offs.ptr(), a.nnz + 1)?;
    if a.nnz > 0 && b.nnz > 0 {
        let products = GridProductsArgs {
            arpt: a.structure.rpt.ptr(),
            acol: a.structure.col.ptr(),
            aval: a.val.ptr(),
            m: m as u32,
            annz: a.nnz as u64,
            offs: offs.ptr(),
            brpt: b.structure.rpt.ptr(),
            bcol: b.structure.col.ptr(),
            bval: b.val.ptr(),
            n: n as u32,
            words: words as u32,
            maskbits: maskbits.ptr(),
            complement: u32::from(complement),
            hit: hit.ptr(),
            gval: gval.ptr(),
        };
        // The products are counted on the device: at most M · nnz(B).
        let bound = m.saturating_mul(b.nnz);
        l.launch(
            0,
            Kernel::GridProducts,
            shape(l.grid(bound, TILE), THREADS, 0),
            &products,
        )?;
    }
    let places = l.alloc::<u64>(0, nwords + 1, "places of C's entries")?;
    let counts = GridCountsArgs {
        hit: hit.ptr(),
        nwords: nwords as u64,
        places: places.ptr(),
    };
    let per_word = shape(l.grid(nwords + 1, THREADS as usize), THREADS, 0);
    l.launch(0, Kernel::GridCounts, per_word, &counts)?;
    l.scan(places.ptr(), nwords + 1)?;
    // C's arrays sized for the whole grid (no larger than the operands),
    // so that C is written before its size is read: one wait, not two.
    let crpt = l.alloc::<u64>(0, m + 1, "row offsets of C")?;
    let mut ccol = l.alloc::<u32>(0, m * n, "columns of C")?;
    let mut cval = l.alloc::<T>(0, m * n, "values of C")?;
    let fill = GridFillArgs {
        hit: hit.ptr(),
        m: m as u32,
        words: words as u32,
        n: n as u32,
        places: places.ptr(),
        gval: gval.ptr(),
        crpt: crpt.ptr(),
        ccol: ccol.ptr(),
        cval: cval.ptr(),
    };
    l.launch(0, Kernel::GridFill, per_word, &fill)?;
    // The read waits for the fill; the grid's arrays are freed when this
    // returns.
    let mut total = [0u64];
    l.read(&places, nwords, &mut total)?;
    let nnz = total[0] as usize;
    ccol.truncate(nnz);
    cval.truncate(nnz);
    Ok(GpuMatrix::of_arrays((m, n), crpt, ccol, cval, true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::kernels::DevicePtr;

    fn mask(nrows: usize, ncols: usize) -> MaskArrays {
        MaskArrays {
            rpt: DevicePtr(0),
            col: DevicePtr(0),
            nrows,
            ncols,
            nnz: 0,
            sorted: true,
        }
    }

    #[test]
    fn one_row_pays_while_many_rows_pay_only_with_few_products() {
        // A breadth-first search's step: one row of 2^18 columns.
        assert!(grid_pays(&mask(1, 1 << 18), 100_000, 4_000_000));
        // The grid larger than the operands.
        assert!(!grid_pays(&mask(1, 1 << 24), 100_000, 4_000_000));
        // Three rows whose products (up to 3 · nnz(B)) pass twice the
        // operands' entries; two rows whose products do not.
        assert!(!grid_pays(&mask(3, 4096), 650, 32_000));
        assert!(grid_pays(&mask(2, 4096), 650, 32_000));
        // No columns, or too many for 32-bit column indices.
        assert!(!grid_pays(&mask(1, 0), 10, 10));
        assert!(!grid_pays(&mask(1, u32::MAX as usize), usize::MAX / 2, 1));
    }
}
