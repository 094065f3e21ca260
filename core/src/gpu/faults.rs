//! The errors that the device checks' fault words name (`checks.cuh`):
//! the same errors the host checks give for the same fault, naming the
//! first faulty row or entry, with the values at fault read from the
//! caller's arrays.

use super::kernels::IndexWidth;
use super::launch::Launcher;
use super::matrix::DeviceCsr;
use super::memory::DeviceArray;
use crate::device::Device;
use crate::error::{Error, Result};

/// The error that the fault words of `arrays` name, if any: each holds
/// the complement of the first fault's code, or 0 (`checks.cuh`).
///
/// # Safety
/// As [`super::GpuEngine::borrow_device`].
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

/// The error the fault words `faults` (two per operand, read back in
/// operand order) name for the first of `operands` with a fault, if any.
///
/// # Safety
/// As [`super::GpuEngine::borrow_device`], for every operand.
pub(super) unsafe fn first_fault<D: Device>(
    l: &Launcher<'_, D>,
    operands: impl IntoIterator<Item = DeviceCsr>,
    faults: &[u64],
) -> Result<Option<Error>> {
    for (arrays, words) in operands.into_iter().zip(faults.chunks(2)) {
        // SAFETY: the caller's guarantee.
        if let Some(e) = unsafe { fault(l, arrays, [words[0], words[1]]) }? {
            return Ok(Some(e));
        }
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
/// As [`super::GpuEngine::borrow_device`].
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
/// As [`super::GpuEngine::borrow_device`].
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
