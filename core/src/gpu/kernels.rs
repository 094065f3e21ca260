//! The kernel catalogue: every kernel of the GPU program named once
//! ([`Kernel`]), with the typed arguments it is launched with (one struct
//! per parameter list, after candle's kernel ids and cudarc's launch
//! arguments). The compiled names, the order of the program's kernels, the
//! generated wrappers' C signatures and the offline resource checks all
//! derive from it; a test compares the parameter lists with the `extern "C"`
//! kernels of the shared body (`spgemm-kernels-shared`).
//!
//! A launch takes a kernel and its argument struct: a missing, extra or
//! mistyped argument does not compile, and a struct given to a kernel of
//! another parameter list is an error before the launch.

use crate::device::KernelArg;
use crate::table::{Bin, KernelTable};
use std::any::TypeId;

use super::config::SortVariant;
pub use super::shapes::{
    numeric_bin, numeric_shared_bytes, symbolic_bin, symbolic_packed_bin, symbolic_packed_bytes,
    symbolic_packed_fits, symbolic_registers, symbolic_shared_bytes,
};

/// Which phase a binning kernel bins for: nprod(i) (symbolic) or nnz(i)
/// (numeric), each against its own bin ranges (OpSparse Alg. 1–2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Bins by products per row, for the symbolic kernels.
    Symbolic,
    /// Bins by entries of C per row, for the numeric kernels.
    Numeric,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Symbolic => "symbolic",
            Phase::Numeric => "numeric",
        }
    }
}

/// Element type of another library's index arrays, read in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexWidth {
    /// `int32`.
    I32,
    /// `int64`.
    I64,
}

impl IndexWidth {
    fn name(self) -> &'static str {
        match self {
            IndexWidth::I32 => "i32",
            IndexWidth::I64 => "i64",
        }
    }

    /// Bytes per index.
    pub fn bytes(self) -> usize {
        match self {
            IndexWidth::I32 => 4,
            IndexWidth::I64 => 8,
        }
    }
}

/// Every kernel of the program, in the order of the pipeline (OpSparse §5,
/// DCU §5; the table in `docs/architecture.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// `spgemm_setup`: nprod(i) into C's row offsets, their total and
    /// maximum, the histogram of products by the length of their row of B.
    Setup,
    /// `spgemm_setup_short`: the same with fewer lanes per row, for an A
    /// of short rows.
    SetupShort,
    /// `spgemm_setup_split`: the rows of A that setup listed as longer
    /// than `SETUP_SPLIT` entries, summed in chunks by every warp.
    SetupSplit,
    /// `spgemm_same_rows`: the rows of A with the columns of the row before
    /// them, marked so that the symbolic phase counts only the first row
    /// of each run (`same_rows.cuh`); also B's, for the numeric phase's
    /// runs ([`Kernel::NumericRuns`]).
    SameRows,
    /// `spgemm_copy_same_rows`: after the symbolic phase, each marked row
    /// takes the count and the distinct and repeat bits of its run's
    /// first row.
    CopySameRows,
    /// `spgemm_bin_count_{phase}`: binning pass 1, rows per bin.
    BinCount(Phase),
    /// `spgemm_bin_fill_{phase}`: binning pass 2, row ids at per-bin offsets.
    BinFill(Phase),
    /// `spgemm_symbolic_bin{i}`: nnz(i) of the rows of shared symbolic bin
    /// `i` in a shared-memory hash table (OpSparse §5.6.1).
    SymbolicBin(usize),
    /// `spgemm_symbolic_packed_bin{i}`: the same with B packed into words of
    /// 32 columns and their masks (KokkosKernels §3.2), where the table and
    /// a mask per slot fit the table's shared memory
    /// ([`symbolic_packed_fits`]).
    SymbolicPackedBin(usize),
    /// `spgemm_symbolic_dense_shared`: nnz(i) by a bitmap in shared memory
    /// (rows of a narrow C; KokkosKernels §3.3).
    SymbolicDenseShared,
    /// `spgemm_symbolic_global`: nnz(i) of rows past the last shared table
    /// in a global hash table (OpSparse kernel 8, DCU §5.4).
    SymbolicGlobal,
    /// `spgemm_slice_bounds`: where the slices of long rows start, so that
    /// slices over blocks hold about equal products.
    SliceBounds,
    /// `spgemm_symbolic_dense`: nnz(i) of rows past the last shared table
    /// by a global bitmap, rows split into slices over blocks.
    SymbolicDense,
    /// `spgemm_scan_tiles`: exclusive scan within tiles.
    ScanTiles,
    /// `spgemm_scan_add`: adds the scanned tile sums.
    ScanAdd,
    /// `spgemm_numeric_direct`: rows of A with one entry, copied from B
    /// (DCU §5.2).
    NumericDirect,
    /// `spgemm_numeric_distinct`: short rows whose products all have
    /// different columns, placed by a scan and rank-sorted, a warp per row
    /// (expand-sort-compress with nothing to compress; no hash table).
    NumericDistinct,
    /// `spgemm_numeric_distinct_pruned`: [`Kernel::NumericDistinct`] with
    /// each row pruned where it lies before it is written
    /// (`row_prune.cuh`), generated for pruned products.
    NumericDistinctPruned,
    /// `spgemm_numeric_bin{i}`: the rows of shared numeric bin `i` in a
    /// shared-memory hash table, sorted (OpSparse §5.6.2, DCU §5.3).
    NumericBin(usize),
    /// `spgemm_numeric_bin{i}_pruned`: [`Kernel::NumericBin`] with each
    /// row pruned in its table before it is written (`row_prune.cuh`),
    /// for the bins the program builder's `pruned_kernels` lists.
    NumericBinPruned(usize),
    /// `spgemm_numeric_dense_shared`: rows of a narrow C in a dense row in
    /// shared memory.
    NumericDenseShared,
    /// `spgemm_numeric_runs`: rows of runs of rows of A with the same
    /// columns (marked by [`Kernel::SameRows`]), a few rows of a run
    /// together, their products walked once (`same_rows.cuh`).
    NumericRuns,
    /// `spgemm_numeric_ranked`: rows of a C too wide for a dense row of
    /// values in shared memory, by a bitmap of its columns whose ranks
    /// place each value (KokkosKernels §3.2–3.3).
    NumericRanked,
    /// `spgemm_numeric_ranked_long`: the same for the rows past the last
    /// shared table whose values fit a block's shared memory, in blocks
    /// of the most threads.
    NumericRankedLong,
    /// `spgemm_numeric_global`: the longest rows in global hash tables,
    /// sorted in place (DCU kernel 9).
    NumericGlobal,
    /// `spgemm_numeric_dense`: the longest rows accumulated densely in
    /// global memory, rows split into slices over blocks.
    NumericDense,
    /// `spgemm_numeric_dense_compact`: writes the dense rows out in column
    /// order.
    NumericDenseCompact,
    /// `spgemm_fill_empty`: marks hash keys empty.
    FillEmpty,
    /// `spgemm_fill_identity`: sets global accumulators to the identity of
    /// the semiring's `⊕` (when it is not zero).
    FillIdentity,
    /// `spgemm_numeric_hash_slices`: global hash tables of the longest
    /// rows, rows split into slices over blocks (DCU kernel 8).
    NumericHashSlices,
    /// `spgemm_sort_step`: one compare-exchange step of a device-wide
    /// bitonic sort of those tables.
    SortStep,
    /// `spgemm_sort_tiles`: the steps within tiles, and the copy of the
    /// sorted rows into C.
    SortTiles,
    /// `spgemm_check_offsets_{width}`: checks row offsets read in place
    /// from another library's arrays, widening them to `u64`.
    CheckOffsets(IndexWidth),
    /// `spgemm_check_entries_{width}`: checks the column indices' bounds
    /// and order within rows, narrowing 64-bit ones to `u32`.
    CheckEntries(IndexWidth),
    /// `spgemm_narrow_offsets`: C's row offsets narrowed to int32 for
    /// another library's CSR.
    NarrowOffsets,
    /// `spgemm_pack_count`: runs of B's rows in words of 32 columns, per
    /// row and in all (KokkosKernels §3.2).
    PackCount,
    /// `spgemm_pack_fill`: B's rows packed into those runs, a word and its
    /// mask of columns each.
    PackFill,
    /// `spgemm_place_offsets`: the row offsets of a matrix assembled from
    /// runs of rows copied from other matrices.
    PlaceOffsets,
    /// `spgemm_numeric_one_pass_{lanes}`: short rows computed, counted and
    /// placed in one pass, with no symbolic phase, `lanes` lanes a row (4,
    /// 8, 16; 0: a warp) and a tile of rows per block.
    NumericOnePass(u32),
    /// `spgemm_numeric_one_pass_pruned_{lanes}`: the same, each row pruned
    /// before it is counted (the threshold, then the `keep` largest).
    NumericOnePassPruned(u32),
    /// `spgemm_one_pass_sample`: the compression ratio of a sample of
    /// rows, as the one pass computes them.
    OnePassSample,
    /// `spgemm_masked_dot`: `C⟨M⟩ = A ⊕.⊗ B` by a dot product per entry of
    /// M (GraphBLAS's dot3), in a program of its own per value type and
    /// semiring ([`crate::gpu::program::masked_dot`]), with the two
    /// kernels that form Bᵀ for it.
    MaskedDot,
    /// `spgemm_masked_dot_heavy`: the entries of M whose shorter side is
    /// long, which the masked dot kernel listed, a block each (masked
    /// program).
    MaskedDotHeavy,
    /// `spgemm_column_counts`: B's entries per column (masked program).
    ColumnCounts,
    /// `spgemm_transpose_scatter`: Bᵀ's rows, in no particular order,
    /// from B's (masked program).
    TransposeScatter,
    /// `spgemm_keep_flags`: 1 for each entry of C a product met (masked
    /// program), scanned into the kept entries' places.
    KeepFlags,
    /// `spgemm_compact_entries`: C's kept entries moved to their places, in
    /// their order (masked program).
    CompactEntries,
    /// `spgemm_compact_offsets`: the compacted C's row offsets, the places
    /// of the rows' first entries (masked program).
    CompactOffsets,
    /// `spgemm_complement_mark`: C's entries inside a complemented mask
    /// marked for the compaction to drop (masked program).
    ComplementMark,
    /// `spgemm_complement_flags`: 1 for each column a complemented mask's
    /// row does not hold (masked program), scanned into the explicit
    /// complement's places.
    ComplementFlags,
    /// `spgemm_complement_fill`: the explicit complement's columns and row
    /// offsets (masked program).
    ComplementFill,
    /// `spgemm_grid_prepare`, `spgemm_grid_products`, `spgemm_grid_counts`,
    /// `spgemm_grid_fill`, `spgemm_grid_visit`: a masked product pushed
    /// into a dense grid of C's rows (`grid.cuh`; masked program): the
    /// products per entry of A and the mask's bits; the products; the set
    /// bits per word; C written out; a breadth-first search's new level
    /// added to the visited set and its vertices' levels.
    GridPrepare,
    /// See [`Kernel::GridPrepare`].
    GridProducts,
    /// See [`Kernel::GridPrepare`].
    GridCounts,
    /// See [`Kernel::GridPrepare`].
    GridFill,
    /// See [`Kernel::GridPrepare`].
    GridVisit,
    /// `spgemm_prune_rows`: C's entries below a threshold or past the
    /// largest `keep` of their row marked for the compaction to drop
    /// (masked program).
    PruneRows,
    /// `spgemm_prune_columns`: C's entries past the largest `keep` of
    /// their column, found through Cᵀ, marked for the compaction to drop
    /// (masked program).
    PruneColumns,
    /// `spgemm_sort_rows`: each row of a matrix sorted by column in place,
    /// its values alongside (`sorted_rows.cuh`; masked program): the rows
    /// of a transpose formed on the device.
    SortRows,
    /// `spgemm_kept_counts`: the entries of each row of C that the marks
    /// keep, a warp a row, for the row-by-row compaction (masked program).
    KeptCounts,
    /// `spgemm_move_kept`: each row's kept entries moved, in order, to
    /// their row's place in the compacted C (masked program).
    MoveKept,
}

/// The kernels of the masked program ([`crate::gpu::program::masked_dot`]),
/// in the order they are compiled.
pub const MASKED: [Kernel; 22] = [
    Kernel::ScanTiles,
    Kernel::ScanAdd,
    Kernel::ColumnCounts,
    Kernel::TransposeScatter,
    Kernel::MaskedDot,
    Kernel::MaskedDotHeavy,
    Kernel::KeepFlags,
    Kernel::CompactEntries,
    Kernel::CompactOffsets,
    Kernel::ComplementMark,
    Kernel::ComplementFlags,
    Kernel::ComplementFill,
    Kernel::SortRows,
    Kernel::GridPrepare,
    Kernel::GridProducts,
    Kernel::GridCounts,
    Kernel::GridFill,
    Kernel::GridVisit,
    Kernel::PruneRows,
    Kernel::PruneColumns,
    Kernel::KeptCounts,
    Kernel::MoveKept,
];

/// The kernels written out in the shared body (the others are wrappers the
/// program builder generates per table), in the order they are compiled.
pub const FIXED: [Kernel; 42] = [
    Kernel::Setup,
    Kernel::SetupShort,
    Kernel::SetupSplit,
    Kernel::SameRows,
    Kernel::CopySameRows,
    Kernel::SymbolicGlobal,
    Kernel::ScanTiles,
    Kernel::ScanAdd,
    Kernel::NumericGlobal,
    Kernel::NumericDirect,
    Kernel::NumericDistinct,
    Kernel::SliceBounds,
    Kernel::SymbolicDense,
    Kernel::NumericDense,
    Kernel::NumericDenseCompact,
    Kernel::FillEmpty,
    Kernel::FillIdentity,
    Kernel::NumericHashSlices,
    Kernel::SortStep,
    Kernel::SortTiles,
    Kernel::SymbolicDenseShared,
    Kernel::NumericDenseShared,
    Kernel::NumericRuns,
    Kernel::NumericRanked,
    Kernel::NumericRankedLong,
    Kernel::CheckOffsets(IndexWidth::I32),
    Kernel::CheckOffsets(IndexWidth::I64),
    Kernel::CheckEntries(IndexWidth::I32),
    Kernel::CheckEntries(IndexWidth::I64),
    Kernel::NarrowOffsets,
    Kernel::PackCount,
    Kernel::PackFill,
    Kernel::PlaceOffsets,
    Kernel::NumericOnePass(4),
    Kernel::NumericOnePass(8),
    Kernel::NumericOnePass(16),
    Kernel::NumericOnePass(0),
    Kernel::NumericOnePassPruned(4),
    Kernel::NumericOnePassPruned(8),
    Kernel::NumericOnePassPruned(16),
    Kernel::NumericOnePassPruned(0),
    Kernel::OnePassSample,
];

impl Kernel {
    /// The kernel's name in the program (its `extern "C"` symbol).
    pub fn name(self) -> String {
        let fixed = match self {
            Kernel::Setup => "spgemm_setup",
            Kernel::SetupShort => "spgemm_setup_short",
            Kernel::SetupSplit => "spgemm_setup_split",
            Kernel::SameRows => "spgemm_same_rows",
            Kernel::CopySameRows => "spgemm_copy_same_rows",
            Kernel::BinCount(p) => return format!("spgemm_bin_count_{}", p.name()),
            Kernel::BinFill(p) => return format!("spgemm_bin_fill_{}", p.name()),
            Kernel::SymbolicBin(i) => return format!("spgemm_symbolic_bin{i}"),
            Kernel::SymbolicPackedBin(i) => return format!("spgemm_symbolic_packed_bin{i}"),
            Kernel::NumericBin(i) => return format!("spgemm_numeric_bin{i}"),
            Kernel::NumericBinPruned(i) => return format!("spgemm_numeric_bin{i}_pruned"),
            Kernel::CheckOffsets(w) => return format!("spgemm_check_offsets_{}", w.name()),
            Kernel::NumericOnePass(0) => "spgemm_numeric_one_pass_warp",
            Kernel::NumericOnePass(lanes) => return format!("spgemm_numeric_one_pass_{lanes}"),
            Kernel::NumericOnePassPruned(0) => "spgemm_numeric_one_pass_pruned_warp",
            Kernel::NumericOnePassPruned(lanes) => {
                return format!("spgemm_numeric_one_pass_pruned_{lanes}")
            }
            Kernel::OnePassSample => "spgemm_one_pass_sample",
            Kernel::CheckEntries(w) => return format!("spgemm_check_entries_{}", w.name()),
            Kernel::SymbolicDenseShared => "spgemm_symbolic_dense_shared",
            Kernel::SymbolicGlobal => "spgemm_symbolic_global",
            Kernel::SliceBounds => "spgemm_slice_bounds",
            Kernel::SymbolicDense => "spgemm_symbolic_dense",
            Kernel::ScanTiles => "spgemm_scan_tiles",
            Kernel::ScanAdd => "spgemm_scan_add",
            Kernel::NumericDirect => "spgemm_numeric_direct",
            Kernel::NumericDistinct => "spgemm_numeric_distinct",
            Kernel::NumericDistinctPruned => "spgemm_numeric_distinct_pruned",
            Kernel::NumericDenseShared => "spgemm_numeric_dense_shared",
            Kernel::NumericRuns => "spgemm_numeric_runs",
            Kernel::NumericRanked => "spgemm_numeric_ranked",
            Kernel::NumericRankedLong => "spgemm_numeric_ranked_long",
            Kernel::NumericGlobal => "spgemm_numeric_global",
            Kernel::NumericDense => "spgemm_numeric_dense",
            Kernel::NumericDenseCompact => "spgemm_numeric_dense_compact",
            Kernel::FillEmpty => "spgemm_fill_empty",
            Kernel::FillIdentity => "spgemm_fill_identity",
            Kernel::NumericHashSlices => "spgemm_numeric_hash_slices",
            Kernel::SortStep => "spgemm_sort_step",
            Kernel::SortTiles => "spgemm_sort_tiles",
            Kernel::NarrowOffsets => "spgemm_narrow_offsets",
            Kernel::PackCount => "spgemm_pack_count",
            Kernel::PackFill => "spgemm_pack_fill",
            Kernel::PlaceOffsets => "spgemm_place_offsets",
            Kernel::MaskedDot => "spgemm_masked_dot",
            Kernel::MaskedDotHeavy => "spgemm_masked_dot_heavy",
            Kernel::ColumnCounts => "spgemm_column_counts",
            Kernel::TransposeScatter => "spgemm_transpose_scatter",
            Kernel::KeepFlags => "spgemm_keep_flags",
            Kernel::CompactEntries => "spgemm_compact_entries",
            Kernel::CompactOffsets => "spgemm_compact_offsets",
            Kernel::ComplementMark => "spgemm_complement_mark",
            Kernel::ComplementFlags => "spgemm_complement_flags",
            Kernel::ComplementFill => "spgemm_complement_fill",
            Kernel::GridPrepare => "spgemm_grid_prepare",
            Kernel::GridProducts => "spgemm_grid_products",
            Kernel::GridCounts => "spgemm_grid_counts",
            Kernel::GridFill => "spgemm_grid_fill",
            Kernel::GridVisit => "spgemm_grid_visit",
            Kernel::PruneRows => "spgemm_prune_rows",
            Kernel::PruneColumns => "spgemm_prune_columns",
            Kernel::SortRows => "spgemm_sort_rows",
            Kernel::KeptCounts => "spgemm_kept_counts",
            Kernel::MoveKept => "spgemm_move_kept",
        };
        fixed.to_string()
    }

    /// The argument struct the kernel is launched with, and its parameter
    /// list.
    fn args(self) -> (TypeId, fn(&mut Vec<Param>)) {
        fn of<A: KernelArgs>() -> (TypeId, fn(&mut Vec<Param>)) {
            (TypeId::of::<A>(), A::params)
        }
        match self {
            Kernel::Setup | Kernel::SetupShort => of::<SetupArgs>(),
            Kernel::SetupSplit => of::<SetupRows>(),
            Kernel::SameRows => of::<SameRowsArgs>(),
            Kernel::CopySameRows => of::<CopySameRowsArgs>(),
            Kernel::BinCount(_) => of::<BinCountArgs>(),
            Kernel::BinFill(_) => of::<BinFillArgs>(),
            Kernel::SymbolicBin(_) | Kernel::SymbolicPackedBin(_) => of::<SymbolicBinArgs>(),
            Kernel::SymbolicDenseShared => of::<SymbolicDenseSharedArgs>(),
            Kernel::SymbolicGlobal => of::<SymbolicGlobalArgs>(),
            Kernel::SliceBounds => of::<SliceBoundsArgs>(),
            Kernel::SymbolicDense => of::<SymbolicDenseArgs>(),
            Kernel::ScanTiles => of::<ScanTilesArgs>(),
            Kernel::ScanAdd => of::<ScanAddArgs>(),
            Kernel::NumericDirect | Kernel::NumericDistinct => of::<NumericRows>(),
            Kernel::NumericBin(_) => of::<NumericBinArgs>(),
            Kernel::NumericBinPruned(_) => of::<NumericBinPrunedArgs>(),
            Kernel::NumericDistinctPruned => of::<NumericDistinctPrunedArgs>(),
            Kernel::NumericDenseShared => of::<NumericDenseSharedArgs>(),
            Kernel::NumericRuns => of::<NumericRunsArgs>(),
            Kernel::NumericRanked | Kernel::NumericRankedLong => of::<NumericRankedArgs>(),
            Kernel::NumericGlobal => of::<NumericGlobalArgs>(),
            Kernel::NumericDense | Kernel::NumericDenseCompact => of::<NumericDenseArgs>(),
            Kernel::FillEmpty => of::<FillEmptyArgs>(),
            Kernel::FillIdentity => of::<FillIdentityArgs>(),
            Kernel::NumericHashSlices => of::<NumericHashSlicesArgs>(),
            Kernel::SortStep => of::<SortStepArgs>(),
            Kernel::SortTiles => of::<SortTilesArgs>(),
            Kernel::CheckOffsets(_) => of::<CheckOffsetsArgs>(),
            Kernel::CheckEntries(_) => of::<CheckEntriesArgs>(),
            Kernel::NarrowOffsets => of::<NarrowOffsetsArgs>(),
            Kernel::PackCount => of::<PackCountArgs>(),
            Kernel::PackFill => of::<PackFillArgs>(),
            Kernel::PlaceOffsets => of::<PlaceOffsetsArgs>(),
            Kernel::NumericOnePass(_) | Kernel::NumericOnePassPruned(_) => {
                of::<NumericOnePassArgs>()
            }
            Kernel::OnePassSample => of::<OnePassSampleArgs>(),
            Kernel::MaskedDot => of::<MaskedDotArgs>(),
            Kernel::MaskedDotHeavy => of::<MaskedDotHeavyArgs>(),
            Kernel::ColumnCounts => of::<ColumnCountsArgs>(),
            Kernel::TransposeScatter => of::<TransposeScatterArgs>(),
            Kernel::KeepFlags => of::<KeepFlagsArgs>(),
            Kernel::CompactEntries => of::<CompactEntriesArgs>(),
            Kernel::CompactOffsets => of::<CompactOffsetsArgs>(),
            Kernel::ComplementMark => of::<ComplementMarkArgs>(),
            Kernel::ComplementFlags => of::<ComplementFlagsArgs>(),
            Kernel::ComplementFill => of::<ComplementFillArgs>(),
            Kernel::GridPrepare => of::<GridPrepareArgs>(),
            Kernel::GridProducts => of::<GridProductsArgs>(),
            Kernel::GridCounts => of::<GridCountsArgs>(),
            Kernel::GridFill => of::<GridFillArgs>(),
            Kernel::GridVisit => of::<GridVisitArgs>(),
            Kernel::PruneRows => of::<PruneRowsArgs>(),
            Kernel::PruneColumns => of::<PruneColumnsArgs>(),
            Kernel::SortRows => of::<SortRowsArgs>(),
            Kernel::KeptCounts => of::<KeptCountsArgs>(),
            Kernel::MoveKept => of::<MoveKeptArgs>(),
        }
    }

    /// The kernel's parameters, in order.
    pub fn params(self) -> Vec<Param> {
        let mut out = Vec::new();
        (self.args().1)(&mut out);
        out
    }

    /// The kernel's C parameter list (`const u64* arpt, u32 m, …`).
    pub fn c_params(self) -> String {
        let params: Vec<String> = self
            .params()
            .iter()
            .map(|p| format!("{} {}", p.ctype, p.name))
            .collect();
        params.join(", ")
    }

    /// Whether `A` is this kernel's argument struct.
    pub(crate) fn takes<A: KernelArgs>(self) -> bool {
        self.args().0 == TypeId::of::<A>()
    }

    /// The bin a per-bin kernel computes with `table` and `sort`, and the
    /// dynamic shared memory it is launched with, bytes (`None` for the
    /// other kernels): lets resource checks compare a compiled kernel with
    /// its table.
    pub fn bin(self, table: &KernelTable, sort: SortVariant) -> Option<(Bin, usize)> {
        match self {
            Kernel::SymbolicBin(i) if i < table.symbolic.len() => Some((
                symbolic_bin(table, i, sort),
                symbolic_shared_bytes(table, i),
            )),
            Kernel::SymbolicPackedBin(i) if i < table.symbolic.len() => Some((
                symbolic_packed_bin(table, i),
                symbolic_packed_bytes(table, i),
            )),
            Kernel::NumericBin(i) | Kernel::NumericBinPruned(i) if i < table.numeric.len() => {
                Some((
                    numeric_bin(table, i, sort),
                    numeric_shared_bytes(table, i, sort),
                ))
            }
            _ => None,
        }
    }
}

/// One kernel parameter: its C type and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// C type, as in the kernel source (`const u64*`, `u32`, `value_t*`).
    pub ctype: &'static str,
    /// Parameter name.
    pub name: &'static str,
}

/// A device address passed to a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DevicePtr(pub(crate) u64);

impl DevicePtr {
    /// The address `bytes` further on.
    pub(crate) fn add(self, bytes: u64) -> Self {
        Self(self.0 + bytes)
    }
}

/// A value a kernel parameter of one kind takes.
pub(crate) trait ArgValue: Copy {
    fn arg(self) -> KernelArg;
}

impl ArgValue for DevicePtr {
    fn arg(self) -> KernelArg {
        KernelArg::Ptr(self.0)
    }
}

impl ArgValue for u32 {
    fn arg(self) -> KernelArg {
        KernelArg::U32(self)
    }
}

impl ArgValue for u64 {
    fn arg(self) -> KernelArg {
        KernelArg::U64(self)
    }
}

/// The arguments of a parameter list, as a struct with a field per
/// parameter.
pub(crate) trait KernelArgs: 'static {
    /// Appends the parameters, in order.
    fn params(out: &mut Vec<Param>);
    /// Appends the arguments, in the order of [`KernelArgs::params`].
    fn push(&self, out: &mut Vec<KernelArg>);
}

/// Argument structs: a field per parameter (`name: Rust type = "C type"`),
/// optionally after a group of parameters several kernels start with.
macro_rules! kernel_args {
    ($(
        $(#[$doc:meta])*
        $name:ident $([$group:ident: $gty:ident])? {
            $($field:ident: $ty:ident = $ctype:literal),* $(,)?
        }
    )*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub(crate) struct $name {
            $(pub(crate) $group: $gty,)?
            $(pub(crate) $field: $ty,)*
        }

        impl KernelArgs for $name {
            fn params(out: &mut Vec<Param>) {
                $(<$gty as KernelArgs>::params(out);)?
                $(out.push(Param { ctype: $ctype, name: stringify!($field) });)*
            }
            fn push(&self, out: &mut Vec<KernelArg>) {
                $(self.$group.push(out);)?
                $(out.push(self.$field.arg());)*
            }
        }
    )*};
}

kernel_args! {
    /// What every setup kernel reads and writes ([`Kernel::SetupSplit`]
    /// takes only these): A's row offsets and columns, B's row offsets,
    /// nprod per row (in C's row offsets), the stats and histogram of the
    /// binning metadata, and the rows listed for the split with their
    /// count.
    SetupRows {
        arpt: DevicePtr = "const u64*",
        acol: DevicePtr = "const u32*",
        brpt: DevicePtr = "const u64*",
        crpt: DevicePtr = "u64*",
        stats: DevicePtr = "u64*",
        hist: DevicePtr = "u64*",
        split: DevicePtr = "u32*",
        nsplit: DevicePtr = "u32*",
    }
    /// [`Kernel::Setup`] and [`Kernel::SetupShort`]: A's rows, and the
    /// four fault words of the operands' pending checks (null when none),
    /// which the first block copies to `seen` (`Meta::faults`); B's column
    /// indices and rows, and the three zeroed words where it leaves B's
    /// bandwidths and their mark for the symbolic binning (null: none).
    SetupArgs [rows: SetupRows] {
        m: u32 = "u32",
        faults: DevicePtr = "const u64*",
        seen: DevicePtr = "u64*",
        bcol: DevicePtr = "const u32*",
        k: u32 = "u32",
        band: DevicePtr = "u64*",
    }
    /// [`Kernel::SameRows`]: A's rows, the fault words of the operands'
    /// pending checks (null when none), the zeroed bits it sets, a bit a
    /// row, and the counter it adds their number to.
    SameRowsArgs {
        arpt: DevicePtr = "const u64*",
        acol: DevicePtr = "const u32*",
        m: u32 = "u32",
        faults: DevicePtr = "const u64*",
        same_rows: DevicePtr = "u32*",
        nsame: DevicePtr = "u64*",
    }
    /// [`Kernel::CopySameRows`]: C's row offsets (the symbolic phase's
    /// counts), the rows, their same-row bits and their distinct and
    /// repeat bits.
    CopySameRowsArgs {
        crpt: DevicePtr = "u64*",
        m: u32 = "u32",
        same_rows: DevicePtr = "const u32*",
        distinct_rows: DevicePtr = "u32*",
        repeat_rows: DevicePtr = "u32*",
    }
    /// What both binning passes start with: the binned value per row
    /// (`crpt`), A's row offsets, the rows, whether single-entry rows of
    /// A may be copied directly, and (numeric phase) the distinct-row bits
    /// with the most entries a row of the distinct bin may have and the
    /// most a row of the ranked bin may have (0: none), and the most
    /// entries of a row binned as a longer one (0: none; `PROMOTE_SHIFT`
    /// of the shared constants says how much longer) with the fewest
    /// entries of A it must have; (symbolic phase) A's column indices and
    /// B's bandwidths with their mark (found by setup, [`SetupArgs`]; null:
    /// rows are binned by nprod alone), and the rows that get no bin, their
    /// run's first row counted for them ([`SameRowsArgs`]; null: none).
    BinnedRows {
        crpt: DevicePtr = "const u64*",
        arpt: DevicePtr = "const u64*",
        m: u32 = "u32",
        direct_ok: u32 = "u32",
        distinct_rows: DevicePtr = "const u32*",
        distinct_max: u32 = "u32",
        ranked_max: u32 = "u32",
        promote_max: u32 = "u32",
        promote_min_a: u32 = "u32",
        acol: DevicePtr = "const u32*",
        band: DevicePtr = "const u64*",
        same_rows: DevicePtr = "const u32*",
    }
    /// [`Kernel::BinCount`].
    BinCountArgs [rows: BinnedRows] {
        sizes: DevicePtr = "u32*",
        max_value: DevicePtr = "u64*",
    }
    /// [`Kernel::BinFill`].
    BinFillArgs [rows: BinnedRows] {
        sizes: DevicePtr = "const u32*",
        cursor: DevicePtr = "u32*",
        bins: DevicePtr = "u32*",
    }
    /// [`Kernel::ScanTiles`].
    ScanTilesArgs {
        data: DevicePtr = "u64*",
        n: u64 = "u64",
        sums: DevicePtr = "u64*",
    }
    /// [`Kernel::ScanAdd`].
    ScanAddArgs {
        data: DevicePtr = "u64*",
        n: u64 = "u64",
        sums: DevicePtr = "const u64*",
    }
    /// What every symbolic kernel over listed rows starts with: A's and B's
    /// structure, the `nrows` rows listed at `bins`, C's row offsets and G.
    SymbolicRows {
        arpt: DevicePtr = "const u64*",
        acol: DevicePtr = "const u32*",
        brpt: DevicePtr = "const u64*",
        bcol: DevicePtr = "const u32*",
        bins: DevicePtr = "const u32*",
        nrows: u32 = "u32",
        crpt: DevicePtr = "u64*",
        g: u32 = "u32",
    }
    /// [`Kernel::SymbolicBin`].
    SymbolicBinArgs [rows: SymbolicRows] {
        threshold: u32 = "u32",
        overflow: DevicePtr = "u32*",
        noverflow: DevicePtr = "u32*",
        distinct_rows: DevicePtr = "u32*",
        repeat_rows: DevicePtr = "u32*",
        band: DevicePtr = "const u64*",
    }
    /// [`Kernel::SymbolicDenseShared`].
    SymbolicDenseSharedArgs [rows: SymbolicRows] {
        words: u32 = "u32",
        distinct_rows: DevicePtr = "u32*",
        repeat_rows: DevicePtr = "u32*",
    }
    /// [`Kernel::SymbolicGlobal`].
    SymbolicGlobalArgs [rows: SymbolicRows] {
        table_all: DevicePtr = "u32*",
        tsize: u32 = "u32",
    }
    /// [`Kernel::SliceBounds`]: the `nrows` rows listed at `bins`, each
    /// split into `slices` slices, their `slices + 1` bounds a row into
    /// `bounds`.
    SliceBoundsArgs {
        arpt: DevicePtr = "const u64*",
        acol: DevicePtr = "const u32*",
        brpt: DevicePtr = "const u64*",
        bins: DevicePtr = "const u32*",
        nrows: u32 = "u32",
        slices: u32 = "u32",
        bounds: DevicePtr = "u64*",
    }
    /// [`Kernel::SymbolicDense`]: the slices' `bounds` from
    /// [`Kernel::SliceBounds`].
    SymbolicDenseArgs [rows: SymbolicRows] {
        bits_all: DevicePtr = "u32*",
        words: u32 = "u32",
        slices: u32 = "u32",
        tickets: DevicePtr = "u32*",
        repeat_rows: DevicePtr = "u32*",
        bounds: DevicePtr = "const u64*",
    }
}

#[path = "check_args.rs"]
mod check_args;
pub(crate) use check_args::*;
#[path = "masked_args.rs"]
mod masked_args;
pub(crate) use masked_args::*;
#[path = "numeric_args.rs"]
mod numeric_args;
pub(crate) use numeric_args::*;
#[path = "one_pass_args.rs"]
mod one_pass_args;
pub(crate) use one_pass_args::*;

/// The arguments of `args` for a launch of `kernel`, in order.
///
/// # Errors
/// A message naming both when `args` is another kernel's struct.
pub(crate) fn launch_args<A: KernelArgs>(
    kernel: Kernel,
    args: &A,
) -> Result<Vec<KernelArg>, String> {
    if !kernel.takes::<A>() {
        return Err(format!(
            "{} is not launched with {}",
            kernel.name(),
            std::any::type_name::<A>()
                .rsplit("::")
                .next()
                .unwrap_or_default()
        ));
    }
    let mut out = Vec::with_capacity(16);
    args.push(&mut out);
    Ok(out)
}

#[cfg(test)]
#[path = "kernels_tests.rs"]
mod tests;
