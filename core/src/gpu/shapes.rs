//! How each bin's kernel is compiled: the shape a per-bin kernel is built
//! for under a sort (its resident blocks, where the register-aware
//! accumulators or the packed symbolic tables need other budgets than the
//! table's) and the dynamic shared memory it is launched with. The kernel
//! catalogue (`kernels.rs`), the program builder and the resource checks
//! all take them from here.

use super::config::SortVariant;
use crate::table::{Bin, KernelTable};

/// Whether the kernel of symbolic bin `i` counts by the register sort or
/// reg-hash under `sort` ([`SortVariant::registers`]; never the last bin,
/// which counts as it goes to give up on rows that overflow it).
pub fn symbolic_registers(table: &KernelTable, i: usize, sort: SortVariant) -> bool {
    i + 1 < table.symbolic.len() && sort.registers(table, &table.symbolic[i], true)
}

/// A bin of `table` as its register-sort or reg-hash kernel is compiled: five
/// resident blocks where the table has eight (a row's sorted products,
/// their values and the network's compares need more than the 32
/// registers a thread of eight blocks of 256 threads has: at 32 the
/// numeric kernels spilled 44 bytes on sm_90), half of them on
/// 64-wide wavefronts (a double takes two VGPRs: at five eighths the
/// numeric kernels spilled on gfx906); at least one.
fn register_bin(table: &KernelTable, bin: Bin) -> Bin {
    let (num, den) = if table.warp_width > 32 {
        (1, 2)
    } else {
        (5, 8)
    };
    Bin {
        min_blocks: (bin.min_blocks * num / den).max(1),
        ..bin
    }
}

/// Symbolic bin `i` as its kernel is compiled under `sort`.
pub fn symbolic_bin(table: &KernelTable, i: usize, sort: SortVariant) -> Bin {
    let bin = table.symbolic[i];
    if symbolic_registers(table, i, sort) {
        register_bin(table, bin)
    } else {
        bin
    }
}

/// Numeric bin `i` as its kernel is compiled under `sort`.
pub fn numeric_bin(table: &KernelTable, i: usize, sort: SortVariant) -> Bin {
    let bin = table.numeric[i];
    if sort.code(table, &bin) >= 3 {
        register_bin(table, bin)
    } else {
        bin
    }
}

/// Dynamic shared memory of the kernel of symbolic bin `i`, bytes: its
/// tables, and a counter per row in the bin that records overflowing rows.
pub fn symbolic_shared_bytes(table: &KernelTable, i: usize) -> usize {
    let overflow = i + 1 == table.symbolic.len() && table.symbolic_overflows();
    table.symbolic[i].shared_bytes(4, overflow)
}

/// Dynamic shared memory of the packed kernel of symbolic bin `i`, bytes:
/// its tables of words, a mask per slot, and two counters per row in the
/// bin that records overflowing rows (words and columns).
pub fn symbolic_packed_bytes(table: &KernelTable, i: usize) -> usize {
    let bin = &table.symbolic[i];
    let overflow = i + 1 == table.symbolic.len() && table.symbolic_overflows();
    bin.rows_per_block() as usize * (8 * bin.table_size as usize + if overflow { 8 } else { 0 })
}

/// Symbolic bin `i` as its packed kernel is compiled: the resident blocks
/// it is built for scaled down by its larger shared memory, so that they
/// fit a multiprocessor as the plain kernel's do (at least one).
pub fn symbolic_packed_bin(table: &KernelTable, i: usize) -> Bin {
    let bin = table.symbolic[i];
    let scaled = bin.min_blocks as usize * symbolic_shared_bytes(table, i)
        / symbolic_packed_bytes(table, i).max(1);
    Bin {
        min_blocks: (scaled as u32).max(1),
        ..bin
    }
}

/// Whether shared symbolic bin `i` has a packed kernel: its tables and
/// masks fit the shared memory the table was made for.
pub fn symbolic_packed_fits(table: &KernelTable, i: usize) -> bool {
    !table.symbolic[i].global() && symbolic_packed_bytes(table, i) <= table.shared_per_block
}

/// Dynamic shared memory of the kernel of numeric bin `i` with `sort`,
/// bytes: its tables, and a counter per row when the sort condenses.
pub fn numeric_shared_bytes(table: &KernelTable, i: usize, sort: SortVariant) -> usize {
    let bin = &table.numeric[i];
    bin.shared_bytes(table.numeric_entry_bytes(), sort.code(table, bin) != 0)
}
