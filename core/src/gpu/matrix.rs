//! Matrices and plans on the device, the host arrays products are
//! downloaded into, and what a product reports (phase times, vendor runs).

use super::kernels::{DevicePtr, IndexWidth};
use super::memory::DeviceArray;
use crate::device::Device;
use crate::error::{try_zeroed, Result};
use crate::scalar::Scalar;
use std::sync::{Arc, Mutex};

/// A CSR matrix in device arrays that the caller owns, on the engine's
/// device: `nrows + 1` row offsets and `nnz` column indices of
/// `offsets_width` / `indices_width` (signed), `nnz` values of the product's
/// value type; addresses as `u64` (0 for an empty array).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceCsr {
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Stored entries.
    pub nnz: usize,
    /// Device address of the row offsets.
    pub row_offsets: u64,
    /// Their element type.
    pub offsets_width: IndexWidth,
    /// Device address of the column indices.
    pub col_indices: u64,
    /// Their element type.
    pub indices_width: IndexWidth,
    /// Device address of the values.
    pub values: u64,
}

/// Row structure of a matrix on the device, shared by every matrix that
/// has it (see [`GpuEngine::with_values`](super::GpuEngine::with_values)), with a host copy when it came
/// from the host (to check plans against).
pub(super) struct Structure<D: Device> {
    pub(super) rpt: DeviceArray<D, u64>,
    pub(super) col: DeviceArray<D, u32>,
    pub(super) host: Option<(Vec<usize>, Vec<u32>)>,
}

/// A CSR matrix in device memory: `nrows + 1` 64-bit row offsets, `nnz`
/// `u32` columns and `nnz` values.
pub struct GpuMatrix<D: Device, T> {
    pub(super) nrows: usize,
    pub(super) ncols: usize,
    pub(super) nnz: usize,
    pub(super) structure: Arc<Structure<D>>,
    pub(super) val: DeviceArray<D, T>,
    /// Rows sorted without duplicates (allows direct single-entry rows).
    pub(super) sorted: bool,
}

impl<D: Device, T: Scalar> GpuMatrix<D, T> {
    /// An `nrows × ncols` matrix over device arrays it owns (no host copy
    /// of the structure), its entries as many as `col` holds; `sorted`
    /// when its rows are known to be sorted without repeats.
    pub(super) fn of_arrays(
        (nrows, ncols): (usize, usize),
        rpt: DeviceArray<D, u64>,
        col: DeviceArray<D, u32>,
        val: DeviceArray<D, T>,
        sorted: bool,
    ) -> Self {
        GpuMatrix {
            nrows,
            ncols,
            nnz: col.len(),
            structure: Arc::new(Structure {
                rpt,
                col,
                host: None,
            }),
            val,
            sorted,
        }
    }

    /// Rows.
    pub fn nrows(&self) -> usize {
        self.nrows
    }
    /// Columns.
    pub fn ncols(&self) -> usize {
        self.ncols
    }
    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.nnz
    }
    /// Whether every row is known to be sorted without duplicates (found
    /// when the matrix was uploaded or checked; a product's C is).
    pub fn sorted_rows(&self) -> bool {
        self.sorted
    }
    /// Whether `self` and `other` share their structure (offsets and columns).
    pub fn same_structure(&self, other: &GpuMatrix<D, T>) -> bool {
        GpuMatrixRef::of(self).difference(other).is_none()
    }
    /// Device addresses of the row offsets (`nrows + 1` × `u64`), column
    /// indices (`nnz` × `u32`) and values (`nnz` × `T`); 0 for an empty
    /// array. Valid while the matrix lives, for handing C to another
    /// library without a copy (the Python package's CuPy and PyTorch
    /// results).
    pub fn device_pointers(&self) -> (u64, u64, u64) {
        (
            self.structure.rpt.ptr_at(0),
            self.structure.col.ptr_at(0),
            self.val.ptr_at(0),
        )
    }
}

/// The host arrays of a CSR matrix, allocated before the matrix is
/// downloaded into them.
pub(super) struct HostCsr<T> {
    pub(super) offsets: Vec<usize>,
    pub(super) cols: Vec<u32>,
    pub(super) vals: Vec<T>,
}

/// The place of a block of rows of C in C's host arrays: the rows' end
/// offsets, the entries before the block, and the block's columns and
/// values.
pub(super) struct RowsOf<'c, T> {
    pub(super) offsets: &'c mut [usize],
    pub(super) base: usize,
    pub(super) cols: &'c mut [u32],
    pub(super) vals: &'c mut [T],
}

impl<T: Scalar> HostCsr<T> {
    /// The places of consecutive blocks of rows in these arrays: block k
    /// has `blocks[k].0` rows and `blocks[k].1` entries (the sums must be
    /// the arrays' rows and entries). Each place is taken once, by the
    /// thread that fills it.
    pub(super) fn places(
        &mut self,
        blocks: &[(usize, usize)],
    ) -> Vec<Mutex<Option<RowsOf<'_, T>>>> {
        let mut places = Vec::with_capacity(blocks.len());
        let (mut o, mut cols, mut vals) = (
            &mut self.offsets[1..],
            &mut self.cols[..],
            &mut self.vals[..],
        );
        let mut base = 0;
        for &(rows, n) in blocks {
            let (po, ro) = std::mem::take(&mut o).split_at_mut(rows);
            let (pc, rc) = std::mem::take(&mut cols).split_at_mut(n);
            let (pv, rv) = std::mem::take(&mut vals).split_at_mut(n);
            places.push(Mutex::new(Some(RowsOf {
                offsets: po,
                base,
                cols: pc,
                vals: pv,
            })));
            (o, cols, vals) = (ro, rc, rv);
            base += n;
        }
        places
    }

    /// Arrays for `nrows` rows and `nnz` entries, zero pages not yet touched.
    pub(super) fn zeroed(nrows: usize, nnz: usize) -> Result<Self> {
        Ok(Self {
            offsets: try_zeroed(nrows + 1, "row offsets")?,
            cols: try_zeroed(nnz, "column indices")?,
            vals: try_zeroed(nnz, "values")?,
        })
    }
}

/// Milliseconds of each phase of one product, from device events, and the
/// peak device memory it used beyond its inputs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PhaseTimes {
    /// Setup: products per row, B's longest row.
    pub setup_ms: f64,
    /// Symbolic binning, symbolic kernels and scan.
    pub symbolic_ms: f64,
    /// Numeric binning, C's allocation and numeric kernels.
    pub numeric_ms: f64,
    /// The whole product, first event to last.
    pub total_ms: f64,
    /// Peak device bytes beyond A and B.
    pub peak_bytes: usize,
    /// Whether C was computed in one pass, with no symbolic phase
    /// ([`SymbolicMode::Bound`](super::SymbolicMode::Bound)); the numeric
    /// time is then the one pass's.
    pub one_pass: bool,
    /// Whether the one pass sized C from an estimate of nnz(C)
    /// ([`SymbolicMode::Estimate`](super::SymbolicMode::Estimate)) rather
    /// than nprod(C).
    pub one_pass_estimated: bool,
    /// Whether the estimate fell short of nnz(C), so that the one pass ran
    /// again into arrays of exactly nnz(C).
    pub one_pass_rerun: bool,
    /// Rows of A whose count the symbolic phase took from the row before
    /// them, having the same columns (runs of rows of one structure, as a
    /// finite-element node's degrees of freedom have), where a heavy
    /// symbolic phase looked for them; 0 otherwise, and when no symbolic
    /// phase ran (a plan's numeric phase, the one pass).
    pub rows_counted_once: usize,
}

/// One timed product by a vendor library (cuSPARSE, rocSPARSE) in the
/// same process, for side-by-side benchmarks: device-event times, inputs
/// already on the device, C's allocation included.
#[derive(Clone, Debug, PartialEq)]
pub struct VendorRun {
    /// Milliseconds of the whole product.
    pub ms: f64,
    /// Milliseconds of the library's own phases, in order.
    pub phases_ms: Vec<(&'static str, f64)>,
    /// nnz(C).
    pub nnz_c: usize,
    /// Work buffers plus C, bytes.
    pub peak_bytes: usize,
}

/// The symbolic result of `C = A·B`: C's row offsets on the device. Only
/// [`GpuEngine::symbolic`](super::GpuEngine::symbolic) makes one;
/// [`GpuEngine::numeric`](super::GpuEngine::numeric) reruns the
/// numeric phase for matrices of the same structure and refuses others.
pub struct GpuPlan<D: Device, T> {
    pub(super) a: GpuMatrixRef<D>,
    pub(super) b: GpuMatrixRef<D>,
    pub(super) crpt: Arc<DeviceArray<D, u64>>,
    pub(super) nnz: usize,
    /// The typical row of B found by setup (chooses G).
    pub(super) typical: usize,
    pub(super) _t: std::marker::PhantomData<T>,
}

/// The shape and structure of a matrix a plan was built for.
pub(super) struct GpuMatrixRef<D: Device> {
    pub(super) nrows: usize,
    pub(super) ncols: usize,
    structure: Arc<Structure<D>>,
}

impl<D: Device> GpuMatrixRef<D> {
    pub(super) fn of<T: Scalar>(m: &GpuMatrix<D, T>) -> Self {
        Self {
            nrows: m.nrows,
            ncols: m.ncols,
            structure: m.structure.clone(),
        }
    }
    /// `None` when `m` has this shape and the same structure arrays
    /// (shared) or equal host copies of them; otherwise what differs, in
    /// words: the shape, the entries, the first differing row (from the
    /// host copies), or that device-resident structures are compared only
    /// by identity.
    pub(super) fn difference<T: Scalar>(&self, m: &GpuMatrix<D, T>) -> Option<String> {
        use crate::structure::Structure as S;
        fn view(nrows: usize, ncols: usize, host: &(Vec<usize>, Vec<u32>)) -> S<'_> {
            S {
                nrows,
                ncols,
                row_offsets: &host.0,
                col_indices: &host.1,
            }
        }
        if (m.nrows, m.ncols) != (self.nrows, self.ncols) {
            return Some(format!(
                "is {}x{}, not {}x{}",
                m.nrows, m.ncols, self.nrows, self.ncols
            ));
        }
        if Arc::ptr_eq(&self.structure, &m.structure) {
            return None;
        }
        match (&self.structure.host, &m.structure.host) {
            (Some(x), Some(y)) => view(self.nrows, self.ncols, x).difference(&view(m.nrows, m.ncols, y)),
            _ => Some(format!(
                "({} entries) shares no structure arrays with it, and one of the two has no host copy to compare row by row",
                m.nnz
            )),
        }
    }
}

impl<D: Device, T> GpuPlan<D, T> {
    /// nnz(C).
    pub fn nnz(&self) -> usize {
        self.nnz
    }
}

/// A mask's structure on the device.
#[derive(Clone, Copy)]
pub(super) struct MaskArrays {
    pub(super) rpt: DevicePtr,
    pub(super) col: DevicePtr,
    pub(super) nrows: usize,
    pub(super) ncols: usize,
    pub(super) nnz: usize,
    pub(super) sorted: bool,
}

impl MaskArrays {
    pub(super) fn of<D: Device, U: Scalar>(m: &GpuMatrix<D, U>) -> Self {
        Self {
            rpt: m.structure.rpt.ptr(),
            col: m.structure.col.ptr(),
            nrows: m.nrows,
            ncols: m.ncols,
            nnz: m.nnz,
            sorted: m.sorted,
        }
    }
}
