//! The argument structs of the masked program's kernels
//! ([`super::MASKED`]: masked dot products, transposes, compaction,
//! complemented masks, pruning), as the rest of the catalogue declares
//! them.

use super::{ArgValue, DevicePtr, KernelArg, KernelArgs, Param};

kernel_args! {
    /// [`Kernel::MaskedDot`](super::Kernel::MaskedDot): M (`m` rows, `mnnz` entries), A and B (rows
    /// sorted), and Bᵀ (B's columns as rows, in any order); `seg` lanes
    /// per entry of M (a power of two up to the warp); C's columns (M's,
    /// or `SPGEMM_EMPTY` where no product meets) and values, `mnnz` each;
    /// the heavy list (`heavy_cap` places, null for none) and its count
    /// (zeroed before) for the entries left to
    /// [`Kernel::MaskedDotHeavy`](super::Kernel::MaskedDotHeavy); `total`
    /// null, or one value set to `⊕`'s identity into which the entries met
    /// are `⊕`-reduced instead of written to C.
    MaskedDotArgs {
        mrpt: DevicePtr = "const u64*",
        mcol: DevicePtr = "const u32*",
        m: u32 = "u32",
        mnnz: u64 = "u64",
        arpt: DevicePtr = "const u64*",
        acol: DevicePtr = "const u32*",
        aval: DevicePtr = "const value_t*",
        brpt: DevicePtr = "const u64*",
        bcol: DevicePtr = "const u32*",
        bval: DevicePtr = "const value_t*",
        btrpt: DevicePtr = "const u64*",
        btcol: DevicePtr = "const u32*",
        btval: DevicePtr = "const value_t*",
        seg: u32 = "u32",
        ccol: DevicePtr = "u32*",
        cval: DevicePtr = "value_t*",
        heavy: DevicePtr = "u64*",
        heavy_count: DevicePtr = "u64*",
        heavy_cap: u64 = "u64",
        total: DevicePtr = "value_t*",
    }
    /// [`Kernel::MaskedDotHeavy`](super::Kernel::MaskedDotHeavy): the
    /// heavy list the masked dot kernel filled (its first
    /// `min(heavy_count, heavy_cap)` entries of M), M, A, B (or null) and
    /// Bᵀ as for that kernel; C's columns and values at those entries, or
    /// `total` as that kernel reduces into it.
    MaskedDotHeavyArgs {
        heavy: DevicePtr = "const u64*",
        heavy_count: DevicePtr = "const u64*",
        heavy_cap: u64 = "u64",
        mrpt: DevicePtr = "const u64*",
        mcol: DevicePtr = "const u32*",
        m: u32 = "u32",
        arpt: DevicePtr = "const u64*",
        acol: DevicePtr = "const u32*",
        aval: DevicePtr = "const value_t*",
        brpt: DevicePtr = "const u64*",
        bcol: DevicePtr = "const u32*",
        bval: DevicePtr = "const value_t*",
        btrpt: DevicePtr = "const u64*",
        btcol: DevicePtr = "const u32*",
        btval: DevicePtr = "const value_t*",
        ccol: DevicePtr = "u32*",
        cval: DevicePtr = "value_t*",
        total: DevicePtr = "value_t*",
    }
    /// [`Kernel::ColumnCounts`](super::Kernel::ColumnCounts): `counts` zeroed, one per column of B.
    ColumnCountsArgs {
        bcol: DevicePtr = "const u32*",
        nnz: u64 = "u64",
        counts: DevicePtr = "u64*",
    }
    /// [`Kernel::TransposeScatter`](super::Kernel::TransposeScatter): B (`k` rows, `nnz` entries), Bᵀ's row offsets, a
    /// zeroed ticket per column; Bᵀ's columns and values.
    TransposeScatterArgs {
        brpt: DevicePtr = "const u64*",
        bcol: DevicePtr = "const u32*",
        bval: DevicePtr = "const value_t*",
        k: u32 = "u32",
        nnz: u64 = "u64",
        btrpt: DevicePtr = "const u64*",
        fill: DevicePtr = "u32*",
        btcol: DevicePtr = "u32*",
        btval: DevicePtr = "value_t*",
    }
    /// [`Kernel::KeepFlags`](super::Kernel::KeepFlags): C's `n` columns (`SPGEMM_EMPTY` where none
    /// met); `n + 1` flags, the last 0.
    KeepFlagsArgs {
        ccol: DevicePtr = "const u32*",
        n: u64 = "u64",
        flags: DevicePtr = "u64*",
    }
    /// [`Kernel::CompactEntries`](super::Kernel::CompactEntries): C's `n` columns and values, the kept
    /// entries' places (the flags scanned); the compacted columns and
    /// values.
    CompactEntriesArgs {
        ccol: DevicePtr = "const u32*",
        cval: DevicePtr = "const value_t*",
        n: u64 = "u64",
        places: DevicePtr = "const u64*",
        outcol: DevicePtr = "u32*",
        outval: DevicePtr = "value_t*",
    }
    /// [`Kernel::CompactOffsets`](super::Kernel::CompactOffsets): C's `m + 1` row offsets before, the
    /// places; its row offsets after.
    CompactOffsetsArgs {
        rows: DevicePtr = "const u64*",
        m: u32 = "u32",
        places: DevicePtr = "const u64*",
        crpt: DevicePtr = "u64*",
    }
    /// [`Kernel::ComplementMark`](super::Kernel::ComplementMark): C (`m` rows, `n` entries) and M (rows
    /// sorted).
    ComplementMarkArgs {
        crpt: DevicePtr = "const u64*",
        ccol: DevicePtr = "u32*",
        m: u32 = "u32",
        n: u64 = "u64",
        mrpt: DevicePtr = "const u64*",
        mcol: DevicePtr = "const u32*",
    }
    /// [`Kernel::ComplementFlags`](super::Kernel::ComplementFlags): M
    /// (`m` rows of `ncols` columns, rows sorted); `m · ncols + 1` flags.
    ComplementFlagsArgs {
        mrpt: DevicePtr = "const u64*",
        mcol: DevicePtr = "const u32*",
        m: u32 = "u32",
        ncols: u32 = "u32",
        flags: DevicePtr = "u64*",
    }
    /// [`Kernel::ComplementFill`](super::Kernel::ComplementFill): the
    /// scanned flags; the explicit complement's `m + 1` row offsets and
    /// its columns.
    ComplementFillArgs {
        places: DevicePtr = "const u64*",
        m: u32 = "u32",
        ncols: u32 = "u32",
        rpt: DevicePtr = "u64*",
        col: DevicePtr = "u32*",
    }
    /// [`Kernel::PruneRows`](super::Kernel::PruneRows): C (`m` rows); the threshold's bits as a
    /// `value_t` (`has_below` 0: none), at most `keep` entries per row
    /// (`u64::MAX`: no limit); rows whose bit is set in `done` (one bit
    /// a row; null: none) left as they are; C's columns with the dropped
    /// entries' `SPGEMM_EMPTY` (`outcol` may be `ccol`).
    PruneRowsArgs {
        crpt: DevicePtr = "const u64*",
        ccol: DevicePtr = "const u32*",
        cval: DevicePtr = "const value_t*",
        m: u32 = "u32",
        below: u64 = "u64",
        has_below: u32 = "u32",
        keep: u64 = "u64",
        done: DevicePtr = "const u32*",
        outcol: DevicePtr = "u32*",
    }
    /// [`Kernel::PruneColumns`](super::Kernel::PruneColumns): Cᵀ (`n` rows in any order), at most
    /// `keep` entries per column, C (`sorted` 1 when its rows are); a copy
    /// of C's columns where the dropped entries get `SPGEMM_EMPTY`.
    PruneColumnsArgs {
        ctrpt: DevicePtr = "const u64*",
        ctcol: DevicePtr = "const u32*",
        ctval: DevicePtr = "const value_t*",
        n: u32 = "u32",
        keep: u64 = "u64",
        crpt: DevicePtr = "const u64*",
        ccol: DevicePtr = "const u32*",
        sorted: u32 = "u32",
        outcol: DevicePtr = "u32*",
    }
    /// [`Kernel::SortRows`](super::Kernel::SortRows): a matrix of `m`
    /// rows, its columns and values (null: none) sorted in place.
    SortRowsArgs {
        crpt: DevicePtr = "const u64*",
        ccol: DevicePtr = "u32*",
        cval: DevicePtr = "value_t*",
        m: u32 = "u32",
    }
    /// [`Kernel::KeptCounts`](super::Kernel::KeptCounts): C (`m` rows),
    /// its columns with the dropped entries' `SPGEMM_EMPTY`; `m + 1`
    /// counts (the kept entries of each row, then 0).
    KeptCountsArgs {
        crpt: DevicePtr = "const u64*",
        ccol: DevicePtr = "const u32*",
        m: u32 = "u32",
        counts: DevicePtr = "u64*",
    }
    /// [`Kernel::MoveKept`](super::Kernel::MoveKept): C (`m` rows) as
    /// for [`Kernel::KeptCounts`](super::Kernel::KeptCounts), the compacted
    /// C's row offsets (its counts scanned) and arrays.
    MoveKeptArgs {
        crpt: DevicePtr = "const u64*",
        ccol: DevicePtr = "const u32*",
        cval: DevicePtr = "const value_t*",
        m: u32 = "u32",
        offsets: DevicePtr = "const u64*",
        outcol: DevicePtr = "u32*",
        outval: DevicePtr = "value_t*",
    }
    /// [`Kernel::GridPrepare`](super::Kernel::GridPrepare): A's columns
    /// (`annz`) and B's row offsets; `annz + 1` product counts; M (`m`
    /// rows, `mnnz` entries) and its zeroed bitmap of `words` words a row;
    /// `nvals` values of the dense grid (null and 0 for `any_pair`).
    GridPrepareArgs {
        acol: DevicePtr = "const u32*",
        annz: u64 = "u64",
        brpt: DevicePtr = "const u64*",
        lens: DevicePtr = "u64*",
        mrpt: DevicePtr = "const u64*",
        mcol: DevicePtr = "const u32*",
        m: u32 = "u32",
        mnnz: u64 = "u64",
        words: u32 = "u32",
        maskbits: DevicePtr = "u32*",
        gval: DevicePtr = "value_t*",
        nvals: u64 = "u64",
    }
    /// [`Kernel::GridProducts`](super::Kernel::GridProducts): A (`m`
    /// rows, `annz` entries) with its products' scanned counts, B (`n`
    /// columns), M's bitmap (`words` a row) and whether it is complemented;
    /// C's bitmap (zeroed) and dense values (null for `any_pair`).
    GridProductsArgs {
        arpt: DevicePtr = "const u64*",
        acol: DevicePtr = "const u32*",
        aval: DevicePtr = "const value_t*",
        m: u32 = "u32",
        annz: u64 = "u64",
        offs: DevicePtr = "const u64*",
        brpt: DevicePtr = "const u64*",
        bcol: DevicePtr = "const u32*",
        bval: DevicePtr = "const value_t*",
        n: u32 = "u32",
        words: u32 = "u32",
        maskbits: DevicePtr = "const u32*",
        complement: u32 = "u32",
        hit: DevicePtr = "u32*",
        gval: DevicePtr = "value_t*",
    }
    /// [`Kernel::GridCounts`](super::Kernel::GridCounts): C's bitmap
    /// (`nwords`); `nwords + 1` counts.
    GridCountsArgs {
        hit: DevicePtr = "const u32*",
        nwords: u64 = "u64",
        places: DevicePtr = "u64*",
    }
    /// [`Kernel::GridFill`](super::Kernel::GridFill): C's bitmap (`m`
    /// rows of `words` words, `n` columns), the scanned counts, the dense
    /// values (null for `any_pair`); C's `m + 1` row offsets, columns and
    /// values.
    GridFillArgs {
        hit: DevicePtr = "const u32*",
        m: u32 = "u32",
        words: u32 = "u32",
        n: u32 = "u32",
        places: DevicePtr = "const u64*",
        gval: DevicePtr = "const value_t*",
        crpt: DevicePtr = "u64*",
        ccol: DevicePtr = "u32*",
        cval: DevicePtr = "value_t*",
    }
    /// [`Kernel::GridVisit`](super::Kernel::GridVisit): a breadth-first
    /// search's new vertices (C's bitmap of one row, `nwords` words, `n`
    /// columns) added to the visited set's bitmap, their `levels` set to
    /// `depth` and appended to `next` at places counted in `found`
    /// (zeroed before); at depth 0 every vertex's level written from
    /// `hit`, nothing appended.
    GridVisitArgs {
        hit: DevicePtr = "const u32*",
        nwords: u64 = "u64",
        n: u64 = "u64",
        maskbits: DevicePtr = "u32*",
        levels: DevicePtr = "u32*",
        depth: u32 = "u32",
        next: DevicePtr = "u32*",
        found: DevicePtr = "u64*",
    }
}
