//! The structure checks on the device (`checks.cuh`): of another
//! library's arrays read in place (a thread per row for the offsets, a
//! thread per four entries for the columns, 16 bytes read back per matrix, int32
//! row offsets widened and int64 column indices narrowed in the same pass),
//! and of the order of rows just uploaded from the host.

use super::kernels::{CheckEntriesArgs, CheckOffsetsArgs, DevicePtr, IndexWidth, Kernel};
use super::launch::{shape, Launcher, BLOCK};
use super::memory::DeviceArray;
use crate::device::{Device, LaunchShape};
use crate::error::Result;

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

/// Blocks of the check kernels: enough to fill the device, grid-stride.
const CHECK_BLOCKS_PER_SM: usize = 8;

/// A borrowed matrix's u64 row offsets and u32 column indices.
pub(super) type CheckedStructure<D> = (DeviceArray<D, u64>, DeviceArray<D, u32>);

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

/// Launches the checks of every operand (each with its two fault words,
/// and its row start bitmap when its rows must be sorted, in one zeroed
/// allocation) and reads the fault words back: `(faults, structures)`,
/// two words per operand and its structure, in order.
///
/// # Safety
/// As [`super::GpuEngine::borrow_device`], for every operand.
pub(super) unsafe fn run_checks<D: Device>(
    l: &Launcher<'_, D>,
    operands: &[(DeviceCsr, bool)],
) -> Result<(Vec<u64>, Vec<CheckedStructure<D>>)> {
    let dev = l.device;
    let bitmap_words = |&(arrays, sorted): &(DeviceCsr, bool)| {
        if sorted {
            (arrays.nnz + 1).div_ceil(64)
        } else {
            0
        }
    };
    let words = 2 * operands.len() + operands.iter().map(bitmap_words).sum::<usize>();
    let scratch = l.alloc::<u64>(0, words, "check results and row starts")?;
    scratch.zero(dev, &l.streams[0], 0, scratch.len())?;
    let mut bitmap = 2 * operands.len();
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
    let mut faults = vec![0u64; 2 * operands.len()];
    l.read(&scratch, 0, &mut faults)?;
    l.release(scratch);
    Ok((faults, out))
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
