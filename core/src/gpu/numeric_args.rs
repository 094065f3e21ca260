//! The argument structs of the numeric phase's kernels (rows of C from
//! shared-memory tables, dense rows, ranked bitmaps and global tables, and
//! the sorts of long rows), of the fills of C's arrays and of B packed
//! into words of columns, as the rest of the catalogue declares them.

use super::{ArgValue, DevicePtr, KernelArg, KernelArgs, Param};

kernel_args! {
    /// What every numeric kernel over listed rows starts with (and all
    /// [`Kernel::NumericDirect`](super::Kernel::NumericDirect) and
    /// [`Kernel::NumericDistinct`](super::Kernel::NumericDistinct) take): A, B, the `nrows`
    /// rows listed at `bins`, and C.
    NumericRows {
        arpt: DevicePtr = "const u64*",
        acol: DevicePtr = "const u32*",
        aval: DevicePtr = "const value_t*",
        brpt: DevicePtr = "const u64*",
        bcol: DevicePtr = "const u32*",
        bval: DevicePtr = "const value_t*",
        bins: DevicePtr = "const u32*",
        nrows: u32 = "u32",
        crpt: DevicePtr = "const u64*",
        ccol: DevicePtr = "u32*",
        cval: DevicePtr = "value_t*",
    }
    /// [`Kernel::NumericBin`](super::Kernel::NumericBin).
    /// `band`: B's bandwidths with their mark, for the rows whose columns fit the table's
    /// slots ([`Product::band`](super::super::product::Product::band); null: none).
    NumericBinArgs [rows: NumericRows] {
        g: u32 = "u32",
        distinct_rows: DevicePtr = "const u32*",
        band: DevicePtr = "const u64*",
    }
    /// [`Kernel::NumericBinPruned`](super::Kernel::NumericBinPruned): the threshold's bits as a
    /// `value_t` (`has_below` 0: none), at most `keep` entries a row (`u32::MAX`: no limit),
    /// and a bitmap of one bit a row (`pruned_rows`, zeroed) where the kernel marks the rows it
    /// pruned.
    NumericBinPrunedArgs [rows: NumericRows] {
        g: u32 = "u32",
        distinct_rows: DevicePtr = "const u32*",
        band: DevicePtr = "const u64*",
        below: u64 = "u64",
        has_below: u32 = "u32",
        keep: u32 = "u32",
        pruned_rows: DevicePtr = "u32*",
    }
    /// [`Kernel::NumericDistinctPruned`](super::Kernel::NumericDistinctPruned): the pruning as
    /// [`NumericBinPrunedArgs`] gives it.
    NumericDistinctPrunedArgs [rows: NumericRows] {
        below: u64 = "u64",
        has_below: u32 = "u32",
        keep: u32 = "u32",
        pruned_rows: DevicePtr = "u32*",
    }
    /// [`Kernel::NumericDenseShared`](super::Kernel::NumericDenseShared).
    NumericDenseSharedArgs [rows: NumericRows] {
        g: u32 = "u32",
        words: u32 = "u32",
    }
    /// [`Kernel::NumericRanked`](super::Kernel::NumericRanked) and
    /// [`Kernel::NumericRankedLong`](super::Kernel::NumericRankedLong): `capacity` values of a
    /// row in shared memory (at least the rows' largest nnz(i); 0: the values accumulate in C),
    /// rows of more than `limit` entries skipped.
    NumericRankedArgs [rows: NumericRows] {
        g: u32 = "u32",
        words: u32 = "u32",
        capacity: u32 = "u32",
        limit: u32 = "u32",
    }
    /// [`Kernel::NumericRuns`](super::Kernel::NumericRuns): G, the same-row bits of A
    /// ([`SameRowsArgs`](super::SameRowsArgs)) that say how many rows follow each listed row,
    /// and B's (null: none), whose runs' rows are walked together.
    NumericRunsArgs [rows: NumericRows] {
        g: u32 = "u32",
        same_rows: DevicePtr = "const u32*",
        b_same_rows: DevicePtr = "const u32*",
    }
    /// [`Kernel::NumericGlobal`](super::Kernel::NumericGlobal).
    NumericGlobalArgs [rows: NumericRows] {
        g: u32 = "u32",
        table_keys: DevicePtr = "u32*",
        table_vals: DevicePtr = "value_t*",
        max_tsize: u32 = "u32",
    }
    /// [`Kernel::NumericDense`](super::Kernel::NumericDense) and
    /// [`Kernel::NumericDenseCompact`](super::Kernel::NumericDenseCompact): rows of at most
    /// `skip_upto` entries skipped; the accumulating kernel's slices start at `bounds` (from
    /// [`Kernel::SliceBounds`](super::Kernel::SliceBounds)).
    NumericDenseArgs [rows: NumericRows] {
        g: u32 = "u32",
        dense_all: DevicePtr = "value_t*",
        bits_all: DevicePtr = "u32*",
        words: u32 = "u32",
        slices: u32 = "u32",
        repeat_rows: DevicePtr = "const u32*",
        skip_upto: u32 = "u32",
        bounds: DevicePtr = "const u64*",
    }
    /// What both passes packing B start with: B's `kb` rows.
    PackRows {
        brpt: DevicePtr = "const u64*",
        bcol: DevicePtr = "const u32*",
        kb: u32 = "u32",
    }
    /// [`Kernel::PackCount`](super::Kernel::PackCount): the runs per row into `prpt`, their
    /// total added to `total`, unless the operands' pending checks faulted (`faults`, as for
    /// [`SetupArgs`](super::SetupArgs)).
    PackCountArgs [rows: PackRows] {
        prpt: DevicePtr = "u64*",
        total: DevicePtr = "u64*",
        faults: DevicePtr = "const u64*",
    }
    /// [`Kernel::PackFill`](super::Kernel::PackFill): the runs into `pcol` at the scanned
    /// offsets `prpt`.
    PackFillArgs [rows: PackRows] {
        prpt: DevicePtr = "const u64*",
        pcol: DevicePtr = "u64*",
    }
    /// [`Kernel::FillEmpty`](super::Kernel::FillEmpty).
    FillEmptyArgs {
        keys: DevicePtr = "u32*",
        n: u64 = "u64",
    }
    /// [`Kernel::FillIdentity`](super::Kernel::FillIdentity): `n` values.
    FillIdentityArgs {
        vals: DevicePtr = "value_t*",
        n: u64 = "u64",
    }
    /// [`Kernel::NumericHashSlices`](super::Kernel::NumericHashSlices): the slices' `bounds`
    /// from [`Kernel::SliceBounds`](super::Kernel::SliceBounds).
    NumericHashSlicesArgs [rows: NumericRows] {
        g: u32 = "u32",
        keys_all: DevicePtr = "u32*",
        vals_all: DevicePtr = "value_t*",
        tsize: u32 = "u32",
        slices: u32 = "u32",
        bounds: DevicePtr = "const u64*",
    }
    /// [`Kernel::SortStep`](super::Kernel::SortStep).
    SortStepArgs {
        keys_all: DevicePtr = "u32*",
        vals_all: DevicePtr = "value_t*",
        tsize: u32 = "u32",
        p2: u32 = "u32",
        k: u32 = "u32",
        j: u32 = "u32",
        nrows: u32 = "u32",
    }
    /// [`Kernel::SortTiles`](super::Kernel::SortTiles).
    SortTilesArgs {
        keys_all: DevicePtr = "u32*",
        vals_all: DevicePtr = "value_t*",
        tsize: u32 = "u32",
        tiles: u32 = "u32",
        stage: u32 = "u32",
        bins: DevicePtr = "const u32*",
        crpt: DevicePtr = "const u64*",
        ccol: DevicePtr = "u32*",
        cval: DevicePtr = "value_t*",
        write_out: u32 = "u32",
    }
}
