//! Products under a complemented structural mask on the device,
//! `C⟨¬M⟩ = A ⊕.⊗ B`, in one of three formulations. Where M's grid is small
//! against the operands and so are the products (a breadth-first search's
//! step), the products are pushed into a dense grid of C that M's bitmap
//! masks (`grid.rs`). Where only the grid is small, the complement is made
//! explicit on the device and its entries computed by the masked
//! program's dot products: the products it excludes are never formed.
//! Otherwise the product's own kernels compiled with the semiring compute
//! `A ⊕.⊗ B`, then a kernel marks each entry of C that M's row holds (a
//! binary search of M's sorted row per entry) and the masked program's
//! compaction drops them: masked-out entries are accumulated first and
//! removed after. Either way C never leaves the device unmasked.

use super::chunked::HostTimes;
use super::engine::GpuEngine;
use super::grid::{grid_on_device, grid_pays};
use super::kernels::{ComplementFillArgs, ComplementFlagsArgs, ComplementMarkArgs, Kernel};
use super::launch::{shape, Launcher};
use super::masked::{check_shapes, compact, masked_on_device, THREADS};
use super::matrix::{GpuMatrix, MaskArrays};
use super::memory::DeviceArray;
use crate::csr::CsrMatrix;
use crate::csr_view::CsrView;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use crate::semiring::{Mask, Prune, Semiring};
use std::time::Instant;

impl<D: Device> GpuEngine<D> {
    /// `C⟨¬M⟩ = A ⊕.⊗ B` on the device for matrices there (A `M×K`, B
    /// `K×N`, M `M×N`, its values never read; C left on the device, rows
    /// sorted): C's entries are those of `A ⊕.⊗ B` outside M's structure.
    /// M's rows must be sorted ([`GpuMatrix::sorted_rows`]) unless the
    /// dense grid takes the product; repeated columns in them are
    /// harmless. When M's rows times its columns are no more than A's and
    /// B's entries together, the products are pushed into a dense grid of
    /// C if they are few enough (see `grid_pays`), else, when A's and B's
    /// rows are sorted, the complement is made explicit and computed by dot
    /// products; otherwise by the product, M's entries then dropped.
    /// Returns when C is complete.
    ///
    /// # Errors
    /// [`Error::NotOnBackend`] when M's rows are not known to be sorted;
    /// [`Error::DimensionMismatch`], [`Error::MaskShape`]; as
    /// [`GpuEngine::multiply_semiring`].
    pub fn complement_device<T: Scalar, U: Scalar>(
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
        let m = MaskArrays::of(mask);
        if !mask.sorted && !grid_pays(&m, a.nnz, b.nnz) {
            return Err(Error::NotOnBackend(
                "a complemented mask on the device needs its rows sorted (check them when \
                 borrowing the arrays, or use the CPU backend)"
                    .into(),
            ));
        }
        self.complement_of(m, a, b, semiring)
    }

    /// [`GpuEngine::complement_device`] from the host to the host: A and B
    /// uploaded (once when they are the same arrays), M's structure
    /// uploaded (its rows sorted on the host first when they are not) or
    /// taken from A's when it is A's, C pruned on the device as `prune`
    /// says and downloaded; with the wall-clock times of the upload, the
    /// device's work and the download.
    ///
    /// # Errors
    /// [`Error::DimensionMismatch`], [`Error::MaskShape`]; as
    /// [`GpuEngine::multiply_semiring`] and [`GpuEngine::prune_device`];
    /// host out of memory.
    pub fn complement_host<T: Scalar>(
        &self,
        mask: Mask<'_>,
        a: CsrView<'_, T>,
        b: CsrView<'_, T>,
        semiring: Semiring,
        prune: &Prune<T>,
    ) -> Result<(CsrMatrix<T>, HostTimes)> {
        let structure = mask.structure();
        check_shapes((structure.nrows, structure.ncols), a.shape(), b.shape())?;
        let mut times = HostTimes {
            apart: true,
            ..HostTimes::default()
        };
        let t = Instant::now();
        let (ga, gb) = if a.same_arrays(&b) {
            (self.upload_with(a, false)?, None)
        } else {
            let [ga, gb] = self.upload_all([a, b], false)?;
            (ga, Some(gb))
        };
        let gb = gb.as_ref().unwrap_or(&ga);
        let mask_is_a = std::ptr::eq(structure.row_offsets, a.row_offsets())
            && std::ptr::eq(structure.col_indices, a.col_indices());
        let c = if mask_is_a && ga.sorted {
            times.upload_ms = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let c = self.complement_of(MaskArrays::of(&ga), &ga, gb, semiring)?;
            let c = self.prune_device(c, prune)?;
            times.multiply_ms = t.elapsed().as_secs_f64() * 1e3;
            c
        } else {
            let sorted_cols;
            let cols = if rows_sorted(structure.row_offsets, structure.col_indices) {
                structure.col_indices
            } else {
                sorted_cols = sort_rows(structure.row_offsets, structure.col_indices);
                &sorted_cols[..]
            };
            let streams = self.take_streams()?;
            let usage = super::memory::Usage::default();
            let offsets: &[u64] = bytemuck::cast_slice(structure.row_offsets);
            let uploaded = DeviceArray::from_host(
                &self.device,
                &streams[0],
                offsets,
                "row offsets of the mask",
                &usage,
            )
            .and_then(|rpt| {
                let col = DeviceArray::from_host(
                    &self.device,
                    &streams[0],
                    cols,
                    "column indices of the mask",
                    &usage,
                )?;
                self.device.synchronize(&streams[0])?;
                Ok((rpt, col))
            });
            self.give_streams(streams);
            let (rpt, col) = uploaded?;
            times.upload_ms = t.elapsed().as_secs_f64() * 1e3;
            let t = Instant::now();
            let m = MaskArrays {
                rpt: rpt.ptr(),
                col: col.ptr(),
                nrows: structure.nrows,
                ncols: structure.ncols,
                nnz: structure.nnz(),
                sorted: true,
            };
            let c = self.complement_of(m, &ga, gb, semiring)?;
            let c = self.prune_device(c, prune)?;
            times.multiply_ms = t.elapsed().as_secs_f64() * 1e3;
            c
        };
        let t = Instant::now();
        let c = self.download(&c)?;
        times.download_ms = t.elapsed().as_secs_f64() * 1e3;
        Ok((c, times))
    }

    /// `C⟨¬M⟩` by one of three formulations. When M's grid (its rows times
    /// its columns) is no larger than A's and B's entries together, the
    /// products are pushed into a dense grid of C masked by M's bitmap if
    /// they are few enough (`grid_pays`: one row's always are); else, when
    /// A's and B's rows are sorted, the complement is made explicit on the
    /// device and its entries computed by dot products
    /// ([`GpuEngine::masked_dot_device`]'s), so that the products it
    /// excludes are never formed (a breadth-first search's step: one row,
    /// the unvisited vertices). Otherwise `A ⊕.⊗ B` by the product's
    /// kernels, then the entries M holds marked and dropped.
    fn complement_of<T: Scalar>(
        &self,
        m: MaskArrays,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        semiring: Semiring,
    ) -> Result<GpuMatrix<D, T>> {
        if grid_pays(&m, a.nnz, b.nnz) {
            let kernels = self.masked_kernels::<T>(semiring)?;
            return self.launching(&kernels, |l| grid_on_device(l, m, true, a, b, semiring));
        }
        let grid = m.nrows.checked_mul(m.ncols);
        let small = grid.is_some_and(|g| g <= a.nnz + b.nnz);
        if small && a.sorted && b.sorted && m.ncols > 0 && m.ncols < u32::MAX as usize {
            let kernels = self.masked_kernels::<T>(semiring)?;
            return self.launching(&kernels, |l| {
                let (rpt, col) = explicit_complement(l, m)?;
                let explicit = MaskArrays {
                    rpt: rpt.ptr(),
                    col: col.ptr(),
                    nnz: col.len(),
                    sorted: true,
                    ..m
                };
                let c = masked_on_device(l, explicit, a, b, semiring)?;
                l.device.synchronize(&l.streams[0])?;
                drop((rpt, col));
                Ok(c)
            });
        }
        let (c, _) = self.multiply_semiring(a, b, semiring)?;
        if m.nnz == 0 || c.nnz == 0 {
            return Ok(c);
        }
        let kernels = self.masked_kernels::<T>(semiring)?;
        let crpt = c.structure.rpt.ptr();
        let GpuMatrix {
            nrows,
            ncols,
            structure,
            val,
            ..
        } = c;
        // C was just made: its structure is shared with nothing else.
        let structure = std::sync::Arc::try_unwrap(structure).map_err(|_| {
            Error::StructureMismatch(
                "the product's structure is shared; it is not compacted".into(),
            )
        })?;
        self.launching(&kernels, |l| {
            let mark = ComplementMarkArgs {
                crpt,
                ccol: structure.col.ptr(),
                m: nrows as u32,
                n: structure.col.len() as u64,
                mrpt: m.rpt,
                mcol: m.col,
            };
            l.launch(
                0,
                Kernel::ComplementMark,
                shape(l.grid(structure.col.len(), THREADS as usize), THREADS, 0),
                &mark,
            )?;
            let c = compact(l, crpt, (nrows, ncols), structure.col, val, true)?;
            l.device.synchronize(&l.streams[0])?;
            drop(structure.rpt);
            Ok(c)
        })
    }
}

/// The complement of M's structure (`m` rows, sorted) as row offsets and
/// sorted columns on the device: each of M's grid positions flagged, the
/// flags scanned into the entries' places, the entries written there.
fn explicit_complement<D: Device>(
    l: &Launcher<'_, D>,
    m: MaskArrays,
) -> Result<(DeviceArray<D, u64>, DeviceArray<D, u32>)> {
    let grid = m.nrows * m.ncols;
    let places = l.alloc::<u64>(0, grid + 1, "places of the complement's entries")?;
    let entries = shape(l.grid(grid + 1, THREADS as usize), THREADS, 0);
    let flags = ComplementFlagsArgs {
        mrpt: m.rpt,
        mcol: m.col,
        m: m.nrows as u32,
        ncols: m.ncols as u32,
        flags: places.ptr(),
    };
    l.launch(0, Kernel::ComplementFlags, entries, &flags)?;
    l.scan(places.ptr(), grid + 1)?;
    let mut total = [0u64];
    l.read(&places, grid, &mut total)?;
    let rpt = l.alloc::<u64>(0, m.nrows + 1, "row offsets of the complement")?;
    let col = l.alloc::<u32>(0, total[0] as usize, "columns of the complement")?;
    let fill = ComplementFillArgs {
        places: places.ptr(),
        m: m.nrows as u32,
        ncols: m.ncols as u32,
        rpt: rpt.ptr(),
        col: col.ptr(),
    };
    l.launch(0, Kernel::ComplementFill, entries, &fill)?;
    l.device.synchronize(&l.streams[0])?;
    Ok((rpt, col))
}

/// Whether every row's columns are non-decreasing.
fn rows_sorted(offsets: &[usize], cols: &[u32]) -> bool {
    offsets
        .windows(2)
        .all(|w| cols[w[0]..w[1]].windows(2).all(|p| p[0] <= p[1]))
}

/// The columns with each row sorted.
fn sort_rows(offsets: &[usize], cols: &[u32]) -> Vec<u32> {
    let mut out = cols.to_vec();
    for w in offsets.windows(2) {
        out[w[0]..w[1]].sort_unstable();
    }
    out
}
