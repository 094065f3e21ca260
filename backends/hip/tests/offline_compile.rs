//! Compiles every kernel for HIP offline (no GPU) through the backend's own
//! hiprtc path ([`spgemm_hip::hiprtc::compile`]) and checks each kernel's
//! resources, read from the code object's metadata (`llvm-readelf
//! --notes`), against the kernel table it was specialised with: no VGPR or
//! SGPR spills, no scratch (private segment), LDS (group segment plus the
//! dynamic tables) within the block limit, and VGPRs and LDS that let a
//! compute unit hold the blocks the table assumes.
//!
//! Targets: gfx906 (Hygon DCU / MI50 class: 48 KB per block as the DCU
//! paper uses, 64 KB per compute unit) with the DCU paper's table (`dcu-paper`), and
//! gfx90a (MI200 class: 64 KB per block and per compute unit) with the
//! derived `mi200` table. Needs libamdhip64 (hiprtc) and `llvm-readelf`
//! (Debian: `libamdhip64-dev`, `hipcc`); without them the test is reported
//! as ignored, with the reason, unless `SPGEMM_REQUIRE_HIPRTC=1`.

use libtest_mimic::Completion;
use spgemm_core::gpu::program;
use spgemm_core::gpu::SortVariant;
use spgemm_core::semiring::Semiring;
use spgemm_core::table::KernelTable;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

/// A compute unit of the target: VGPRs per SIMD lane, allocation
/// granularity, most waves per SIMD, LDS bytes.
struct Cu {
    vgprs: u32,
    granule: u32,
    max_waves: u32,
    lds: usize,
}

fn llvm_tool(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|p| p.to_string_lossy().contains("llvm-"))
        .collect();
    dirs.sort();
    dirs.into_iter()
        .rev()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Kernel name → metadata fields (as numbers) from `llvm-readelf --notes`.
fn kernel_metadata(notes: &str) -> HashMap<String, HashMap<String, u64>> {
    let mut out = HashMap::new();
    let mut fields: HashMap<String, u64> = HashMap::new();
    let mut name = None;
    let mut flush = |name: &mut Option<String>, fields: &mut HashMap<String, u64>| {
        if let Some(n) = name.take() {
            out.insert(n, std::mem::take(fields));
        }
        fields.clear();
    };
    for line in notes.lines() {
        // Each kernel is an item of the `amdhsa.kernels` list; its first key
        // shares the item's line (`.args` on gfx906, `.agpr_count` on gfx90a).
        let line = match line.strip_prefix("  - ") {
            Some(first) => {
                flush(&mut name, &mut fields);
                format!("    {first}")
            }
            None => line.to_string(),
        };
        if let Some(rest) = line.strip_prefix("    .") {
            let (key, value) = rest.split_once(':').unwrap_or((rest, ""));
            let value = value.trim();
            if key == "name" {
                name = Some(value.to_string());
            } else if let Ok(v) = value.parse::<u64>() {
                fields.insert(key.to_string(), v);
            }
        }
    }
    flush(&mut name, &mut fields);
    out
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trial = libtest_mimic::Trial::ignorable_test(
        "every_kernel_compiles_for_gfx906_and_gfx90a_and_fits_its_table",
        || Ok(every_kernel_compiles_for_gfx906_and_gfx90a_and_fits_its_table()),
    );
    libtest_mimic::run(&args, vec![trial]).exit();
}

/// Reported as ignored, with the reason, without hiprtc or llvm-readelf;
/// failed instead under `SPGEMM_REQUIRE_HIPRTC=1`.
fn every_kernel_compiles_for_gfx906_and_gfx90a_and_fits_its_table() -> Completion {
    let (true, Some(readelf)) = (spgemm_hip::hiprtc::present(), llvm_tool("llvm-readelf")) else {
        let why = "hiprtc (libamdhip64) or llvm-readelf not found (Debian: apt install libamdhip64-dev hipcc)";
        assert!(
            std::env::var("SPGEMM_REQUIRE_HIPRTC").map_or(true, |v| v != "1"),
            "SPGEMM_REQUIRE_HIPRTC=1 but {why}"
        );
        return Completion::ignored_with(why);
    };
    let dir = std::env::temp_dir().join(format!("spgemm-hip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let targets = [
        (
            "gfx906",
            spgemm_hip::properties::dcu_gfx906(),
            Cu {
                vgprs: 256,
                granule: 4,
                max_waves: 10,
                lds: 64 * 1024,
            },
        ),
        (
            "gfx90a",
            spgemm_hip::properties::mi200_gfx90a(),
            Cu {
                vgprs: 512,
                granule: 8,
                max_waves: 8,
                lds: 64 * 1024,
            },
        ),
    ];
    for (arch, props, cu) in targets {
        for (value_bytes, sort) in [4usize, 8].into_iter().flat_map(|v| {
            [
                SortVariant::Auto,
                SortVariant::Register,
                SortVariant::RegisterHash,
            ]
            .map(|s| (v, s))
        }) {
            let table = KernelTable::for_device(&props, value_bytes);
            let mut units = if value_bytes == 4 {
                program::build_pruning::<f32>(
                    spgemm_kernels_hip::PRELUDE_HIP,
                    spgemm_kernels_hip::BODY,
                    &table,
                    sort,
                    Semiring::PlusTimes,
                )
            } else {
                program::build_pruning::<f64>(
                    spgemm_kernels_hip::PRELUDE_HIP,
                    spgemm_kernels_hip::BODY,
                    &table,
                    sort,
                    Semiring::PlusTimes,
                )
            };
            // A semiring other than plus (compare-and-swap for its sum) and
            // the masked dot products, once per value type and semiring.
            if sort == SortVariant::Auto {
                let (prelude, body) = (spgemm_kernels_hip::PRELUDE_HIP, spgemm_kernels_hip::BODY);
                units.extend(if value_bytes == 4 {
                    program::build::<f32>(prelude, body, &table, sort, Semiring::MinPlus)
                } else {
                    program::build::<f64>(prelude, body, &table, sort, Semiring::MinPlus)
                });
                units.extend(Semiring::ALL.map(|r| {
                    let source = spgemm_kernels_hip::MASKED_DOT;
                    if value_bytes == 4 {
                        program::masked_dot::<f32>(spgemm_kernels_hip::PRELUDE_HIP, source, r)
                    } else {
                        program::masked_dot::<f64>(spgemm_kernels_hip::PRELUDE_HIP, source, r)
                    }
                }));
                // Integer values of the same width: plus (hardware addition)
                // and min (compare-and-swap), both programs.
                let masked = spgemm_kernels_hip::MASKED_DOT;
                units.extend(if value_bytes == 4 {
                    integer_units::<i32>(prelude, body, masked, &table, sort)
                } else {
                    integer_units::<i64>(prelude, body, masked, &table, sort)
                });
            }
            for unit in &units {
                let prog = &unit.program;
                let compiled = spgemm_hip::hiprtc::compile(&prog.name, &prog.source, arch)
                    .unwrap_or_else(|e| panic!("{arch} {}: {e}", prog.name));
                let elf = dir.join(format!("{}.o", prog.name));
                std::fs::write(&elf, &compiled.code).unwrap();
                let meta = kernel_metadata(&run(Command::new(&readelf).arg("--notes").arg(&elf)));
                for kernel in &unit.kernels {
                    let name = &kernel.name();
                    let m = meta.get(name).unwrap_or_else(|| {
                        panic!("{arch} {}: {name} missing from the code object", prog.name)
                    });
                    let get = |k: &str| *m.get(k).unwrap_or(&0);
                    assert_eq!(
                        get("vgpr_spill_count") + get("sgpr_spill_count"),
                        0,
                        "{arch} {}: {name} spills",
                        prog.name
                    );
                    assert_eq!(
                        get("private_segment_fixed_size"),
                        0,
                        "{arch} {}: {name} uses scratch",
                        prog.name
                    );
                    let bin = kernel.bin(&table, sort);
                    let Some((bin, shared)) = bin else { continue };
                    let min_blocks = (unit.min_blocks)(&bin);
                    let lds = get("group_segment_fixed_size") as usize + shared;
                    assert!(
                        lds <= props.shared_memory_per_block_optin,
                        "{arch} {}: {name} needs {lds} bytes of LDS per block",
                        prog.name
                    );
                    assert!(
                        lds * min_blocks as usize <= cu.lds,
                        "{arch} {}: {name}: {min_blocks} blocks of {lds} bytes exceed the CU's LDS",
                        prog.name
                    );
                    // gfx90a's VGPRs and AGPRs share one register file.
                    let vgprs = (get("vgpr_count") + get("agpr_count")).div_ceil(cu.granule as u64)
                        as u32
                        * cu.granule;
                    let waves_by_vgprs = (cu.vgprs / vgprs.max(1)).min(cu.max_waves);
                    let waves_needed = (min_blocks * (bin.block_threads / 64)).div_ceil(4);
                    assert!(
                        waves_by_vgprs >= waves_needed,
                        "{arch} {}: {name} uses {vgprs} VGPRs: {waves_by_vgprs} waves per SIMD, the table assumes {waves_needed}",
                        prog.name
                    );
                    let _ = writeln!(
                        std::io::stderr(),
                        "{arch} {} {name}: {vgprs} VGPRs, {lds} B LDS, {min_blocks} blocks/CU",
                        prog.name
                    );
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Completion::Completed
}

/// The product's units (with the numeric bins that prune as they write)
/// and the masked program's for integer values of type `T` under
/// plus-times and min-plus.
fn integer_units<T: spgemm_core::Scalar>(
    prelude: &str,
    body: &str,
    masked: &str,
    table: &KernelTable,
    sort: SortVariant,
) -> Vec<program::Unit> {
    [Semiring::PlusTimes, Semiring::MinPlus]
        .into_iter()
        .flat_map(|r| {
            let mut units = program::build_pruning::<T>(prelude, body, table, sort, r);
            units.push(program::masked_dot::<T>(prelude, masked, r));
            units
        })
        .collect()
}
