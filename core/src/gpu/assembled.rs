//! A matrix assembled on the device from runs of rows copied out of other
//! matrices (another rank's rows of B, sent by NCCL or staged through the
//! host): the caller copies each run's row ends, columns and values into
//! place, then one kernel moves the row ends by each run's shift and gives
//! the rows between runs no entries (`assembled_rows.cuh`), and the
//! structure checks of borrowed matrices run over the result.

use super::checks::{check_grid, run_checks};
use super::engine::GpuEngine;
use super::faults::first_fault;
use super::kernels::{CheckOffsetsArgs, DevicePtr, IndexWidth, Kernel, PlaceOffsetsArgs};
use super::launch::Launcher;
use super::matrix::{DeviceCsr, GpuMatrix};
use super::memory::{DeviceArray, Usage};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::scalar::Scalar;

/// Consecutive rows copied into an assembled matrix from a source matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowRun {
    /// The run's first row in the assembled matrix.
    pub first_row: usize,
    /// Rows in the run.
    pub rows: usize,
    /// The source's row offset at the run's first row (where its first
    /// entry was in the source).
    pub source_offset: u64,
    /// Entries in the run.
    pub entries: u64,
}

/// The device arrays of an `nrows × ncols` CSR matrix of `nnz` entries
/// being assembled: `nrows + 1` `u64` row offsets, `nnz` `u32` columns and
/// `nnz` values. Each run's row ends (its source's row offsets after its
/// first row, as they are in the source), columns and values are copied to
/// the addresses given here; [`GpuEngine::assemble`] finishes it.
pub struct Assembly<D: Device, T> {
    nrows: usize,
    ncols: usize,
    rpt: DeviceArray<D, u64>,
    col: DeviceArray<D, u32>,
    val: DeviceArray<D, T>,
}

impl<D: Device, T: Scalar> Assembly<D, T> {
    /// Device address where the ends of rows `row..` are copied (row
    /// offset `row + 1`); 0 when the matrix has no rows.
    pub fn row_ends_at(&self, row: usize) -> u64 {
        self.rpt.ptr_at(row + 1)
    }
    /// Device address of entry `entry`'s column (0 without entries).
    pub fn columns_at(&self, entry: usize) -> u64 {
        self.col.ptr_at(entry)
    }
    /// Device address of entry `entry`'s value (0 without entries).
    pub fn values_at(&self, entry: usize) -> u64 {
        self.val.ptr_at(entry)
    }
    /// Stored entries.
    pub fn nnz(&self) -> usize {
        self.col.len()
    }
}

impl<D: Device> GpuEngine<D> {
    /// The arrays of an `nrows × ncols` matrix of `nnz` entries to
    /// assemble from runs of rows; allocated and complete when this
    /// returns, so that any stream (another library's among them) may copy
    /// into them.
    ///
    /// # Errors
    /// [`Error::TooLarge`] beyond `u32::MAX - 1` rows or columns; device
    /// errors (out of memory).
    pub fn assembly<T: Scalar>(
        &self,
        nrows: usize,
        ncols: usize,
        nnz: usize,
    ) -> Result<Assembly<D, T>> {
        for (what, n) in [("rows", nrows), ("columns", ncols)] {
            if n > u32::MAX as usize - 1 {
                return Err(super::product::too_large(what, n));
            }
        }
        let streams = self.take_streams()?;
        let (dev, s, usage) = (self.device(), &streams[0], &Usage::default());
        let made = (|| {
            let a = Assembly {
                nrows,
                ncols,
                rpt: DeviceArray::alloc(dev, s, nrows + 1, "assembled row offsets", usage)?,
                col: DeviceArray::alloc(dev, s, nnz, "assembled column indices", usage)?,
                val: DeviceArray::alloc(dev, s, nnz, "assembled values", usage)?,
            };
            dev.synchronize(s)?;
            Ok(a)
        })();
        self.give_streams(streams);
        made
    }

    /// The matrix whose rows are `runs` (ascending, not overlapping; the
    /// entries of each run following the last's) and no entries elsewhere,
    /// once every run's row ends, columns and values have been copied into
    /// `assembly` and those copies are complete. Its structure is checked
    /// on the device as a borrowed matrix's is; with `sources_sorted`
    /// `Some(sorted)` the caller vouches that every run came from a
    /// matrix of this engine's kind, whose columns were checked against
    /// the same number of columns, with rows `sorted` (without
    /// duplicates) or not, and only the row offsets are checked (a thread
    /// per row rather than one per entry).
    ///
    /// # Errors
    /// [`Error::RowRuns`] for runs out of order, past the last row, or
    /// whose entries do not add up to the assembly's; the errors of
    /// [`GpuEngine::borrow_device`]'s checks for a structure copied wrong;
    /// device errors.
    pub fn assemble<T: Scalar>(
        &self,
        assembly: Assembly<D, T>,
        runs: &[RowRun],
        sources_sorted: Option<bool>,
    ) -> Result<GpuMatrix<D, T>> {
        let segments = segments(assembly.nrows, assembly.col.len() as u64, runs)?;
        let Assembly {
            nrows,
            ncols,
            rpt,
            col,
            val,
        } = assembly;
        let nnz = col.len();
        let arrays = DeviceCsr {
            nrows,
            ncols,
            nnz,
            row_offsets: rpt.ptr_at(0),
            offsets_width: IndexWidth::I64,
            col_indices: col.ptr_at(0),
            indices_width: IndexWidth::I32,
            values: val.ptr_at(0),
        };
        let sorted = self.with_launcher::<T, _>(|l| {
            let table = DeviceArray::from_host(
                l.device,
                &l.streams[0],
                &segments,
                "row run segments",
                l.usage,
            )?;
            let args = PlaceOffsetsArgs {
                rpt: rpt.ptr(),
                n: (nrows + 1) as u64,
                segments: table.ptr(),
                nsegs: (segments.len() / 3) as u64,
            };
            l.launch(0, Kernel::PlaceOffsets, check_grid(l, nrows + 1), &args)?;
            if let Some(sorted) = sources_sorted {
                // SAFETY: as below.
                return unsafe { check_offsets(l, arrays) }.map(|()| sorted);
            }
            // SAFETY: the arrays are ours, complete on stream 0 (the
            // caller's copies are complete; the kernel precedes the
            // checks there), live and unchanged through these calls.
            let (faults, _) = unsafe { run_checks(l, &[(arrays, true)]) }?;
            if faults == [0, 0] {
                return Ok(true);
            }
            // SAFETY: as above.
            let (faults, _) = unsafe { run_checks(l, &[(arrays, false)]) }?;
            // SAFETY: as above.
            match unsafe { first_fault(l, [arrays], &faults) }? {
                Some(e) => Err(e),
                None => Ok(false),
            }
        })?;
        Ok(GpuMatrix::of_arrays((nrows, ncols), rpt, col, val, sorted))
    }
}

/// Checks the row offsets of `arrays` alone (from 0 to `nnz`, never
/// decreasing), on stream 0.
///
/// # Safety
/// The arrays are the engine's, complete on stream 0, live and unchanged
/// through the call.
unsafe fn check_offsets<D: Device>(l: &Launcher<'_, D>, arrays: DeviceCsr) -> Result<()> {
    let scratch = l.alloc::<u64>(0, 2, "row offset check")?;
    scratch.zero(l.device, &l.streams[0], 0, 2)?;
    let args = CheckOffsetsArgs {
        indptr: DevicePtr(arrays.row_offsets),
        nrows: arrays.nrows as u64,
        nnz: arrays.nnz as u64,
        wide: DevicePtr(0),
        row_starts: DevicePtr(0),
        first: scratch.ptr(),
    };
    let kernel = Kernel::CheckOffsets(IndexWidth::I64);
    l.launch(0, kernel, check_grid(l, arrays.nrows + 1), &args)?;
    let mut faults = [0u64; 2];
    l.read(&scratch, 0, &mut faults)?;
    l.release(scratch);
    // SAFETY: the caller's guarantee.
    match unsafe { first_fault(l, [arrays], &faults) }? {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The segments of the row offsets of an `nrows`-row matrix of `nnz`
/// entries made of `runs`: all starts, then all shifts, then all keep
/// flags (`assembled_rows.cuh`).
fn segments(nrows: usize, nnz: u64, runs: &[RowRun]) -> Result<Vec<u64>> {
    let (mut starts, mut shifts, mut keep) = (Vec::new(), Vec::new(), Vec::new());
    let (mut next, mut offset) = (0usize, 0u64);
    let mut push = |start: usize, shift: u64, kept: bool| {
        starts.push(start as u64);
        shifts.push(shift);
        keep.push(kept as u64);
    };
    for (k, run) in runs.iter().enumerate() {
        let end = run.first_row.checked_add(run.rows).filter(|&e| e <= nrows);
        let Some(end) = end.filter(|_| run.first_row + 1 >= next) else {
            return Err(Error::RowRuns(format!(
                "run {k} (rows {}..{} of {nrows}) overlaps the run before or ends past the last row",
                run.first_row,
                run.first_row.saturating_add(run.rows)
            )));
        };
        if run.rows == 0 {
            continue;
        }
        if run.first_row + 1 > next {
            push(next, offset, false);
        }
        push(
            run.first_row + 1,
            offset.wrapping_sub(run.source_offset),
            true,
        );
        next = end + 1;
        offset = offset
            .checked_add(run.entries)
            .filter(|&o| o <= nnz)
            .ok_or_else(|| {
                Error::RowRuns(format!(
                    "run {k} (rows {}..{end}) ends past the {nnz} entries",
                    run.first_row
                ))
            })?;
    }
    if offset != nnz {
        return Err(Error::RowRuns(format!(
            "the runs hold {offset} entries, the matrix {nnz}"
        )));
    }
    if next <= nrows {
        push(next, offset, false);
    }
    Ok([starts, shifts, keep].concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(first_row: usize, rows: usize, source_offset: u64, entries: u64) -> RowRun {
        RowRun {
            first_row,
            rows,
            source_offset,
            entries,
        }
    }

    /// The offsets the kernel computes from `segments` over `copied` (the
    /// row ends copied in place, anything elsewhere).
    fn place(segments: &[u64], copied: &[u64]) -> Vec<u64> {
        let n = segments.len() / 3;
        let (starts, shifts, keep) = (&segments[..n], &segments[n..2 * n], &segments[2 * n..]);
        (0..copied.len())
            .map(|i| {
                let k = starts.partition_point(|&s| s <= i as u64) - 1;
                (if keep[k] == 1 { copied[i] } else { 0 }).wrapping_add(shifts[k])
            })
            .collect()
    }

    #[test]
    fn runs_are_shifted_and_rows_between_them_are_empty() {
        // Rows 1..3 from a source where they held entries 10..14 (ends 12,
        // 14), row 5 from one where it held 0..3.
        let runs = [run(1, 2, 10, 4), run(5, 1, 0, 3)];
        let segments = segments(7, 7, &runs).unwrap();
        let copied = [9, 9, 12, 14, 9, 9, 3, 9];
        assert_eq!(place(&segments, &copied), [0, 0, 2, 4, 4, 4, 7, 7]);
    }

    #[test]
    fn a_run_at_row_zero_and_one_to_the_last_row() {
        let segments = segments(2, 5, &[run(0, 2, 7, 5)]).unwrap();
        assert_eq!(place(&segments, &[9, 9, 12]), [0, 2, 5]);
    }

    #[test]
    fn bad_runs_are_errors_naming_the_run() {
        let err = |runs: &[RowRun], nnz| segments(4, nnz, runs).unwrap_err().to_string();
        assert!(
            err(&[run(2, 2, 0, 1), run(1, 1, 0, 1)], 2).contains("run 1 (rows 1..2 of 4) overlaps")
        );
        assert!(err(&[run(3, 2, 0, 1)], 1).contains("run 0 (rows 3..5 of 4)"));
        assert!(err(&[run(0, 1, 0, 3)], 2).contains("run 0 (rows 0..1) ends past the 2 entries"));
        assert!(err(&[run(0, 1, 0, 1)], 2).contains("the runs hold 1 entries, the matrix 2"));
    }
}
