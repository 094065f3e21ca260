//! Matrices read in place from another library's device arrays (CuPy,
//! PyTorch): their structure checked on the device before any product
//! indexes with it (`checks.cuh`: a thread per row for the offsets, a
//! thread per four entries for the columns, 16 bytes read back per matrix), int32
//! row offsets widened and int64 column indices narrowed in the same pass.
//! On the way out, C's row offsets narrowed to int32 for them.

use super::checks::{run_checks, CheckedStructure, PendingChecks};
use super::engine::{plan_matches, GpuEngine};
use super::faults::first_fault;
use super::launch::Launcher;
use super::matrix::{DeviceCsr, GpuMatrix, GpuPlan, Structure};
use super::memory::DeviceArray;
use super::pipeline::{narrow_offsets, Enqueued};
use super::product::{too_large, Product};
use crate::device::Device;
#[cfg(doc)]
use crate::error::Error;
use crate::error::Result;
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
        fits_u32(&operands)?;
        // SAFETY: the caller's guarantee.
        let checked =
            self.with_launcher::<T, _>(|l| unsafe { checked_structures(l, &operands) })?;
        let mut checked = checked.into_iter();
        Ok(operands.map(|operand| {
            let structure = checked.next().expect("one structure per operand");
            // SAFETY: the caller's guarantee.
            unsafe { self.borrowed_matrix(operand, structure) }
        }))
    }

    /// The matrix over the caller's `arrays` with its checked `structure`.
    ///
    /// # Safety
    /// As [`GpuEngine::borrow_device`].
    unsafe fn borrowed_matrix<T: Scalar>(
        &self,
        (arrays, check_sorted): (DeviceCsr, bool),
        (rpt, col): CheckedStructure<D>,
    ) -> GpuMatrix<D, T> {
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
    }

    /// `C = A·B` (`b` `None`: `A·A`) over callers' arrays, left running in
    /// the order of another library's `stream` as
    /// [`GpuEngine::multiply_ordered`] does, with the operands' structure
    /// checks ([`GpuEngine::borrow_device`]'s) launched ahead of the
    /// product on its stream but not waited for: their faults come back
    /// with setup's counters, the product's first read, and setup indexes
    /// nothing when there is one. One host wait fewer than borrowing
    /// first: on an H100 a wait costs about 20 µs, 2% of a 1 ms product
    /// (`docs/benchmarks/python-h100-2026-11-24.md`).
    ///
    /// # Errors
    /// As [`GpuEngine::borrow_device`] for the first operand with a fault
    /// (after waiting for the checks), and as
    /// [`GpuEngine::multiply_ordered`].
    ///
    /// # Safety
    /// As [`GpuEngine::borrow_device`] for both operands until the product
    /// is done, and `stream` as for [`GpuEngine::multiply_ordered`].
    pub unsafe fn multiply_borrowed_ordered<T: Scalar>(
        &self,
        a: (DeviceCsr, bool),
        b: Option<(DeviceCsr, bool)>,
        stream: u64,
        int32_offsets: bool,
    ) -> Result<Enqueued<D, T>> {
        let operands: Vec<_> = std::iter::once(a).chain(b).collect();
        fits_u32(&operands)?;
        self.with_launcher::<T, _>(|l| {
            let run = || {
                // SAFETY: the caller's guarantee, until the product is
                // done; `pending` lives through the product's first read.
                let (pending, structures) = unsafe { PendingChecks::launch(l, &operands) }?;
                let matrices: Vec<GpuMatrix<D, T>> = operands
                    .iter()
                    .zip(structures)
                    // SAFETY: as above.
                    .map(|(&operand, s)| unsafe { self.borrowed_matrix(operand, s) })
                    .collect();
                let product = Product {
                    launcher: *l,
                    options: &self.config,
                    a: &matrices[0],
                    b: matrices.last().expect("one or two operands"),
                    pending: Some(&pending),
                    values_ready: None,
                    prune: None,
                };
                product.check()?;
                let run = product.enqueue(None, int32_offsets)?;
                // SAFETY: the caller's guarantee.
                let caller = unsafe { self.device.borrow_stream(stream) };
                self.device.wait(&caller, run.events.done())?;
                pending.release(l);
                Ok(run)
            };
            let run = run();
            if run.is_err() {
                // Kernels on any of the product's streams may still read
                // the caller's arrays.
                for s in l.streams {
                    let _ = self.device.synchronize(s);
                }
            }
            run
        })
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

/// [`Error::TooLarge`] for an operand of more than `u32::MAX - 1` rows or
/// columns.
fn fits_u32(operands: &[(DeviceCsr, bool)]) -> Result<()> {
    for (arrays, _) in operands {
        if arrays.nrows > u32::MAX as usize - 1 {
            return Err(too_large("rows", arrays.nrows));
        }
        if arrays.ncols > u32::MAX as usize - 1 {
            return Err(too_large("columns", arrays.ncols));
        }
    }
    Ok(())
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
    // SAFETY: the caller's guarantee.
    match unsafe { first_fault(l, operands.iter().map(|&(arrays, _)| arrays), &faults) }? {
        Some(e) => Err(e),
        None => Ok(out),
    }
}
