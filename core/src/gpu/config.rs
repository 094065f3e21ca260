//! How GPU products run: one configuration for the engine
//! ([`GpuEngine::with_config`](super::GpuEngine::with_config)), the facade's
//! GPU backends and the command line, and its options, each an enum that
//! parses from and prints as its command-line name.

use crate::table::{Bin, KernelTable, TableConfig};

/// The configuration of GPU products. An engine uses every field but
/// `devices`, which says on which GPUs a backend opens engines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuConfig {
    /// Device ordinals to use together (rows of A split between them by
    /// products, B copied to each); default `[0]`.
    pub devices: Vec<usize>,
    /// Device-memory budget per device in bytes (default: the free memory
    /// at each product); larger host-to-host products run in chunks of rows.
    pub memory_budget: Option<usize>,
    /// The numeric step's sort (default: [`SortVariant::Auto`]).
    pub sort: SortVariant,
    /// The kernel table (default: the device's own, [`TableConfig::Device`]).
    /// Fixed at the first product: kernels are compiled once per value type.
    pub table: TableConfig,
    /// How rows past the last shared-memory table are computed (default:
    /// [`LongRows::Auto`]).
    pub long_rows: LongRows,
    /// Dense accumulators in shared memory or hash tables in the bins
    /// (default: [`Accumulator::Auto`]).
    pub accumulator: Accumulator,
    /// How the global paths that split a long row between blocks cut it
    /// (default: [`SliceSplit::Entries`]).
    pub slices: SliceSplit,
    /// Bytes of C (column indices and values) per chunk of rows in a
    /// host-to-host product: the numeric phase runs a chunk of rows at a
    /// time while finished chunks are downloaded, so C's download overlaps
    /// the kernels of later chunks (Wu 2015, §3.3). At most
    /// [`MAX_DOWNLOAD_CHUNKS`] chunks; a C smaller than this is one chunk.
    /// Default 64 MiB.
    pub download_chunk_bytes: usize,
    /// How C's row sizes are found before the numeric phase (default:
    /// [`SymbolicMode::Auto`]).
    pub symbolic: SymbolicMode,
    /// Room for C's entries where the one pass sizes C from an estimate
    /// ([`SymbolicMode::Estimate`]), in percent of the estimated nnz(C)
    /// (never more than nprod(C)). Default [`ESTIMATE_PERCENT`]; below 100
    /// the estimate falls short on purpose and the one pass runs again
    /// into arrays of exactly nnz(C), as tests of that path do.
    pub estimate_percent: u32,
}

/// The default [`GpuConfig::estimate_percent`]: a quarter more room than
/// the sampled compression ratio says C needs.
pub const ESTIMATE_PERCENT: u32 = 125;

/// Most chunks of rows a host-to-host product is computed and downloaded
/// in (see [`GpuConfig::download_chunk_bytes`]): each chunk costs a read of
/// its binning counters and its own launches.
pub const MAX_DOWNLOAD_CHUNKS: usize = 16;

impl Default for GpuConfig {
    fn default() -> Self {
        Self {
            devices: vec![0],
            memory_budget: None,
            sort: SortVariant::default(),
            table: TableConfig::default(),
            long_rows: LongRows::default(),
            accumulator: Accumulator::default(),
            slices: SliceSplit::default(),
            download_chunk_bytes: 64 << 20,
            symbolic: SymbolicMode::default(),
            estimate_percent: ESTIMATE_PERCENT,
        }
    }
}

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
    /// The reg-sort of Liu et al.'s register-aware SpGEMM (Register-aware
    /// §3.1, §3.4) in the short-row bins that allow it
    /// ([`SortVariant::registers`]), elsewhere as [`SortVariant::Auto`]: a
    /// row's products are expanded into its table's shared memory, loaded
    /// [`REG_PER_LANE`] to a lane, sorted by a bitonic network of register
    /// compares and shuffles, and summed by runs in registers (a segmented
    /// sum), with no hash table and no atomic; the symbolic phase counts
    /// the runs. In the numeric phase a block whose rows do not all fit
    /// takes the hash tables and the rank sort. Not in
    /// [`SortVariant::Auto`]: measured slower on an H100
    /// (`docs/benchmarks/register-sort-h100-2026-11-25.md`).
    Register,
    /// The reg-hash of Liu et al.'s register-aware SpGEMM (Register-aware
    /// §3.3) in the bins of [`SortVariant::Register`], elsewhere as
    /// [`SortVariant::Auto`]: a row's products are expanded as for the
    /// register sort and shared out evenly, [`REG_PER_LANE`] to a lane, so
    /// that each lane inserts its own share into the hash table from
    /// registers instead of walking rows of B of unequal lengths; the
    /// numeric rows are then condensed and rank-sorted. Not a sort, but
    /// like one a choice of the short-row bins' kernels. In the numeric
    /// phase a block whose rows do not all fit walks B as usual. Not in
    /// [`SortVariant::Auto`]: measured slower on an H100
    /// (`docs/benchmarks/register-sort-h100-2026-11-25.md`).
    RegisterHash,
}

/// Products a lane holds in the register sort of
/// [`SortVariant::Register`] (`SPGEMM_REG_PER_LANE` in the kernels): a
/// short-row bin of `r` lanes per row takes it for rows of at most `r`
/// times this many products (the register vectors of 8 of Register-aware
/// §3.4, halved for the 32 registers a thread of the short-row bins
/// has).
pub const REG_PER_LANE: u32 = 4;

/// Largest nnz of a row that [`SortVariant::Auto`] rank-sorts.
pub const RANK_MAX_NNZ: u64 = 1024;

impl SortVariant {
    /// Whether shared bin `bin` of `table` takes the register sort or
    /// reg-hash under this variant ([`SortVariant::Register`] and
    /// [`SortVariant::RegisterHash`] only): a row's lanes are at
    /// most a warp, so that shuffles reach them all; in the symbolic phase
    /// (`symbolic`, where bins are by products) its rows' products must
    /// also fit its table and [`REG_PER_LANE`] to a lane (the numeric
    /// kernel checks each block's rows itself).
    pub fn registers(self, table: &KernelTable, bin: &Bin, symbolic: bool) -> bool {
        let lanes = bin.row_threads;
        matches!(self, SortVariant::Register | SortVariant::RegisterHash)
            && !bin.global()
            && lanes.is_power_of_two()
            && lanes <= table.warp_width
            && (!symbolic
                || bin.max <= (lanes * REG_PER_LANE) as u64 && bin.max <= bin.table_size as u64)
    }

    /// The variant's number in the kernel source (`SORT` template argument)
    /// for numeric bin `bin` of `table`. Condensing keeps a counter beside
    /// the table, so a table that fills a block's shared memory is
    /// bitonic-sorted whatever the variant.
    pub fn code(self, table: &KernelTable, bin: &Bin) -> u32 {
        let code = match self {
            SortVariant::Bitonic => 0,
            SortVariant::CondenseRank => 1,
            SortVariant::CondenseBitonic => 2,
            SortVariant::Register if self.registers(table, bin, false) => 3,
            SortVariant::RegisterHash if self.registers(table, bin, false) => 4,
            _ if table.whole_table_sort => 0,
            _ if bin.max <= RANK_MAX_NNZ => 1,
            _ => 2,
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
    Register => "register",
    RegisterHash => "register-hash",
});

/// How the rows past the last shared-memory table are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LongRows {
    /// When C is narrow enough (numeric: at most 16 columns per entry of
    /// the longest row), [`LongRows::Ranked`] for rows of up to 2^17
    /// entries when a block holds C's bitmap (under [`Accumulator::Auto`]),
    /// and [`LongRows::Dense`] for the longer ones (or all, when the bitmap
    /// does not fit or the accumulator is another). Measured on
    /// an H100 (`ranked-bitmaps-h100-2026-11-24.md`): R-MAT 18 187 -> 87-97 ms,
    /// R-MAT 17 (Graph500) 48 -> 34-35 ms; short rows + 24 rows of C of
    /// about 200,000 entries, which ranked bitmaps would give one block
    /// each (5.1 ms), unchanged at 4.1 ms;
    /// else, in the
    /// numeric phase, [`LongRows::SortedHash`] for up to 8 rows per
    /// multiprocessor, [`LongRows::InPlaceHash`] for more (the DCU paper
    /// chooses by row count too, DCU §5.4; the measurements behind the
    /// threshold are in `docs/benchmarks/long-rows-h200-2026-11-21.md`).
    #[default]
    Auto,
    /// A bitmap (symbolic) or a dense value array and bitmap (numeric) per
    /// row in global memory, each row split into slices over several
    /// blocks, written out in column order: no probing, no sort. Used when
    /// the scratch fits in memory; else a hash variant.
    Dense,
    /// The DCU paper's first global variant (kernel 8): a hash table of
    /// 1.5·nnz per row, each row split into slices over several blocks,
    /// then a device-wide bitonic sort of the tables and a copy into C.
    /// The symbolic phase uses a hash table per row (as `InPlaceHash`).
    SortedHash,
    /// The DCU paper's second global variant (kernel 9): a power-of-two
    /// hash table of 2·nnz per row, one block a row, sorted in place. The
    /// symbolic phase uses a hash table of 2·nprod per row, one block a row.
    InPlaceHash,
    /// Ranked bitmaps with the values in C: a bitmap of C's columns per
    /// block in shared memory ranks each column in its row, and each
    /// product adds its value at its column's place in C's own value array
    /// (atomics in global memory), one block a row. Used when the bitmap
    /// fits a block's shared memory; else as `Dense`. The symbolic phase
    /// is `Dense`'s.
    Ranked,
}

crate::choices::named_choices!(LongRows, "long-row variant", {
    Auto => "auto",
    Dense => "dense",
    SortedHash => "sorted-hash",
    InPlaceHash => "in-place-hash",
    Ranked => "ranked",
});

/// How [`LongRows::Dense`] (both phases) and [`LongRows::SortedHash`] cut a
/// long row of A into slices, one block each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SliceSplit {
    /// Slices of equal numbers of entries of A. Measured against
    /// [`SliceSplit::Products`] on an H100 (`slices-by-products-h100-2026-11-25.md`):
    /// R-MAT 18 (Graph500) 99-100 ms against 114-116 ms, the other
    /// power-law and long-row products within 3-6% either way.
    #[default]
    Entries,
    /// Slices of about equal products (the
    /// first entries of an R-MAT row select B's hub rows): a kernel finds
    /// each row's bounds by a scan of its entries' products before the
    /// slices run.
    Products,
}

crate::choices::named_choices!(SliceSplit, "slice split", {
    Entries => "entries",
    Products => "products",
});

/// How a product finds the sizes of C's rows before writing them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SymbolicMode {
    /// [`SymbolicMode::Bound`] where its rule holds
    /// ([`one_pass_pays`](crate::gpu::one_pass_pays)), else
    /// [`SymbolicMode::Exact`].
    #[default]
    Auto,
    /// A symbolic phase counts every row's entries exactly (OpSparse
    /// §5.6.1), then the numeric phase writes each row at its place.
    Exact,
    /// No symbolic phase: each row's products, nprod(i), bound its entries,
    /// so the numeric phase writes every row into space for nprod(i)
    /// entries and counts it, and C is compacted after a scan of the
    /// counts (the one-phase method with upper-bound row sizes that Du et
    /// al., "OpSparse", §2.2, sets against the two-phase one; KokkosKernels
    /// §2 too). Taken only where
    /// every row's bound falls in a shared-memory hash bin whose rows are
    /// condensed before they are sorted, and the bound's arrays fit the
    /// memory budget; other products run [`SymbolicMode::Exact`].
    Bound,
    /// The one pass of [`SymbolicMode::Bound`], where it can run, with C's
    /// arrays sized from an estimate of nnz(C) instead of nprod(C): the
    /// compression ratio of up to 4,096 rows spread over A's, each
    /// computed exactly as the one pass computes it, scales nprod(C), and
    /// [`GpuConfig::estimate_percent`] adds a margin. The pass's scan
    /// counts every row whatever the room; entries placed past the room
    /// are not written, and when nnz(C) exceeds it the pass runs again
    /// into arrays of exactly nnz(C) (known by then). Sampling, not the
    /// HyperLogLog sketches of B's rows that Ocean (ICS 2026) estimates
    /// with: the one pass's rows are short enough to compute outright.
    Estimate,
}

crate::choices::named_choices!(SymbolicMode, "symbolic mode", {
    Auto => "auto",
    Exact => "exact",
    Bound => "bound",
    Estimate => "estimate",
});

/// Which accumulator the bins of both phases use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Accumulator {
    /// Dense accumulators in shared memory for the bins where they are
    /// cheaper than a hash table: shared bins with a block per row whose
    /// table has at least as many slots as a bitmap of C's columns has
    /// 32-bit words, since clearing and reading the bitmap then costs no
    /// more than clearing the table; in the numeric phase only when a dense
    /// row (a value and a bit per column) fits twice in a multiprocessor's
    /// shared memory. Hash tables elsewhere. The last symbolic bin counts
    /// with the bitmap too when it fits, so that its rows, however long,
    /// never overflow to the global kernels (measured on an H100, the
    /// symbolic phase of R-MAT 18 57 -> 7 ms). Rows past the last shared
    /// table (the last symbolic bin's overflow for a wide C, the global
    /// bins) keep the global paths of [`LongRows`], which
    /// split a long row between blocks. In the numeric phase, rows of up to 8 entries
    /// per lane of a warp whose products all have different columns (the
    /// symbolic phase saw nnz = nprod) skip the hash table: a warp places
    /// their products by a scan and rank-sorts them (expand-sort-compress
    /// with nothing to compress). Shared bins with a block per row whose
    /// dense row does not fit but whose bitmap does (no more words than
    /// the table has slots) accumulate by ranked bitmaps: a bit per column
    /// and a value per entry of the row, placed by the rank of its column
    /// (`spgemm_numeric_ranked`; KokkosKernels §3.2–3.3). When the last
    /// shared bin takes dense rows or ranked bitmaps, the numeric rows past
    /// it whose values fit a block's shared memory beside the bitmap take
    /// ranked bitmaps too (a block per row); the longer ones keep the
    /// global paths.
    #[default]
    Auto,
    /// As [`Accumulator::Auto`] but without ranked bitmaps (hash tables in
    /// their bins, the global paths for every row past the shared tables,
    /// with [`LongRows::Auto`] taking no [`LongRows::Ranked`]): the A/B
    /// switch of `spgemm_numeric_ranked` and `spgemm_numeric_ranked_long`.
    Unranked,
    /// As [`Accumulator::Auto`] but with every numeric row that is not
    /// dense in a hash table (distinct rows too): the A/B switch of the
    /// distinct rows' kernel.
    DenseHash,
    /// Hash tables in every bin (OpSparse, DCU).
    Hash,
    /// As [`Accumulator::Auto`] but the symbolic hash tables take B packed
    /// into words of 32 columns with their masks when that cuts B's
    /// entries by more than 15% (KokkosKernels §3.2's rule; in the bins
    /// whose tables and masks fit, outside a memory budget): a word
    /// inserted per run of a row's columns, a row's count the bits of its
    /// masks. Not in [`Accumulator::Auto`]: measured on an H100 it made
    /// most products slower (`docs/benchmarks/packed-symbolic-h100-2026-11-24.md`).
    Packed,
}

impl Accumulator {
    /// Whether the ranked bitmaps of [`Accumulator::Auto`] may run
    /// ([`Accumulator::Auto`] and [`Accumulator::Packed`]).
    pub fn ranks(self) -> bool {
        matches!(self, Accumulator::Auto | Accumulator::Packed)
    }
}

crate::choices::named_choices!(Accumulator, "accumulator", {
    Auto => "auto",
    Unranked => "unranked",
    DenseHash => "dense-hash",
    Hash => "hash",
    Packed => "packed",
});
