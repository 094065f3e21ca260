//! The argument structs of the kernels that check another library's
//! arrays read in place and place assembled rows' offsets
//! ([`Kernel::CheckOffsets`](super::Kernel::CheckOffsets),
//! [`Kernel::CheckEntries`](super::Kernel::CheckEntries),
//! [`Kernel::NarrowOffsets`](super::Kernel::NarrowOffsets),
//! [`Kernel::PlaceOffsets`](super::Kernel::PlaceOffsets)), as the rest of
//! the catalogue declares them.

use super::{ArgValue, DevicePtr, KernelArg, KernelArgs, Param};

kernel_args! {
    /// [`Kernel::CheckOffsets`](super::Kernel::CheckOffsets): `first` holds two zeroed words (each
    /// fault kept complemented, `checks.cuh`); `wide` is null for 64-bit
    /// offsets, `row_starts` (a zeroed bitmap of `nnz + 1` bits) null when
    /// rows need not be sorted.
    CheckOffsetsArgs {
        indptr: DevicePtr = "const void*",
        nrows: u64 = "u64",
        nnz: u64 = "u64",
        wide: DevicePtr = "u64*",
        row_starts: DevicePtr = "u32*",
        first: DevicePtr = "u64*",
    }
    /// [`Kernel::CheckEntries`](super::Kernel::CheckEntries): `narrow` is null for 32-bit indices,
    /// `row_starts` as for [`CheckOffsetsArgs`].
    CheckEntriesArgs {
        indices: DevicePtr = "const void*",
        ncols: u64 = "u64",
        nnz: u64 = "u64",
        row_starts: DevicePtr = "const u32*",
        narrow: DevicePtr = "u32*",
        first: DevicePtr = "u64*",
    }
    /// [`Kernel::NarrowOffsets`](super::Kernel::NarrowOffsets): `n` offsets, each below 2^31.
    NarrowOffsetsArgs {
        wide: DevicePtr = "const u64*",
        narrow: DevicePtr = "int*",
        n: u64 = "u64",
    }
    /// [`Kernel::PlaceOffsets`](super::Kernel::PlaceOffsets): `n` row offsets; `segments` holds
    /// `nsegs` starts, shifts and keep flags (`assembled_rows.cuh`).
    PlaceOffsetsArgs {
        rpt: DevicePtr = "u64*",
        n: u64 = "u64",
        segments: DevicePtr = "const u64*",
        nsegs: u64 = "u64",
    }
}
