//! What the HIP backend decides about a device on the host: its
//! [`DeviceProperties`] from the runtime's attributes (with the DCU's
//! shared-memory limit), its architecture from the runtime's name for it,
//! and the named configurations the offline checks compile for.

use spgemm_core::device::{AtomicCapabilities, DeviceProperties, Vendor};

/// Shared memory a block may use on a Hygon DCU (gfx906), bytes: 48 KB of
/// the compute unit's 64 KB (the DCU paper's configuration; the compiler
/// accepts 64 KB, so the table must not rely on it).
pub const DCU_SHARED_PER_BLOCK: usize = 48 * 1024;
/// Shared memory (LDS) of a GCN/CDNA compute unit when the runtime does not
/// report it, bytes.
pub const DEFAULT_SHARED_PER_CU: usize = 64 * 1024;
/// Resident work-groups per compute unit assumed when the runtime does not
/// report it (the attribute is CUDA-only in HIP).
pub const DEFAULT_BLOCKS_PER_CU: u32 = 32;
/// 32-bit registers of a compute unit when the runtime does not report
/// them: 4 SIMDs of 256 VGPRs of 64 lanes.
pub const DEFAULT_REGISTERS_PER_CU: u32 = 4 * 256 * 64;

/// The attributes queried from `hipDeviceGetAttribute`; `None` where the
/// runtime refused one (several are CUDA-only).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attributes {
    /// `hipDeviceAttributeWarpSize`.
    pub warp_size: Option<i32>,
    /// `hipDeviceAttributeMultiprocessorCount`.
    pub multiprocessors: Option<i32>,
    /// `hipDeviceAttributeMaxThreadsPerBlock`.
    pub max_threads_per_block: Option<i32>,
    /// `hipDeviceAttributeMaxThreadsPerMultiProcessor`.
    pub max_threads_per_multiprocessor: Option<i32>,
    /// `hipDeviceAttributeMaxBlocksPerMultiProcessor`.
    pub max_blocks_per_multiprocessor: Option<i32>,
    /// `hipDeviceAttributeMaxSharedMemoryPerBlock`.
    pub shared_per_block: Option<i32>,
    /// `hipDeviceAttributeMaxSharedMemoryPerMultiprocessor`.
    pub shared_per_multiprocessor: Option<i32>,
    /// `hipDeviceAttributeMaxRegistersPerMultiprocessor`.
    pub registers_per_multiprocessor: Option<i32>,
}

/// The architecture in a runtime architecture name such as
/// `"gfx906:sramecc+:xnack-"` (the part before the first `:`), if it names
/// one (`gfx` then hexadecimal digits).
pub fn arch_of(gcn_arch_name: &str) -> Option<&str> {
    let arch = gcn_arch_name.split(':').next()?.trim();
    let digits = arch.strip_prefix("gfx")?;
    (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_hexdigit())).then_some(arch)
}

/// The architecture name in the bytes of a `hipDeviceProp_t` of any ROCm
/// version: the first NUL-terminated string there that starts a field and
/// reads as an architecture (`gcnArchName`; the device name field before
/// it holds a marketing name, never a `gfx` one).
pub fn arch_in_properties(bytes: &[u8]) -> Option<String> {
    (0..bytes.len()).find_map(|i| {
        if i > 0 && bytes[i - 1] != 0 || !bytes[i..].starts_with(b"gfx") {
            return None;
        }
        let end = bytes[i..].iter().position(|&b| b == 0)? + i;
        let text = std::str::from_utf8(&bytes[i..end]).ok()?;
        arch_of(text).map(str::to_string)
    })
}

/// The properties the kernel tables are derived from, for a device named
/// `name` of architecture `arch` with `attributes` and `total_memory`
/// bytes. Attributes the runtime refused take the defaults above; on
/// gfx906 (Hygon DCU) a block gets at most [`DCU_SHARED_PER_BLOCK`].
pub fn properties(
    name: String,
    arch: &str,
    a: &Attributes,
    total_memory: usize,
) -> DeviceProperties {
    let positive = |v: Option<i32>| v.filter(|&x| x > 0).map(|x| x as u32);
    let warp_width = positive(a.warp_size).unwrap_or(64);
    let shared_per_cu =
        positive(a.shared_per_multiprocessor).map_or(DEFAULT_SHARED_PER_CU, |x| x as usize);
    let mut per_block = positive(a.shared_per_block).map_or(shared_per_cu, |x| x as usize);
    if arch == "gfx906" {
        per_block = per_block.min(DCU_SHARED_PER_BLOCK);
    }
    DeviceProperties {
        name,
        vendor: Vendor::Amd,
        arch: arch.to_string(),
        warp_width,
        multiprocessor_count: positive(a.multiprocessors).unwrap_or(1),
        max_threads_per_block: positive(a.max_threads_per_block).unwrap_or(1024),
        max_threads_per_multiprocessor: positive(a.max_threads_per_multiprocessor).unwrap_or(2560),
        max_blocks_per_multiprocessor: positive(a.max_blocks_per_multiprocessor)
            .unwrap_or(DEFAULT_BLOCKS_PER_CU),
        shared_memory_per_block: per_block,
        shared_memory_per_block_optin: per_block,
        shared_memory_per_multiprocessor: shared_per_cu,
        reserved_shared_memory_per_block: 0,
        registers_per_multiprocessor: positive(a.registers_per_multiprocessor)
            .unwrap_or(DEFAULT_REGISTERS_PER_CU),
        total_memory,
        // HIP provides both on every GCN/CDNA target (CAS loops where the
        // hardware has no native instruction).
        atomics: AtomicCapabilities {
            f64_add: true,
            u64_add: true,
        },
    }
}

/// A Hygon DCU (gfx906, 60 compute units of 64 KB LDS and 2,560 threads,
/// 48 KB per block), as [`properties`] derives it from what the runtime
/// reports on one: the configuration of the DCU paper.
pub fn dcu_gfx906() -> DeviceProperties {
    let a = Attributes {
        warp_size: Some(64),
        multiprocessors: Some(60),
        max_threads_per_block: Some(1024),
        max_threads_per_multiprocessor: Some(2560),
        max_blocks_per_multiprocessor: None,
        shared_per_block: Some(64 * 1024),
        shared_per_multiprocessor: Some(64 * 1024),
        registers_per_multiprocessor: None,
    };
    properties("Hygon DCU (gfx906)".into(), "gfx906", &a, 16 << 30)
}

/// An AMD MI200-class GPU (gfx90a, 110 compute units of 64 KB LDS and
/// 2,048 threads), derived by the same rule.
pub fn mi200_gfx90a() -> DeviceProperties {
    let a = Attributes {
        warp_size: Some(64),
        multiprocessors: Some(110),
        max_threads_per_block: Some(1024),
        max_threads_per_multiprocessor: Some(2048),
        max_blocks_per_multiprocessor: None,
        shared_per_block: Some(64 * 1024),
        shared_per_multiprocessor: Some(64 * 1024),
        registers_per_multiprocessor: None,
    };
    properties("AMD MI200 (gfx90a)".into(), "gfx90a", &a, 64 << 30)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spgemm_core::gpu::kernels::{self, Kernel, Phase, FIXED};
    use spgemm_core::gpu::program;
    use spgemm_core::gpu::SortVariant;
    use spgemm_core::semiring::Semiring;
    use spgemm_core::table::{group_size, KernelTable};

    #[test]
    fn architecture_names_are_read_with_or_without_features() {
        assert_eq!(arch_of("gfx906:sramecc+:xnack-"), Some("gfx906"));
        assert_eq!(arch_of("gfx90a"), Some("gfx90a"));
        assert_eq!(arch_of("gfx"), None);
        assert_eq!(arch_of("Hygon DCU"), None);
        let mut props = vec![0u8; 1024];
        props[..14].copy_from_slice(b"AMD gfx Radeon");
        props[396..396 + 22].copy_from_slice(b"gfx90a:sramecc+:xnack-");
        assert_eq!(arch_in_properties(&props).as_deref(), Some("gfx90a"));
        assert_eq!(arch_in_properties(&[0u8; 64]), None);
    }

    #[test]
    fn dcu_blocks_get_48_kb_and_refused_attributes_take_defaults() {
        let p = dcu_gfx906();
        assert_eq!(p.shared_memory_per_block_optin, 48 * 1024);
        assert_eq!(p.shared_memory_per_multiprocessor, 64 * 1024);
        assert_eq!(p.warp_width, 64);
        assert_eq!(p.max_blocks_per_multiprocessor, DEFAULT_BLOCKS_PER_CU);
        assert_eq!(p.registers_per_multiprocessor, 65536);
        let m = mi200_gfx90a();
        assert_eq!(m.shared_memory_per_block_optin, 64 * 1024);
        let none = properties("x".into(), "gfx1030", &Attributes::default(), 0);
        assert_eq!(none.warp_width, 64);
        assert_eq!(none.shared_memory_per_block_optin, DEFAULT_SHARED_PER_CU);
    }

    #[test]
    fn dcu_uses_the_papers_table_within_48_kb() {
        let t = KernelTable::for_device(&dcu_gfx906(), 8);
        assert_eq!(t.name, "dcu-paper");
        assert_eq!((t.symbolic.len(), t.numeric.len()), (9, 9));
        for (i, bin) in t.symbolic.iter().enumerate().filter(|(_, b)| !b.global()) {
            let bytes = kernels::symbolic_shared_bytes(&t, i);
            assert!(bytes <= DCU_SHARED_PER_BLOCK, "{bin:?}");
            assert_eq!(bin.block_threads % 64, 0, "{bin:?}: whole wavefronts");
        }
        for (i, bin) in t.numeric.iter().enumerate().filter(|(_, b)| !b.global()) {
            // Every sort fits: condensing ones fall back to the whole-table
            // bitonic sort where the counter would pass 48 KB.
            for sort in [SortVariant::Auto, SortVariant::CondenseRank] {
                let bytes = kernels::numeric_shared_bytes(&t, i, sort);
                assert!(bytes <= DCU_SHARED_PER_BLOCK, "{bin:?} {sort:?}");
            }
            assert_eq!(SortVariant::Auto.code(&t, bin), 0, "whole-table bitonic");
        }
        assert_eq!(SortVariant::CondenseRank.code(&t, &t.numeric[7]), 0);
        assert_eq!(SortVariant::CondenseRank.code(&t, &t.numeric[6]), 1);
        // gfx90a keeps the derived table.
        assert_eq!(KernelTable::for_device(&mi200_gfx90a(), 8).name, "mi200");
    }

    #[test]
    fn thread_groups_reach_a_whole_wavefront_of_64() {
        assert_eq!(group_size(4, 64, 64), 2);
        assert_eq!(group_size(10_000, 64, 1024), 64);
        assert!(group_size(200, 64, 1024) <= 64);
    }

    #[test]
    fn program_for_the_dcu_has_every_kernel_of_its_table() {
        let props = dcu_gfx906();
        let t = KernelTable::for_device(&props, 8);
        let units = program::build::<f64>("", "", &t, SortVariant::Auto, Semiring::PlusTimes);
        let kernels: Vec<Kernel> = units.iter().flat_map(|u| u.kernels.clone()).collect();
        assert_eq!(kernels[..FIXED.len()], FIXED);
        assert_eq!(kernels[FIXED.len()], Kernel::BinCount(Phase::Symbolic));
        // Shared symbolic bins follow in table order (the global ninth has
        // no kernel of its own), then the shared numeric bins (the engine
        // launches them largest first).
        let first = FIXED.len() + 4;
        for i in 0..8 {
            assert_eq!(kernels[first + i], Kernel::SymbolicBin(i));
            assert_eq!(kernels[first + 8 + i], Kernel::NumericBin(i));
        }
        // Then the packed symbolic kernels of the bins whose tables and
        // masks fit 48 KB.
        let packed: Vec<Kernel> = (0..8)
            .filter(|&i| kernels::symbolic_packed_fits(&t, i))
            .map(Kernel::SymbolicPackedBin)
            .collect();
        assert!(!packed.is_empty() && packed.len() < 8, "{packed:?}");
        assert_eq!(kernels[first + 16..], packed);
        let names: Vec<&String> = units.iter().flat_map(|u| &u.program.kernels).collect();
        assert_eq!(names[first + 8], "spgemm_numeric_bin0");
    }
}
