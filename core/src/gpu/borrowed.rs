//! Matrices read in place from another library's device arrays (CuPy,
//! PyTorch): their structure checked on the device before any product
//! indexes with it (`checks.cuh`: a thread per row for the offsets, a
//! thread per four entries for the columns, 16 bytes read back per matrix), int32
//! row offsets widened and int64 column indices narrowed in the same pass.
//! On the way out, C's row offsets narrowed to int32 for them.

use super::checks::{run_checks, CheckedStructure, DeviceCsr};
use super::engine::{plan_matches, GpuEngine};
use super::kernels::IndexWidth;
use super::launch::Launcher;
use super::matrix::{GpuMatrix, GpuPlan, Structure};
use super::memory::DeviceArray;
use super::pipeline::{narrow_offsets, Enqueued};
use super::product::too_large;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::scalar::Scalar;
use std::sync::Arc;

impl<D: Device> GpuEngine<D> {
    /// A matrix over `arrays`, read in place, its structure checked on the
    /// device first: row offsets from 0 to `nnz`, never decreasing; every
    /// column in `0..ncols`; and, when `check_sorted`, rows sorted without
    /// duplicates (which lets single-entry rows of A be copied directly).
    /// 32-bit row offsets are widened into a new array, 64-bit column
    /// indices narrowed into one; the other arrays are not copied.
    /// [`GpuEngine::borrow_devices`] checks several matrices with one
    /// read-back.
    ///
    /// # Errors
    /// The error the host checks give for the same fault
    /// ([`Error::RowOffsetsStart`], [`Error::RowOffsetsDecrease`],
    /// [`Error::RowOffsetsEnd`], [`Error::ColumnOutOfRange`] — or
    /// [`Error::IndexOutOfRange`] for a negative column —,
    /// [`Error::UnsortedRow`]), naming the first faulty row;
    /// [`Error::TooLarge`] beyond `u32::MAX - 1` rows or columns; device
    /// errors.
    ///
    /// # Safety
    /// The arrays are allocated on this engine's device with those lengths
    /// and types, complete (no writes in flight on any stream), and stay
    /// allocated and unchanged while the matrix and every product or plan
    /// made from it live.
    pub unsafe fn borrow_device<T: Scalar>(
        &self,
        arrays: DeviceCsr,
        check_sorted: bool,
    ) -> Result<GpuMatrix<D, T>> {
        // SAFETY: the caller's guarantee.
        let [m] = unsafe { self.borrow_devices([(arrays, check_sorted)]) }?;
        Ok(m)
    }

    /// The matrices over several callers' arrays (`(arrays,
    /// check_sorted)` each, as [`GpuEngine::borrow_device`] takes them),
    /// checked by one pass of kernels with one read-back of the faults
    /// (16 bytes per matrix), so that the two operands of a product pay
    /// for one synchronisation rather than two.
    ///
    /// # Errors
    /// As [`GpuEngine::borrow_device`], for the first matrix in `operands`
    /// with a fault.
    ///
    /// # Safety
    /// As [`GpuEngine::borrow_device`], for every matrix.
    pub unsafe fn borrow_devices<T: Scalar, const N: usize>(
        &self,
        operands: [(DeviceCsr, bool); N],
    ) -> Result<[GpuMatrix<D, T>; N]> {
        for (arrays, _) in &operands {
            if arrays.nrows > u32::MAX as usize - 1 {
                return Err(too_large("rows", arrays.nrows));
            }
            if arrays.ncols > u32::MAX as usize - 1 {
                return Err(too_large("columns", arrays.ncols));
            }
        }
        // SAFETY: the caller's guarantee.
        let checked =
            self.with_launcher::<T, _>(|l| unsafe { checked_structures(l, &operands) })?;
        let mut checked = checked.into_iter();
        Ok(operands.map(|(arrays, check_sorted)| {
            let (rpt, col) = checked.next().expect("one structure per operand");
            // SAFETY: the caller's guarantee.
            let val = unsafe { DeviceArray::borrowed(&self.device, arrays.values, arrays.nnz) };
            GpuMatrix {
                nrows: arrays.nrows,
                ncols: arrays.ncols,
                nnz: arrays.nnz,
                structure: Arc::new(Structure {
                    rpt,
                    col,
                    host: None,
                }),
                val,
                sorted: check_sorted,
            }
        }))
    }

    /// `m`'s `nrows + 1` row offsets as int32, in a new device array
    /// complete when this returns, for another library whose CSR matrices
    /// hold int32 row offsets beside int32 column indices (CuPy, PyTorch),
    /// without a conversion of its own; `None` when nnz exceeds
    /// `i32::MAX`.
    ///
    /// # Errors
    /// Device errors (out of memory).
    pub fn row_offsets_i32<T: Scalar>(
        &self,
        m: &GpuMatrix<D, T>,
    ) -> Result<Option<DeviceArray<D, i32>>> {
        if m.nnz > i32::MAX as usize {
            return Ok(None);
        }
        self.with_launcher::<T, _>(|l| {
            let out = narrow_offsets(l, &m.structure.rpt, m.nrows + 1)?;
            self.device.synchronize(&l.streams[0])?;
            Ok(Some(out))
        })
    }

    /// `C = A·B` (from `plan`'s symbolic phase when given, which `a` and
    /// `b` must match) left running in the order of another library's
    /// stream: returns once the product's kernels are enqueued, after
    /// making `stream` wait for them, so that work enqueued on `stream`
    /// afterwards (CuPy's or PyTorch's next operation) sees C complete
    /// without the host waiting. With `int32_offsets`, C's row offsets are
    /// also narrowed to int32 (see [`GpuEngine::row_offsets_i32`]) in the
    /// same order. The host still waits inside for what it must read (bin
    /// counts, nnz(C)); [`PhaseEvents::times`](super::PhaseEvents::times) waits for the end.
    ///
    /// # Errors
    /// As [`GpuEngine::multiply`] and [`GpuEngine::numeric`]; errors of
    /// kernels still running surface in the caller's next synchronisation
    /// or in [`PhaseEvents::times`](super::PhaseEvents::times).
    ///
    /// # Safety
    /// `stream` is a stream of this engine's device in its context (0: the
    /// legacy default stream) that outlives this call. `a` and `b` (and
    /// arrays borrowed by them) stay allocated and unchanged until the
    /// product is done: work on `stream` after this call is ordered after
    /// it, so memory the caller frees into a pool that reuses it in that
    /// stream's order (CuPy's, PyTorch's) is safe.
    pub unsafe fn multiply_ordered<T: Scalar>(
        &self,
        a: &GpuMatrix<D, T>,
        b: &GpuMatrix<D, T>,
        plan: Option<&GpuPlan<D, T>>,
        stream: u64,
        int32_offsets: bool,
    ) -> Result<Enqueued<D, T>> {
        if let Some(plan) = plan {
            plan_matches(plan, a, b)?;
        }
        let run = self.with_product(a, b, |p| {
            let run = p.enqueue(plan, int32_offsets)?;
            // SAFETY: the caller's guarantee.
            let caller = unsafe { self.device.borrow_stream(stream) };
            self.device.wait(&caller, run.events.done())?;
            Ok(run)
        })?;
        Ok(run.0)
    }

    /// A matrix with `m`'s structure (shared, not copied) and the `nnz`
    /// values of type `T` at device address `values`, which the caller
    /// owns: new values for a plan's numeric phase without a copy.
    ///
    /// # Safety
    /// `values` holds `m.nnz()` values of `T` on this engine's device,
    /// complete, allocated and unchanged while the returned matrix and
    /// every product made from it live.
    pub unsafe fn borrow_device_values<T: Scalar>(
        &self,
        m: &GpuMatrix<D, T>,
        values: u64,
    ) -> GpuMatrix<D, T> {
        GpuMatrix {
            // SAFETY: the caller's guarantee.
            val: unsafe { DeviceArray::borrowed(&self.device, values, m.nnz) },
            structure: m.structure.clone(),
            ..*m
        }
    }
}

/// The checked structures of `operands`: u64 row offsets (the caller's,
/// or widened) and u32 column indices (the caller's, or narrowed), in
/// order.
///
/// # Safety
/// As [`GpuEngine::borrow_device`], for every operand.
unsafe fn checked_structures<D: Device>(
    l: &Launcher<'_, D>,
    operands: &[(DeviceCsr, bool)],
) -> Result<Vec<CheckedStructure<D>>> {
    // SAFETY: the caller's guarantee.
    let (faults, out) = unsafe { run_checks(l, operands) }?;
    for (&(arrays, _), words) in operands.iter().zip(faults.chunks(2)) {
        // SAFETY: the caller's guarantee.
        if let Some(e) = unsafe { fault(l, arrays, [words[0], words[1]]) }? {
            return Err(e);
        }
    }
    Ok(out)
}

/// The error that the fault words of `arrays` name, if any: each holds
/// the complement of the first fault's code, or 0 (`checks.cuh`).
///
/// # Safety
/// As [`GpuEngine::borrow_device`].
unsafe fn fault<D: Device>(
    l: &Launcher<'_, D>,
    arrays: DeviceCsr,
    words: [u64; 2],
) -> Result<Option<Error>> {
    let [offsets_code, entries_code] = words.map(|w| (w != 0).then_some(!w));
    // The offsets' fault first: the entries' rows rely on them.
    if let Some(code) = offsets_code {
        let (row, kind) = ((code >> 3) as usize, code & 7);
        // SAFETY: the caller's guarantee.
        return Ok(Some(unsafe { offsets_fault(l, arrays, row, kind) }?));
    }
    if let Some(code) = entries_code {
        let (position, unsorted) = ((code >> 1) as usize, code & 1 == 1);
        // SAFETY: the caller's guarantee.
        return Ok(Some(unsafe {
            entries_fault(l, arrays, position, unsorted)
        }?));
    }
    Ok(None)
}

/// `n` indices of `width` at device address `ptr` (an array of `len`)
/// from `start`, read to the host.
///
/// # Safety
/// `ptr` holds `len` indices of `width` on the launcher's device, and
/// `start + n <= len`.
unsafe fn read_indices<D: Device>(
    l: &Launcher<'_, D>,
    (ptr, width, len): (u64, IndexWidth, usize),
    start: usize,
    n: usize,
) -> Result<Vec<i64>> {
    let (dev, s) = (l.device, &l.streams[0]);
    Ok(match width {
        IndexWidth::I32 => {
            // SAFETY: the caller's guarantee.
            let a = unsafe { DeviceArray::<D, i32>::borrowed(dev, ptr, len) };
            let mut v = vec![0i32; n];
            a.read(dev, s, start, &mut v)?;
            v.into_iter().map(i64::from).collect()
        }
        IndexWidth::I64 => {
            // SAFETY: the caller's guarantee.
            let a = unsafe { DeviceArray::<D, i64>::borrowed(dev, ptr, len) };
            let mut v = vec![0i64; n];
            a.read(dev, s, start, &mut v)?;
            v
        }
    })
}

/// `v`, a row offset that passed the checks, as a `usize`.
fn as_usize(v: i64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// The row offset `value` at `position` as a `usize`, or the error naming
/// it when it is negative (its own fault, whatever the kernel found).
fn offset_at(position: usize, value: i64, nnz: usize) -> std::result::Result<usize, Error> {
    usize::try_from(value).map_err(|_| Error::IndexOutOfRange {
        what: "row offset",
        position,
        value: value.to_string(),
        limit: nnz as u128,
    })
}

/// The error for fault `kind` of the row offsets in `row` (see
/// `checks.cuh`), with the values it names read from the device.
///
/// # Safety
/// As [`GpuEngine::borrow_device`].
unsafe fn offsets_fault<D: Device>(
    l: &Launcher<'_, D>,
    arrays: DeviceCsr,
    row: usize,
    kind: u64,
) -> Result<Error> {
    let (nrows, nnz) = (arrays.nrows, arrays.nnz);
    let offsets = (arrays.row_offsets, arrays.offsets_width, nrows + 1);
    let at = match kind {
        0 => 0,
        4 => nrows,
        _ => row,
    };
    let n = if kind == 0 || kind == 4 { 1 } else { 2 };
    // SAFETY: the caller's guarantee; `at + n <= nrows + 1`.
    let v = unsafe { read_indices(l, offsets, at, n) }?;
    let mut values = Vec::with_capacity(n);
    for (k, &x) in v.iter().enumerate() {
        match offset_at(at + k, x, nnz) {
            Ok(x) => values.push(x),
            Err(e) => return Ok(e),
        }
    }
    Ok(match kind {
        0 => Error::RowOffsetsStart(values[0]),
        4 => Error::RowOffsetsEnd {
            last: values[0],
            nnz,
        },
        _ => Error::RowOffsetsDecrease {
            row,
            start: values[0],
            end: values[1],
        },
    })
}

/// The error for the column index at `position` (out of range, or when
/// `unsorted` not above the one before it in its row), its row found by a
/// binary search in the (checked) row offsets on the device.
///
/// # Safety
/// As [`GpuEngine::borrow_device`].
unsafe fn entries_fault<D: Device>(
    l: &Launcher<'_, D>,
    arrays: DeviceCsr,
    position: usize,
    unsorted: bool,
) -> Result<Error> {
    let offsets = (arrays.row_offsets, arrays.offsets_width, arrays.nrows + 1);
    let indices = (arrays.col_indices, arrays.indices_width, arrays.nnz);
    // The row holding `position`: the last row starting at or before it.
    let (mut lo, mut hi) = (0usize, arrays.nrows);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        // SAFETY: the caller's guarantee; mid < nrows.
        if as_usize(unsafe { read_indices(l, offsets, mid, 1) }?[0]) <= position {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let row = lo;
    let before = usize::from(unsorted);
    // SAFETY: the caller's guarantee; the kernel found `position` below
    // nnz and, for an unsorted entry, above 0.
    let cols = unsafe { read_indices(l, indices, position - before, 1 + before) }?;
    let (ncols, col) = (arrays.ncols, cols[before]);
    Ok(if unsorted {
        Error::UnsortedRow {
            row,
            prev: cols[0] as u32,
            col: col as u32,
        }
    } else if col < 0 {
        Error::IndexOutOfRange {
            what: "column index",
            position,
            value: col.to_string(),
            limit: ncols.saturating_sub(1) as u128,
        }
    } else {
        Error::ColumnOutOfRange {
            row,
            col: col as u64,
            ncols,
        }
    })
}
