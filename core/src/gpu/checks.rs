//! The structure checks on the device (`checks.cuh`): of another
//! library's arrays read in place (a thread per row for the offsets, a
//! thread per four entries for the columns, int32 row offsets widened and
//! int64 column indices narrowed in the same pass; 16 bytes read back per
//! matrix, or left for the product's first read by [`PendingChecks`]), and
//! of the order of rows just uploaded from the host.

use super::constants::FAULT_WORDS;
use super::faults::first_fault;
use super::kernels::{CheckEntriesArgs, CheckOffsetsArgs, DevicePtr, IndexWidth, Kernel};
use super::launch::{shape, Launcher, BLOCK};
use super::matrix::DeviceCsr;
use super::memory::DeviceArray;
use crate::device::{Device, LaunchShape};
use crate::error::{Error, Result};

/// Blocks of the check kernels: enough to fill the device, grid-stride.
const CHECK_BLOCKS_PER_SM: usize = 8;

/// A borrowed matrix's u64 row offsets and u32 column indices.
pub(super) type CheckedStructure<D> = (DeviceArray<D, u64>, DeviceArray<D, u32>);

/// The checks' scratch (fault words, row-start bitmaps) and each
/// operand's structure.
type Launched<D> = (DeviceArray<D, u64>, Vec<CheckedStructure<D>>);

/// The launch shape of a grid-stride kernel over `n` items: enough blocks
/// to fill the device.
pub(super) fn check_grid<D: Device>(l: &Launcher<'_, D>, n: usize) -> LaunchShape {
    let blocks = n
        .div_ceil(BLOCK as usize)
        .clamp(1, CHECK_BLOCKS_PER_SM * l.sms());
    shape(blocks as u32, BLOCK, 0)
}

/// A matrix's row offsets and column indices just uploaded, and its
/// number of columns.
pub(super) type Uploaded<'a, D> = (&'a DeviceArray<D, u64>, &'a DeviceArray<D, u32>, usize);

/// Whether the rows of each matrix just uploaded (`(row offsets, column
/// indices, ncols)`, from a [`crate::CsrView`], so in bounds) are sorted
/// without duplicates, found by the check kernels on the device with one
/// read-back. Scanning the columns on the host while they crossed the bus
/// took cores from the copy: a 1 M-row upload took 5.3-5.7 ms with it,
/// 4.4-4.7 ms without (H100 host, 16 cores). The answer only enables a
/// shortcut, so a column that an int32 cannot hold, read as out of range
/// by the kernel, merely answers "not sorted".
pub(super) fn sorted_on_device<D: Device>(
    l: &Launcher<'_, D>,
    uploaded: &[Uploaded<'_, D>],
) -> Result<Vec<bool>> {
    let operands: Vec<(DeviceCsr, bool)> = uploaded
        .iter()
        .map(|&(rpt, col, ncols)| {
            let arrays = DeviceCsr {
                nrows: rpt.len() - 1,
                ncols,
                nnz: col.len(),
                row_offsets: rpt.device_ptr(),
                offsets_width: IndexWidth::I64,
                col_indices: col.device_ptr(),
                indices_width: IndexWidth::I32,
                values: 0,
            };
            (arrays, true)
        })
        .collect();
    // SAFETY: the arrays are ours, complete on stream 0 (the kernels
    // follow the copies there), live and unchanged through this call; u64
    // offsets below 2^63 read as int64, and the kernels only read them.
    let (faults, _) = unsafe { run_checks(l, &operands) }?;
    Ok(faults.chunks(2).map(|w| w == [0, 0]).collect())
}

/// Launches the checks of every operand on stream 0 (each with its two
/// fault words, and its row start bitmap when its rows must be sorted, in
/// one zeroed allocation): `(scratch, structures)`, the fault words first
/// in the scratch (two per operand, in order, at least [`FAULT_WORDS`]
/// words, the unused ones zero), and each operand's structure.
///
/// # Safety
/// As [`super::GpuEngine::borrow_device`], for every operand.
unsafe fn launch_all<D: Device>(
    l: &Launcher<'_, D>,
    operands: &[(DeviceCsr, bool)],
) -> Result<Launched<D>> {
    let bitmap_words = |&(arrays, sorted): &(DeviceCsr, bool)| {
        if sorted {
            (arrays.nnz + 1).div_ceil(64)
        } else {
            0
        }
    };
    let fault_words = FAULT_WORDS.max(2 * operands.len());
    let words = fault_words + operands.iter().map(bitmap_words).sum::<usize>();
    let scratch = l.alloc::<u64>(0, words, "check results and row starts")?;
    scratch.zero(l.device, &l.streams[0], 0, scratch.len())?;
    let mut bitmap = fault_words;
    let mut out = Vec::with_capacity(operands.len());
    for (i, operand) in operands.iter().enumerate() {
        let row_starts = if operand.1 {
            scratch.ptr_to(bitmap)
        } else {
            DevicePtr(0)
        };
        bitmap += bitmap_words(operand);
        // SAFETY: the caller's guarantee.
        out.push(unsafe { launch_checks(l, operand.0, row_starts, scratch.ptr_to(2 * i)) }?);
    }
    Ok((scratch, out))
}

/// Launches the checks of every operand and reads the fault words back:
/// `(faults, structures)`, two words per operand and its structure, in
/// order.
///
/// # Safety
/// As [`super::GpuEngine::borrow_device`], for every operand.
pub(super) unsafe fn run_checks<D: Device>(
    l: &Launcher<'_, D>,
    operands: &[(DeviceCsr, bool)],
) -> Result<(Vec<u64>, Vec<CheckedStructure<D>>)> {
    // SAFETY: the caller's guarantee.
    let (scratch, out) = unsafe { launch_all(l, operands) }?;
    let mut faults = vec![0u64; 2 * operands.len()];
    l.read(&scratch, 0, &mut faults)?;
    l.release(scratch);
    Ok((faults, out))
}

/// The checks of one or two operands launched but not yet answered: the
/// product's setup returns at once on a fault and copies the fault words
/// beside its binning counters
/// ([`Meta::faults`](super::meta::Meta::faults)), read with them,
/// so that the checks cost no wait of their own (about 25 µs of a product
/// near 1 ms from Python on an H100, `docs/benchmarks/python-h100-2026-11-24.md`).
pub(super) struct PendingChecks<D: Device> {
    /// The fault words first (two per operand), then the row-start bitmaps.
    scratch: DeviceArray<D, u64>,
    operands: Vec<DeviceCsr>,
}

impl<D: Device> PendingChecks<D> {
    /// Launches the checks of `operands` (one or two) on stream 0: the
    /// pending checks and each operand's structure.
    ///
    /// # Safety
    /// As [`super::GpuEngine::borrow_device`], for every operand, for as
    /// long as the returned value lives.
    pub(super) unsafe fn launch(
        l: &Launcher<'_, D>,
        operands: &[(DeviceCsr, bool)],
    ) -> Result<(Self, Vec<CheckedStructure<D>>)> {
        assert!(
            (1..=FAULT_WORDS / 2).contains(&operands.len()),
            "pending checks of one or two operands"
        );
        // SAFETY: the caller's guarantee.
        let (scratch, out) = unsafe { launch_all(l, operands) }?;
        let operands = operands.iter().map(|&(arrays, _)| arrays).collect();
        Ok((Self { scratch, operands }, out))
    }

    /// The [`FAULT_WORDS`] fault words (two per operand, then zeros).
    pub(super) fn faults(&self) -> DevicePtr {
        self.scratch.ptr()
    }

    /// The error the fault words `faults` (as read back, in operand
    /// order) name for the first operand with a fault, if any.
    ///
    /// # Errors
    /// Device errors reading the values at fault.
    pub(super) fn error(&self, l: &Launcher<'_, D>, faults: &[u64]) -> Result<Option<Error>> {
        // SAFETY: `launch`'s caller guaranteed the arrays while `self`
        // lives.
        unsafe { first_fault(l, self.operands.iter().copied(), faults) }
    }

    /// Hands the scratch back to the product's memory accounting.
    pub(super) fn release(self, l: &Launcher<'_, D>) {
        l.release(self.scratch);
    }
}

/// Launches the checks of `arrays` on stream 0: their fault words at
/// `first` (two zeroed words), their row starts into the zeroed bitmap at
/// `row_starts` (null when rows need not be sorted); returns the widened
/// row offsets and narrowed column indices (or the caller's own).
///
/// # Safety
/// As [`super::GpuEngine::borrow_device`].
unsafe fn launch_checks<D: Device>(
    l: &Launcher<'_, D>,
    arrays: DeviceCsr,
    row_starts: DevicePtr,
    first: DevicePtr,
) -> Result<CheckedStructure<D>> {
    let DeviceCsr { nrows, nnz, .. } = arrays;
    let dev = l.device;
    let wide = match arrays.offsets_width {
        // SAFETY: the caller's guarantee; non-negative int64 offsets
        // (checked) read as u64.
        IndexWidth::I64 => unsafe { DeviceArray::borrowed(dev, arrays.row_offsets, nrows + 1) },
        IndexWidth::I32 => l.alloc::<u64>(0, nrows + 1, "widened row offsets")?,
    };
    let narrow = match arrays.indices_width {
        // SAFETY: as above, int32 columns in 0..ncols (checked).
        IndexWidth::I32 => unsafe { DeviceArray::borrowed(dev, arrays.col_indices, nnz) },
        IndexWidth::I64 => l.alloc::<u32>(0, nnz, "narrowed column indices")?,
    };
    let grid = |n: usize| check_grid(l, n);
    let offsets = CheckOffsetsArgs {
        indptr: DevicePtr(arrays.row_offsets),
        nrows: nrows as u64,
        nnz: nnz as u64,
        wide: match arrays.offsets_width {
            IndexWidth::I32 => wide.ptr(),
            IndexWidth::I64 => DevicePtr(0),
        },
        row_starts,
        first,
    };
    let check_offsets = Kernel::CheckOffsets(arrays.offsets_width);
    l.launch(0, check_offsets, grid(nrows + 1), &offsets)?;
    if nnz > 0 {
        let entries = CheckEntriesArgs {
            indices: DevicePtr(arrays.col_indices),
            ncols: arrays.ncols as u64,
            nnz: nnz as u64,
            row_starts,
            narrow: match arrays.indices_width {
                IndexWidth::I32 => DevicePtr(0),
                IndexWidth::I64 => narrow.ptr(),
            },
            first,
        };
        let check_entries = Kernel::CheckEntries(arrays.indices_width);
        l.launch(0, check_entries, grid(nnz), &entries)?;
    }
    Ok((wide, narrow))
}
