//! Assembles the kernel program for one device and value type: the vendor
//! prelude, the value type, the table's bin ranges, the shared body, and one
//! `extern "C"` wrapper per bin that instantiates the body's templates with
//! that bin's table size, block shape and sort (OpSparse Tables 1–2).

use crate::device::KernelProgram;
use crate::scalar::Scalar;
use crate::table::{Bin, KernelTable};
use std::fmt::Write;

/// How the numeric step produces sorted rows from a shared-memory table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SortVariant {
    /// Bitonic-sort the whole table, copy its first nnz slots (DCU §5.3).
    Bitonic,
    /// Condense occupied slots, then rank-sort them (OpSparse §5.6.2).
    CondenseRank,
    /// Condense with one shared atomic per warp segment, then bitonic-sort
    /// only the condensed entries (the DCU sort on OpSparse's condensed row).
    CondenseBitonic,
    /// Bitonic over the whole table on tables that sort that way
    /// ([`KernelTable::whole_table_sort`]: the DCU paper's); elsewhere per
    /// bin, rank sort for bins of rows up to [`RANK_MAX_NNZ`] entries,
    /// condense + bitonic above (measured on an H200: rank wins on rows of a
    /// few hundred entries, bitonic on rows of thousands; `docs/benchmarks/`).
    #[default]
    Auto,
}

/// Largest nnz of a row that [`SortVariant::Auto`] rank-sorts.
pub const RANK_MAX_NNZ: u64 = 1024;

impl SortVariant {
    /// The variant's number in the kernel source (`SORT` template argument)
    /// for numeric bin `bin` of `table`. Condensing keeps a counter beside
    /// the table, so a table that fills a block's shared memory is
    /// bitonic-sorted whatever the variant.
    pub fn code(self, table: &KernelTable, bin: &Bin) -> u32 {
        let code = match self {
            SortVariant::Bitonic => 0,
            SortVariant::CondenseRank => 1,
            SortVariant::CondenseBitonic => 2,
            SortVariant::Auto if table.whole_table_sort => 0,
            SortVariant::Auto if bin.max <= RANK_MAX_NNZ => 1,
            SortVariant::Auto => 2,
        };
        let with_counter = bin.shared_bytes(table.numeric_entry_bytes(), true);
        if with_counter > table.shared_per_block {
            0
        } else {
            code
        }
    }
}

crate::choices::named_choices!(SortVariant, "sort", {
    Bitonic => "bitonic",
    CondenseRank => "rank",
    CondenseBitonic => "condense-bitonic",
    Auto => "auto",
});

/// Kernels that do not depend on the table.
pub(crate) const FIXED: [&str; 15] = [
    "spgemm_setup",
    "spgemm_symbolic_global",
    "spgemm_scan_tiles",
    "spgemm_scan_add",
    "spgemm_numeric_global",
    "spgemm_numeric_direct",
    "spgemm_symbolic_dense",
    "spgemm_numeric_dense",
    "spgemm_numeric_dense_compact",
    "spgemm_fill_empty",
    "spgemm_numeric_hash_slices",
    "spgemm_sort_step",
    "spgemm_sort_tiles",
    "spgemm_symbolic_dense_shared",
    "spgemm_numeric_dense_shared",
];

/// Index of each fixed kernel in the loaded list (the concatenation of the
/// units' kernel lists from [`build`]).
pub mod k {
    /// `spgemm_setup`: products per row, B-row histogram.
    pub const SETUP: usize = 0;
    /// `spgemm_symbolic_global`: global hash for overflowed rows.
    pub const SYMBOLIC_GLOBAL: usize = 1;
    /// `spgemm_scan_tiles`: tile scans.
    pub const SCAN_TILES: usize = 2;
    /// `spgemm_scan_add`: adds scanned tile sums.
    pub const SCAN_ADD: usize = 3;
    /// `spgemm_numeric_global`: global hash for the longest rows.
    pub const NUMERIC_GLOBAL: usize = 4;
    /// `spgemm_numeric_direct`: single-entry rows of A.
    pub const NUMERIC_DIRECT: usize = 5;
    /// `spgemm_symbolic_dense`: bitmap count of slices of the longest rows.
    pub const SYMBOLIC_DENSE: usize = 6;
    /// `spgemm_numeric_dense`: dense accumulation of slices of the longest rows.
    pub const NUMERIC_DENSE: usize = 7;
    /// `spgemm_numeric_dense_compact`: writes the dense rows out, sorted.
    pub const NUMERIC_DENSE_COMPACT: usize = 8;
    /// `spgemm_fill_empty`: marks hash keys empty.
    pub const FILL_EMPTY: usize = 9;
    /// `spgemm_numeric_hash_slices`: global hash tables of the longest rows,
    /// slices of each row over several blocks (DCU kernel 8).
    pub const NUMERIC_HASH_SLICES: usize = 10;
    /// `spgemm_sort_step`: one compare-exchange step of a device-wide
    /// bitonic sort of the tables.
    pub const SORT_STEP: usize = 11;
    /// `spgemm_sort_tiles`: the steps of a bitonic sort within tiles of the
    /// tables, and the copy of sorted rows into C.
    pub const SORT_TILES: usize = 12;
    /// `spgemm_symbolic_dense_shared`: bitmap count of rows of a narrow C
    /// in shared memory.
    pub const SYMBOLIC_DENSE_SHARED: usize = 13;
    /// `spgemm_numeric_dense_shared`: dense accumulation of rows of a
    /// narrow C in shared memory.
    pub const NUMERIC_DENSE_SHARED: usize = 14;
    /// Symbolic binning, pass 1.
    pub const BIN_COUNT_SYMBOLIC: usize = 15;
    /// Symbolic binning, pass 2.
    pub const BIN_FILL_SYMBOLIC: usize = 16;
    /// Numeric binning, pass 1.
    pub const BIN_COUNT_NUMERIC: usize = 17;
    /// Numeric binning, pass 2.
    pub const BIN_FILL_NUMERIC: usize = 18;
    /// First per-bin kernel: shared symbolic bins, then shared numeric bins.
    pub const FIRST_BIN: usize = 19;
}

fn u64_list(v: impl Iterator<Item = u64>) -> String {
    v.map(|x| format!("{x}ull")).collect::<Vec<_>>().join(", ")
}

/// Dynamic shared memory of the kernel of symbolic bin `i`, bytes: its
/// tables, and a counter per row in the bin that records overflowing rows.
pub fn symbolic_shared_bytes(table: &KernelTable, i: usize) -> usize {
    let overflow = i + 1 == table.symbolic.len() && table.symbolic_overflows();
    table.symbolic[i].shared_bytes(4, overflow)
}

/// Dynamic shared memory of the kernel of numeric bin `i` with `sort`,
/// bytes: its tables, and a counter per row when the sort condenses.
pub fn numeric_shared_bytes(table: &KernelTable, i: usize, sort: SortVariant) -> usize {
    let bin = &table.numeric[i];
    bin.shared_bytes(table.numeric_entry_bytes(), sort.code(table, bin) != 0)
}

/// The bin a per-bin kernel of [`build`]'s program computes and the
/// dynamic shared memory it is launched with (`None` for the other
/// kernels). Lets resource checks compare a compiled kernel with its table.
pub fn bin_of_kernel(table: &KernelTable, sort: SortVariant, name: &str) -> Option<(Bin, usize)> {
    let index = |prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|i| i.parse::<usize>().ok())
    };
    match (index("spgemm_symbolic_bin"), index("spgemm_numeric_bin")) {
        (Some(i), _) if i < table.symbolic.len() => {
            Some((table.symbolic[i], symbolic_shared_bytes(table, i)))
        }
        (_, Some(i)) if i < table.numeric.len() => {
            Some((table.numeric[i], numeric_shared_bytes(table, i, sort)))
        }
        _ => None,
    }
}

/// Per-bin kernels in one compilation unit: units compile in parallel
/// (NVRTC and hiprtc are single-threaded per program).
pub const BINS_PER_UNIT: usize = 3;

/// Builds the programs for value type `T` with `table`: compilation units
/// that share one source prefix (prelude, value type, body, bin ranges)
/// and split the kernels between them, so they compile in parallel. The
/// concatenation of their kernel lists is indexed by [`k`]: first the
/// fixed kernels and binning, then one kernel per shared symbolic bin, then
/// one per shared numeric bin.
pub fn build<T: Scalar>(
    prelude: &str,
    body: &str,
    table: &KernelTable,
    sort: SortVariant,
) -> Vec<KernelProgram> {
    let mut head = String::new();
    let nsym = table.symbolic.len();
    let nnum = table.numeric.len();
    let _ = writeln!(
        head,
        "// spgemm kernels: table '{}', value type {}",
        table.name,
        T::NAME
    );
    head.push_str(prelude);
    head.push_str(&super::constants::defines());
    let _ = writeln!(head, "\ntypedef {} value_t;", T::C_TYPE);
    let mut tail = String::new();
    let _ = writeln!(
        tail,
        "\n__device__ const u64 SPGEMM_SYMBOLIC_MAX[{nsym}] = {{{}}};",
        u64_list(table.symbolic.iter().map(|b| b.max))
    );
    let _ = writeln!(
        tail,
        "__device__ const u64 SPGEMM_NUMERIC_MAX[{nnum}] = {{{}}};",
        u64_list(table.numeric.iter().map(|b| b.max))
    );
    let unit = |index: usize, fixed: bool, wrappers: &[(String, String)]| {
        let mut s = head.clone();
        let _ = writeln!(
            s,
            "#define SPGEMM_FIXED_KERNEL {}",
            if fixed {
                "extern \"C\" __global__"
            } else {
                "template <int Unit> __global__"
            }
        );
        s.push_str(body);
        s.push_str(&tail);
        let mut kernels = Vec::new();
        if fixed {
            kernels.extend(FIXED.iter().map(|k| k.to_string()));
        }
        for (name, text) in wrappers {
            s.push_str(text);
            kernels.push(name.clone());
        }
        KernelProgram {
            name: format!(
                "spgemm_{}_{}_{}_unit{index}",
                table.name,
                T::NAME,
                sort.name()
            ),
            source: s,
            kernels,
        }
    };
    let mut binning = Vec::new();
    for (phase, n, numeric) in [("symbolic", nsym, false), ("numeric", nnum, true)] {
        let maxes = if numeric {
            "SPGEMM_NUMERIC_MAX"
        } else {
            "SPGEMM_SYMBOLIC_MAX"
        };
        binning.push((
            format!("spgemm_bin_count_{phase}"),
            format!("extern \"C\" __global__ void spgemm_bin_count_{phase}(const u64* crpt, const u64* arpt, u32 m, u32 direct_ok, u32* sizes, u64* max_value) {{ bin_count<{n}, {numeric}>(crpt, arpt, m, direct_ok, {maxes}, sizes, max_value); }}\n"),
        ));
        binning.push((
            format!("spgemm_bin_fill_{phase}"),
            format!("extern \"C\" __global__ void spgemm_bin_fill_{phase}(const u64* crpt, const u64* arpt, u32 m, u32 direct_ok, const u32* sizes, u32* cursor, u32* bins) {{ bin_fill<{n}, {numeric}>(crpt, arpt, m, direct_ok, {maxes}, sizes, cursor, bins); }}\n"),
        ));
    }
    let mut bins = Vec::new();
    // A global last bin has no kernel of its own (its rows go to the global
    // kernels), so only a shared last bin records overflowing rows.
    for (b, bin) in table
        .symbolic
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.global())
    {
        let last = b + 1 == nsym;
        let name = format!("spgemm_symbolic_bin{b}");
        let text = format!(
            "extern \"C\" __global__ void SPGEMM_LAUNCH_BOUNDS({bt}, {mb}) {name}(const u64* arpt, const u32* acol, const u64* brpt, const u32* bcol, const u32* bins, u32 nrows, u64* crpt, u32 g, u32 threshold, u32* overflow, u32* noverflow, u32* distinct) {{ symbolic_shared<{ts}u, {rt}u, {last}>(arpt, acol, brpt, bcol, bins, nrows, crpt, g, threshold, overflow, noverflow, distinct); }}\n",
            bt = bin.block_threads,
            mb = bin.min_blocks,
            ts = bin.table_size,
            rt = bin.row_threads,
        );
        bins.push((name, text));
    }
    for (b, bin) in table
        .numeric
        .iter()
        .enumerate()
        .filter(|(_, b)| !b.global())
    {
        let name = format!("spgemm_numeric_bin{b}");
        let text = format!(
            "extern \"C\" __global__ void SPGEMM_LAUNCH_BOUNDS({bt}, {mb}) {name}(const u64* arpt, const u32* acol, const value_t* aval, const u64* brpt, const u32* bcol, const value_t* bval, const u32* bins, u32 nrows, const u64* crpt, u32* ccol, value_t* cval, u32 g, const u32* distinct) {{ numeric_shared<{ts}u, {rt}u, {sort}>(arpt, acol, aval, brpt, bcol, bval, bins, nrows, crpt, ccol, cval, g, distinct); }}\n",
            bt = bin.block_threads,
            mb = bin.min_blocks,
            ts = bin.table_size,
            rt = bin.row_threads,
            sort = sort.code(table, bin),
        );
        bins.push((name, text));
    }
    let mut units = vec![unit(0, true, &binning)];
    for (i, group) in bins.chunks(BINS_PER_UNIT).enumerate() {
        units.push(unit(i + 1, false, group));
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_wrapper_per_bin_and_ranges_baked_in() {
        let t = KernelTable::v100_paper();
        let units = build::<f64>(
            "#define SPGEMM_WARP_SIZE 32\n",
            "// body\n",
            &t,
            SortVariant::Bitonic,
        );
        let kernels: Vec<&String> = units.iter().flat_map(|u| &u.kernels).collect();
        assert_eq!(
            kernels.len(),
            k::FIRST_BIN + t.symbolic.len() + t.numeric.len() - 1
        );
        assert_eq!(kernels[k::BIN_FILL_NUMERIC], "spgemm_bin_fill_numeric");
        assert_eq!(kernels[k::FIRST_BIN], "spgemm_symbolic_bin0");
        let all: String = units.iter().map(|u| u.source.as_str()).collect();
        assert!(all.contains("typedef double value_t;"));
        assert!(all.contains("symbolic_shared<24575u, 1024u, true>"));
        assert!(all.contains("numeric_shared<31u, 8u, 0>"));
        assert!(all.contains("{26ull, 426ull"));
        // The fixed kernels are exported by the first unit only.
        assert!(units[0]
            .source
            .contains("#define SPGEMM_FIXED_KERNEL extern \"C\" __global__"));
        for u in &units[1..] {
            assert!(u
                .source
                .contains("#define SPGEMM_FIXED_KERNEL template <int Unit> __global__"));
            assert!(u.kernels.len() <= BINS_PER_UNIT);
        }
    }

    #[test]
    fn kernels_map_back_to_their_bins() {
        let t = KernelTable::v100_paper();
        assert_eq!(
            bin_of_kernel(&t, SortVariant::Bitonic, "spgemm_numeric_bin1"),
            Some((t.numeric[1], 256 * 4 + 255 * 8))
        );
        // The last symbolic bin records overflowing rows: a counter beside
        // its table; condensing sorts keep one per row too.
        assert_eq!(
            bin_of_kernel(&t, SortVariant::Auto, "spgemm_symbolic_bin7"),
            Some((t.symbolic[7], 24575 * 4 + 4))
        );
        assert_eq!(
            bin_of_kernel(&t, SortVariant::Auto, "spgemm_numeric_bin0"),
            Some((t.numeric[0], 32 * (32 * 4 + 31 * 8 + 4)))
        );
        assert_eq!(bin_of_kernel(&t, SortVariant::Auto, "spgemm_setup"), None);
        assert_eq!(
            bin_of_kernel(&t, SortVariant::Auto, "spgemm_symbolic_bin99"),
            None
        );
    }
}
