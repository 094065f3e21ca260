//! Assembles the kernel program for one device and value type: the vendor
//! prelude, the value type, the table's bin ranges, the shared body, and one
//! `extern "C"` wrapper per bin that instantiates the body's templates with
//! that bin's table size, block shape and sort (OpSparse Tables 1–2).

use super::config::SortVariant;
use super::kernels::{
    numeric_bin, symbolic_bin, symbolic_packed_bin, symbolic_packed_fits, symbolic_registers,
    Kernel, Phase, FIXED, MASKED,
};
use crate::device::KernelProgram;
use crate::scalar::Scalar;
use crate::semiring::Semiring;
use crate::table::{Bin, KernelTable};
use std::fmt::Write;

fn u64_list(v: impl Iterator<Item = u64>) -> String {
    v.map(|x| format!("{x}ull")).collect::<Vec<_>>().join(", ")
}

/// Per-bin kernels in one compilation unit: units compile in parallel
/// (NVRTC and hiprtc are single-threaded per program).
pub const BINS_PER_UNIT: usize = 3;

/// One compilation unit: the program a device compiles, and the kernels it
/// exports in the order of `program.kernels`.
pub struct Unit {
    /// Source and kernel names.
    pub program: KernelProgram,
    /// The kernels, named as in `program.kernels`.
    pub kernels: Vec<Kernel>,
    /// The resident blocks a bin's kernel of this unit is compiled for
    /// ([`launch_min_blocks`] for the unit's value type).
    pub min_blocks: fn(&Bin) -> u32,
}

/// The resident blocks per multiprocessor a bin's kernel is compiled for
/// (`__launch_bounds__`) with values of type `T`: the table's, which is
/// worked out for floats of `T`'s width, but three quarters of it for
/// 64-bit integers, whose products and sums take register pairs and
/// three multiply instructions (the table's register budget for `f64`
/// made the sorting kernels spill with `i64`, sm_90).
pub fn launch_min_blocks<T: Scalar>(bin: &Bin) -> u32 {
    if T::INTEGER && std::mem::size_of::<T>() == 8 {
        (bin.min_blocks - bin.min_blocks / 4).max(1)
    } else {
        bin.min_blocks
    }
}

/// [`launch_min_blocks`] for the numeric bins' pruned kernels
/// ([`Kernel::NumericBinPruned`]): for 64-bit values three quarters of it
/// (rounded down), since the row's selection holds 64-bit keys and values
/// beside the kernel's state (at the table's budget, 32 registers on
/// sm_90, the `f64` kernels of the bins of rows of 8 lanes and of rows of
/// a block of 1,024 threads spilled 20 and 16 bytes); the table's for
/// 32-bit values (no spill at 32 registers).
pub fn pruned_min_blocks<T: Scalar>(bin: &Bin) -> u32 {
    let blocks = launch_min_blocks::<T>(bin);
    if std::mem::size_of::<T>() == 8 {
        (blocks * 3 / 4).max(1)
    } else {
        blocks
    }
}

/// The kernels of [`build`]'s program for `table`, in the order they are
/// compiled and loaded: the fixed kernels and binning, then one kernel per
/// shared symbolic bin, then one per shared numeric bin (a global last bin
/// has no kernel of its own: its rows go to the global kernels), then the
/// packed symbolic kernels of the bins they fit.
pub fn kernels(table: &KernelTable) -> Vec<Kernel> {
    let mut all = FIXED.to_vec();
    for phase in [Phase::Symbolic, Phase::Numeric] {
        all.extend([Kernel::BinCount(phase), Kernel::BinFill(phase)]);
    }
    let shared =
        |bins: &[Bin]| -> Vec<usize> { (0..bins.len()).filter(|&i| !bins[i].global()).collect() };
    all.extend(shared(&table.symbolic).into_iter().map(Kernel::SymbolicBin));
    all.extend(shared(&table.numeric).into_iter().map(Kernel::NumericBin));
    all.extend(
        (0..table.symbolic.len())
            .filter(|&i| symbolic_packed_fits(table, i))
            .map(Kernel::SymbolicPackedBin),
    );
    all
}

/// The kernels of [`build_pruning`]'s program that prune rows where the
/// numeric phase holds them (`row_prune.cuh`): the shared numeric bins of
/// rows of at most a warp (several a warp), or of one row a block whose
/// table leaves three words past the row's entries for the block's sums
/// ([`Kernel::NumericBinPruned`]), then the rows whose products all have
/// different columns, a warp a row ([`Kernel::NumericDistinctPruned`]).
/// Rows of the other bins are pruned after the numeric phase.
pub fn pruned_kernels(table: &KernelTable, sort: SortVariant) -> Vec<Kernel> {
    let warp = table.warp_width;
    (0..table.numeric.len())
        .filter(|&i| {
            let bin = numeric_bin(table, i, sort);
            let narrow = bin.row_threads <= warp && warp.is_multiple_of(bin.row_threads);
            let whole_block = bin.row_threads == bin.block_threads
                && u64::from(bin.table_size) >= bin.max.saturating_add(3);
            !bin.global() && (narrow || whole_block)
        })
        .map(Kernel::NumericBinPruned)
        .chain([Kernel::NumericDistinctPruned])
        .collect()
}

/// The numeric sort code of a bin under `semiring`: the register sort
/// (code 3, an option) sums the runs of its rows for `+` only; under
/// another `⊕` its rows gave wrong values in testing (H200, 2026-11-26),
/// so they take the hash tables and the rank sort (code 1) there.
fn numeric_sort(code: u32, semiring: Semiring) -> u32 {
    match (code, semiring) {
        (3, Semiring::PlusTimes | Semiring::PlusPair) => 3,
        (3, _) => 1,
        (code, _) => code,
    }
}

/// The `extern "C"` wrapper of a generated kernel: its signature from the
/// catalogue, its body a call of the shared body's template.
fn wrapper<T: Scalar>(
    table: &KernelTable,
    sort: SortVariant,
    semiring: Semiring,
    kernel: Kernel,
) -> String {
    let name = kernel.name();
    let params = kernel.c_params();
    let names: Vec<&str> = kernel.params().iter().map(|p| p.name).collect();
    let call = names.join(", ");
    match kernel {
        Kernel::BinCount(phase) | Kernel::BinFill(phase) => {
            let (n, numeric, maxes) = match phase {
                Phase::Symbolic => (table.symbolic.len(), false, "SPGEMM_SYMBOLIC_MAX"),
                Phase::Numeric => (table.numeric.len(), true, "SPGEMM_NUMERIC_MAX"),
            };
            // The template takes the bin ranges after `same_rows`.
            let (front, back) = names.split_at(12);
            let template = if matches!(kernel, Kernel::BinCount(_)) {
                "bin_count"
            } else {
                "bin_fill"
            };
            format!(
                "extern \"C\" __global__ void {name}({params}) {{ {template}<{n}, {numeric}>({}, {maxes}, {}); }}\n",
                front.join(", "),
                back.join(", ")
            )
        }
        Kernel::SymbolicBin(i) | Kernel::SymbolicPackedBin(i) => {
            let packed = matches!(kernel, Kernel::SymbolicPackedBin(_));
            let bin = &if packed {
                symbolic_packed_bin(table, i)
            } else {
                symbolic_bin(table, i, sort)
            };
            let last = i + 1 == table.symbolic.len();
            let reg = match sort {
                _ if packed || !symbolic_registers(table, i, sort) => 0,
                SortVariant::RegisterHash => 2,
                _ => 1,
            };
            format!(
                "extern \"C\" __global__ void SPGEMM_LAUNCH_BOUNDS({bt}, {mb}) {name}({params}) {{ symbolic_shared<{ts}u, {rt}u, {last}, {packed}, {reg}>({call}); }}\n",
                bt = bin.block_threads,
                mb = launch_min_blocks::<T>(bin),
                ts = bin.table_size,
                rt = bin.row_threads,
            )
        }
        Kernel::NumericBin(i) | Kernel::NumericBinPruned(i) => {
            let bin = &numeric_bin(table, i, sort);
            format!(
                "extern \"C\" __global__ void SPGEMM_LAUNCH_BOUNDS({bt}, {mb}) {name}({params}) {{ numeric_shared<{ts}u, {rt}u, {sort}, {hubs}, {pruned}>({call}); }}\n",
                bt = bin.block_threads,
                mb = if matches!(kernel, Kernel::NumericBinPruned(_)) {
                    pruned_min_blocks::<T>(bin)
                } else {
                    launch_min_blocks::<T>(bin)
                },
                ts = bin.table_size,
                rt = bin.row_threads,
                sort = numeric_sort(sort.code(table, bin), semiring),
                hubs = bin.walks_hubs(table.warp_width),
                pruned = matches!(kernel, Kernel::NumericBinPruned(_)),
            )
        }
        Kernel::NumericDistinctPruned => format!(
            "extern \"C\" __global__ void {name}({params}) {{ numeric_distinct<true>({call}); }}\n"
        ),
        fixed => unreachable!("{fixed:?} is written out in the body"),
    }
}

/// Builds the programs for value type `T`, `semiring` and `table`
/// (the semiring's operators emitted by [`Semiring::kernel_definitions`]):
/// compilation units
/// that share one source prefix (prelude, shared constants, value type,
/// body, bin ranges) and split the kernels of [`kernels`] between them, in
/// that order, so they compile in parallel. The first unit exports the
/// fixed kernels and binning, the others up to [`BINS_PER_UNIT`] per-bin
/// kernels each.
pub fn build<T: Scalar>(
    prelude: &str,
    body: &str,
    table: &KernelTable,
    sort: SortVariant,
    semiring: Semiring,
) -> Vec<Unit> {
    assemble::<T>(prelude, body, table, sort, semiring, false)
}

/// [`build`]'s units, then units of the kernels of [`pruned_kernels`]
/// (the numeric bins of pruned products), so that [`build`]'s units are
/// the same programs (and hit the same cache entries).
pub fn build_pruning<T: Scalar>(
    prelude: &str,
    body: &str,
    table: &KernelTable,
    sort: SortVariant,
    semiring: Semiring,
) -> Vec<Unit> {
    assemble::<T>(prelude, body, table, sort, semiring, true)
}

fn assemble<T: Scalar>(
    prelude: &str,
    body: &str,
    table: &KernelTable,
    sort: SortVariant,
    semiring: Semiring,
    pruning: bool,
) -> Vec<Unit> {
    let mut head = String::new();
    let nsym = table.symbolic.len();
    let nnum = table.numeric.len();
    let _ = writeln!(
        head,
        "// spgemm kernels: table '{}', value type {}, semiring {semiring}",
        table.name,
        T::NAME
    );
    head.push_str(prelude);
    head.push_str(&super::constants::defines());
    let _ = writeln!(head, "\ntypedef {} value_t;", T::C_TYPE);
    head.push_str(&semiring.kernel_definitions::<T>());
    // The plain product keeps its names; another semiring's are suffixed.
    let ring = match semiring {
        Semiring::PlusTimes => String::new(),
        other => format!("_{other}"),
    };
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
    let unit = |index: usize, kernels: Vec<Kernel>, min_blocks: fn(&Bin) -> u32| {
        let fixed = index == 0;
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
        for &k in kernels.iter().filter(|k| !FIXED.contains(k)) {
            s.push_str(&wrapper::<T>(table, sort, semiring, k));
        }
        Unit {
            program: KernelProgram {
                name: format!(
                    "spgemm_{}_{}{ring}_{}_unit{index}",
                    table.name,
                    T::NAME,
                    sort.name()
                ),
                source: s,
                kernels: kernels.iter().map(|k| k.name()).collect(),
            },
            kernels,
            min_blocks,
        }
    };
    let all = kernels(table);
    let first = FIXED.len() + 4;
    let plain = launch_min_blocks::<T>;
    let mut units = vec![unit(0, all[..first].to_vec(), plain)];
    for group in all[first..].chunks(BINS_PER_UNIT) {
        units.push(unit(units.len(), group.to_vec(), plain));
    }
    if pruning {
        for group in pruned_kernels(table, sort).chunks(BINS_PER_UNIT) {
            units.push(unit(units.len(), group.to_vec(), pruned_min_blocks::<T>));
        }
    }
    units
}

/// The program of masked products by dot products
/// ([`Kernel::MaskedDot`]) for values of type `T` and `semiring`: the
/// vendor prelude, the shared constants, the value type, the semiring's
/// operators ([`Semiring::kernel_definitions`]) and `source` (the shared
/// `masked_dot.cuh`). One per value type and semiring, each compiled on
/// first use and cached like the product's.
pub fn masked_dot<T: Scalar>(prelude: &str, source: &str, semiring: Semiring) -> Unit {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// spgemm masked dot products: value type {}, semiring {semiring}",
        T::NAME
    );
    s.push_str(prelude);
    s.push_str(&super::constants::defines());
    let _ = writeln!(s, "\ntypedef {} value_t;", T::C_TYPE);
    s.push_str(&semiring.kernel_definitions::<T>());
    s.push_str("#define SPGEMM_FIXED_KERNEL extern \"C\" __global__\n");
    s.push_str(source);
    Unit {
        program: KernelProgram {
            name: format!("spgemm_masked_dot_{}_{semiring}", T::NAME),
            source: s,
            kernels: MASKED.iter().map(|k| k.name()).collect(),
        },
        kernels: MASKED.to_vec(),
        min_blocks: launch_min_blocks::<T>,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_dot_programs_differ_by_semiring_and_type() {
        let a = masked_dot::<f64>("// prelude\n", "// body\n", Semiring::MinPlus);
        let b = masked_dot::<f32>("// prelude\n", "// body\n", Semiring::PlusPair);
        assert!(a.program.source.contains("typedef double value_t;"));
        assert!(a
            .program
            .source
            .contains("return (y < x || x != x) ? y : x;"));
        assert!(a.program.source.contains("#define SPGEMM_READS_VALUES 1"));
        assert!(b.program.source.contains("typedef float value_t;"));
        assert!(b.program.source.contains("#define SPGEMM_READS_VALUES 0"));
        assert_ne!(a.program.name, b.program.name);
        assert!(a.program.kernels.iter().any(|k| k == "spgemm_masked_dot"));
        assert_eq!(a.program.kernels.len(), MASKED.len());
    }

    #[test]
    fn one_wrapper_per_bin_and_ranges_baked_in() {
        let t = KernelTable::v100_paper();
        let units = build::<f64>(
            "#define SPGEMM_WARP_SIZE 32\n",
            "// body\n",
            &t,
            SortVariant::Bitonic,
            Semiring::PlusTimes,
        );
        let kernels: Vec<Kernel> = units.iter().flat_map(|u| u.kernels.clone()).collect();
        assert_eq!(kernels, super::kernels(&t));
        let packed = (0..t.symbolic.len())
            .filter(|&i| symbolic_packed_fits(&t, i))
            .count();
        assert!(packed >= 6, "{packed}");
        assert_eq!(
            kernels.len(),
            FIXED.len() + 4 + t.symbolic.len() + t.numeric.len() - 1 + packed
        );
        for u in &units {
            let names: Vec<String> = u.kernels.iter().map(|k| k.name()).collect();
            assert_eq!(names, u.program.kernels);
        }
        let all: String = units.iter().map(|u| u.program.source.as_str()).collect();
        assert!(all.contains("typedef double value_t;"));
        assert!(all.contains("symbolic_shared<24575u, 1024u, true, false, 0>(arpt, acol, brpt, bcol, bins, nrows, crpt, g, threshold, overflow, noverflow, distinct_rows, repeat_rows, band)"));
        assert!(
            all.contains("spgemm_symbolic_packed_bin0(")
                && all.contains("symbolic_shared<32u, 4u, false, true, 0>")
        );
        assert!(all.contains("numeric_shared<31u, 8u, 0, false, false>"));
        assert!(all.contains("{26ull, 426ull"));
        assert!(all.contains(
            "spgemm_bin_count_numeric(const u64* crpt, const u64* arpt, u32 m, u32 direct_ok, const u32* distinct_rows, u32 distinct_max, u32 ranked_max, u32 promote_max, u32 promote_min_a, const u32* acol, const u64* band, const u32* same_rows, u32* sizes, u64* max_value) { bin_count<8, true>(crpt, arpt, m, direct_ok, distinct_rows, distinct_max, ranked_max, promote_max, promote_min_a, acol, band, same_rows, SPGEMM_NUMERIC_MAX, sizes, max_value); }"
        ));
        // The fixed kernels are exported by the first unit only.
        assert!(units[0]
            .program
            .source
            .contains("#define SPGEMM_FIXED_KERNEL extern \"C\" __global__"));
        for u in &units[1..] {
            assert!(u
                .program
                .source
                .contains("#define SPGEMM_FIXED_KERNEL template <int Unit> __global__"));
            assert!(u.kernels.len() <= BINS_PER_UNIT);
        }
    }

    #[test]
    fn pruning_adds_units_of_pruned_numeric_bins_after_the_same_units() {
        let t = KernelTable::v100_paper();
        let args = ("#define SPGEMM_WARP_SIZE 32\n", "// body\n", &t);
        let plain = build::<f64>(args.0, args.1, args.2, SortVariant::Auto, Semiring::MinPlus);
        let pruning =
            build_pruning::<f64>(args.0, args.1, args.2, SortVariant::Auto, Semiring::MinPlus);
        assert!(pruning.len() > plain.len());
        for (p, q) in plain.iter().zip(&pruning) {
            assert_eq!(p.program.name, q.program.name);
            assert_eq!(p.program.source, q.program.source);
        }
        let extra: Vec<Kernel> = pruning[plain.len()..]
            .iter()
            .flat_map(|u| u.kernels.clone())
            .collect();
        // Every shared bin of this table: rows of 8 lanes, or a block each
        // with room past the row in its table.
        assert_eq!(
            extra,
            (0..7)
                .map(Kernel::NumericBinPruned)
                .chain([Kernel::NumericDistinctPruned])
                .collect::<Vec<_>>()
        );
        assert_eq!(extra, pruned_kernels(&t, SortVariant::Auto));
        let source = &pruning[plain.len()].program.source;
        assert!(source.contains(
            "spgemm_numeric_bin0_pruned(const u64* arpt, const u32* acol, const value_t* aval, \
             const u64* brpt, const u32* bcol, const value_t* bval, const u32* bins, u32 nrows, \
             const u64* crpt, u32* ccol, value_t* cval, u32 g, const u32* distinct_rows, \
             const u64* band, u64 below, u32 has_below, u32 keep, u32* pruned_rows)"
        ));
        assert!(source.contains("numeric_shared<31u, 8u, 1, false, true>"));
        let last = &pruning.last().unwrap().program.source;
        assert!(last.contains(
            "spgemm_numeric_distinct_pruned(const u64* arpt, const u32* acol, \
             const value_t* aval, const u64* brpt, const u32* bcol, const value_t* bval, \
             const u32* bins, u32 nrows, const u64* crpt, u32* ccol, value_t* cval, u64 below, \
             u32 has_below, u32 keep, u32* pruned_rows) { numeric_distinct<true>(arpt, acol, \
             aval, brpt, bcol, bval, bins, nrows, crpt, ccol, cval, below, has_below, keep, \
             pruned_rows); }"
        ));
        // Three quarters of the table's 8 resident blocks.
        assert!(source.contains("SPGEMM_LAUNCH_BOUNDS(256, 6) spgemm_numeric_bin0_pruned("));
        // A block's row whose table leaves no three words past it, and rows
        // wider than a warp that share a block, are pruned after.
        let mut narrow = t.clone();
        narrow.numeric[1].table_size = 129;
        narrow.numeric[2].block_threads = 256;
        let kept = pruned_kernels(&narrow, SortVariant::Auto);
        assert!(!kept.contains(&Kernel::NumericBinPruned(1)));
        assert!(!kept.contains(&Kernel::NumericBinPruned(2)));
        assert!(kept.contains(&Kernel::NumericBinPruned(3)));
    }

    #[test]
    fn kernels_map_back_to_their_bins() {
        let t = KernelTable::v100_paper();
        assert_eq!(
            Kernel::NumericBin(1).bin(&t, SortVariant::Bitonic),
            Some((t.numeric[1], 256 * 4 + 255 * 8))
        );
        // The last symbolic bin records overflowing rows: a counter beside
        // its table; condensing sorts keep one per row too.
        assert_eq!(
            Kernel::SymbolicBin(7).bin(&t, SortVariant::Auto),
            Some((t.symbolic[7], 24575 * 4 + 4))
        );
        assert_eq!(
            Kernel::NumericBin(0).bin(&t, SortVariant::Auto),
            Some((t.numeric[0], 32 * (32 * 4 + 31 * 8 + 4)))
        );
        assert_eq!(Kernel::Setup.bin(&t, SortVariant::Auto), None);
        assert_eq!(Kernel::SymbolicBin(99).bin(&t, SortVariant::Auto), None);
    }
}
