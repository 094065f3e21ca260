//! A whole breadth-first search on one device: each level is the masked
//! product `f'⟨¬v⟩ = f any.pair A` pushed into a dense grid of one row
//! (`grid.rs`'s kernels), with the visited set v kept as the grid's mask
//! bitmap on the device from level to level rather than uploaded as a
//! mask, and the new vertices appended to the next level's `1×n` row as
//! they are visited (its columns in no particular order, which the push
//! takes as they come).
//! A is read in place, its rows in any order; one read of nnz(f') a level
//! is the only wait for the device. Levels as in [`crate::graph`].

use super::engine::GpuEngine;
use super::kernels::{DevicePtr, GridVisitArgs, Kernel};
use super::kernels::{GridPrepareArgs, GridProductsArgs};
use super::launch::{shape, Launcher};
use super::matrix::GpuMatrix;
use super::memory::DeviceArray;
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::Result;
use crate::graph::check_source;
use crate::scalar::Scalar;
use crate::semiring::Semiring;

/// Threads per block of the search's kernels (the grid's).
const THREADS: u32 = 256;

/// Bits of one word of the bitmaps (`SPGEMM_GRID_WORD_BITS`).
const WORD_BITS: usize = 32;

/// Products a block of the grid's product kernel takes at a time.
const TILE: usize = THREADS as usize * 4;

/// A breadth-first search's result on the device.
pub struct SearchLevels<D: Device> {
    /// Each vertex's level (`n` of them): 0 for the source, `u32::MAX`
    /// where no path leads (−1 read as an `int32`).
    pub levels: DeviceArray<D, u32>,
    /// Levels reached, the source's included (the largest level plus one).
    pub depth: usize,
}

impl<D: Device> GpuEngine<D> {
    /// Each vertex's level in a breadth-first search of A's graph (`n×n`,
    /// on this device, rows in any order, values never read) from vertex
    /// `source`, every level `f'⟨¬v⟩ = f any.pair A` on the device (module
    /// docs): the push step of Yang, Buluç and Owens, "Implementing
    /// Push-Pull Efficiently in GraphBLAS" (ICPP 2018), with the visited
    /// set a bitmap kept between levels. Returns when the search is done.
    ///
    /// # Errors
    /// As [`check_source`]; device errors (out of memory for the
    /// bitmaps, two frontiers of `n` vertices and `n` levels).
    pub fn bfs_levels_device<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        source: usize,
    ) -> Result<SearchLevels<D>> {
        check_source((a.nrows, a.ncols), source)?;
        let kernels = self.masked_kernels::<T>(Semiring::AnyPair)?;
        self.launching(&kernels, |l| search(l, a, source))
    }

    /// [`GpuEngine::bfs_levels_device`] from the host: A's structure
    /// uploaded (not its values), the levels downloaded as `i32` (−1 where
    /// no path leads).
    ///
    /// # Errors
    /// As [`GpuEngine::bfs_levels_device`] and [`GpuEngine::upload`].
    pub fn bfs_levels<T: Scalar>(&self, a: CsrView<'_, T>, source: usize) -> Result<Vec<i32>> {
        check_source(a.shape(), source)?;
        let ga = self.upload_structure(a)?;
        let kernels = self.masked_kernels::<T>(Semiring::AnyPair)?;
        self.launching(&kernels, |l| {
            let found = search(l, &ga, source)?;
            let mut levels = vec![0i32; a.nrows()];
            let out: &mut [u32] = bytemuck::cast_slice_mut(&mut levels);
            found.levels.read(l.device, &l.streams[0], 0, out)?;
            Ok(levels)
        })
    }
}

/// The search on `l`'s stream 0 (see [`GpuEngine::bfs_levels_device`]).
/// A level: the graph's row lengths per frontier vertex, scanned; C's bitmap
/// zeroed and the products pushed into it past the visited set; the new
/// vertices visited, given their level and appended to the next frontier,
/// whose size is counted into the frontier's row offsets `[0, nnz(f')]`
/// and read back.
fn search<D: Device, T: Scalar>(
    l: &Launcher<'_, D>,
    a: &GpuMatrix<D, T>,
    source: usize,
) -> Result<SearchLevels<D>> {
    let (dev, s) = (l.device, &l.streams[0]);
    let n = a.nrows;
    let words = n.div_ceil(WORD_BITS);
    let per_word = shape(l.grid(words, THREADS as usize), THREADS, 0);
    // The visited set (the grid's mask), C's bitmap, the levels.
    let visited = l.alloc::<u32>(0, words, "the visited set's bitmap")?;
    visited.zero(dev, s, 0, words)?;
    let hit = l.alloc::<u32>(0, words, "the new level's bitmap")?;
    let levels = l.alloc::<u32>(0, n, "levels")?;
    // The frontier as a 1×n row (no values: any_pair reads none): row
    // offsets, vertices (two arrays, swapped each level), products per
    // vertex.
    let rpt = DeviceArray::from_host(dev, s, &[0u64, 1], "the frontier's row offsets", l.usage)?;
    let mut cols = [
        l.alloc::<u32>(0, n, "the frontier")?,
        l.alloc::<u32>(0, n, "the next frontier")?,
    ];
    let offs = l.alloc::<u64>(0, n + 1, "products per vertex of the frontier")?;
    // n > 0 (the source is a vertex): both arrays have a buffer.
    if let (Some(v), Some(f)) = (&visited.buf, &cols[0].buf) {
        let bit = 1u32 << (source % WORD_BITS);
        dev.copy_to_device(s, bytemuck::bytes_of(&bit), v, source / WORD_BITS * 4)?;
        dev.copy_to_device(s, bytemuck::bytes_of(&(source as u32)), f, 0)?;
    }
    let visit = |hit: &DeviceArray<D, u32>, depth: u32, next: DevicePtr| {
        let args = GridVisitArgs {
            hit: hit.ptr(),
            nwords: words as u64,
            n: n as u64,
            maskbits: visited.ptr(),
            levels: levels.ptr(),
            depth,
            next,
            found: rpt.ptr_to(1),
        };
        l.launch(0, Kernel::GridVisit, per_word, &args)
    };
    visit(&visited, 0, DevicePtr(0))?;
    let (mut frontier, mut depth) = (1usize, 0u32);
    while frontier > 0 && a.nnz > 0 {
        depth += 1;
        let (now, next) = (cols[0].ptr(), cols[1].ptr());
        let prepare = GridPrepareArgs {
            acol: now,
            annz: frontier as u64,
            brpt: a.structure.rpt.ptr(),
            lens: offs.ptr(),
            mrpt: rpt.ptr(),
            mcol: now,
            m: 1,
            mnnz: 0,
            words: words as u32,
            maskbits: visited.ptr(),
            gval: DevicePtr(0),
            nvals: 0,
        };
        l.launch(
            0,
            Kernel::GridPrepare,
            shape(l.grid(frontier + 1, THREADS as usize), THREADS, 0),
            &prepare,
        )?;
        l.scan(offs.ptr(), frontier + 1)?;
        hit.zero(dev, s, 0, words)?;
        let products = GridProductsArgs {
            arpt: rpt.ptr(),
            acol: now,
            aval: DevicePtr(0),
            m: 1,
            annz: frontier as u64,
            offs: offs.ptr(),
            brpt: a.structure.rpt.ptr(),
            bcol: a.structure.col.ptr(),
            bval: a.val.ptr(),
            n: n as u32,
            words: words as u32,
            maskbits: visited.ptr(),
            complement: 1,
            hit: hit.ptr(),
            gval: DevicePtr(0),
        };
        // At most nnz(A) products, their count on the device.
        l.launch(
            0,
            Kernel::GridProducts,
            shape(l.grid(a.nnz, TILE), THREADS, 0),
            &products,
        )?;
        // The products have read this frontier's offsets: the next one's
        // size is counted into them.
        rpt.zero(dev, s, 1, 1)?;
        visit(&hit, depth, next)?;
        let mut found = [0u64];
        l.read(&rpt, 1, &mut found)?;
        frontier = found[0] as usize;
        cols.swap(0, 1);
    }
    Ok(SearchLevels {
        levels,
        depth: (depth as usize).max(1),
    })
}
