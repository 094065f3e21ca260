//! Compiles every kernel offline through the backend's NVRTC path (no GPU
//! needed) and checks ptxas' resource report against the kernel tables: no
//! spills, no stack, and registers and shared memory that allow the
//! resident blocks each bin assumes.
//!
//! NVRTC 13 compiles for sm_90 (Hopper table); NVRTC 12 for sm_70 (the
//! V100 table of the OpSparse paper). Without NVRTC the tests are
//! reported as ignored, with the reason (libtest-mimic's runner), unless
//! `SPGEMM_REQUIRE_NVRTC=1`, which fails them instead.

use libtest_mimic::{Completion, Trial};
use spgemm_core::device::{AtomicCapabilities, DeviceProperties, Vendor};
use spgemm_core::gpu::program;
use spgemm_core::gpu::SortVariant;
use spgemm_core::semiring::Semiring;
use spgemm_core::table::KernelTable;
use std::collections::HashMap;
use std::io::Write;

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trials = vec![
        Trial::ignorable_test("every_kernel_compiles_and_fits_its_table", || {
            Ok(every_kernel_compiles_and_fits_its_table())
        }),
        Trial::ignorable_test("kernels_compile_for_sm70_with_the_cuda12_nvrtc", || {
            Ok(kernels_compile_for_sm70_with_the_cuda12_nvrtc())
        }),
    ];
    libtest_mimic::run(&args, trials).exit();
}

/// An ignored test, with the reason; a failure under
/// `SPGEMM_REQUIRE_NVRTC=1`.
fn skip(why: &str) -> Completion {
    assert!(
        std::env::var("SPGEMM_REQUIRE_NVRTC").map_or(true, |v| v != "1"),
        "SPGEMM_REQUIRE_NVRTC=1 but {why}"
    );
    Completion::ignored_with(why)
}

fn hopper() -> DeviceProperties {
    DeviceProperties {
        name: "H100/H200 (offline)".into(),
        vendor: Vendor::Nvidia,
        arch: "sm_90".into(),
        warp_width: 32,
        multiprocessor_count: 132,
        max_threads_per_block: 1024,
        max_threads_per_multiprocessor: 2048,
        max_blocks_per_multiprocessor: 32,
        shared_memory_per_block: 48 * 1024,
        shared_memory_per_block_optin: 227 * 1024,
        shared_memory_per_multiprocessor: 228 * 1024,
        reserved_shared_memory_per_block: 1024,
        registers_per_multiprocessor: 65536,
        total_memory: 80 << 30,
        atomics: AtomicCapabilities {
            f64_add: true,
            u64_add: true,
        },
    }
}

/// Per function: (registers, static shared bytes, stack bytes, spill stores + loads).
fn parse(log: &str) -> HashMap<String, (u32, u32, u32, u32)> {
    let mut out = HashMap::new();
    let mut current = String::new();
    let num = |s: &str, key: &str| -> u32 {
        s.split(',')
            .find(|p| p.contains(key))
            .and_then(|p| p.split_whitespace().find_map(|w| w.parse().ok()))
            .unwrap_or(0)
    };
    for line in log.lines() {
        if let Some(rest) = line.split("Function properties for ").nth(1) {
            current = rest.trim().to_string();
            out.entry(current.clone()).or_insert((0, 0, 0, 0));
        } else if line.contains("bytes stack frame") {
            let e = out.entry(current.clone()).or_insert((0, 0, 0, 0));
            e.2 = num(line, "stack frame");
            e.3 = num(line, "spill stores") + num(line, "spill loads");
        } else if line.contains("Compiling entry function") {
            current = line.split('\'').nth(1).unwrap_or("").to_string();
        } else if line.contains("Used") && line.contains("registers") {
            let e = out.entry(current.clone()).or_insert((0, 0, 0, 0));
            e.0 = num(line, "registers");
            e.1 = num(line, "smem");
        }
    }
    out
}

fn every_kernel_compiles_and_fits_its_table() -> Completion {
    if !spgemm_cuda::nvrtc::present() {
        return skip("NVRTC not found (pip install nvidia-cuda-nvrtc and add its lib folder to LD_LIBRARY_PATH)");
    }
    let (major, _) = spgemm_cuda::nvrtc::version().unwrap();
    let props = hopper();
    let (arch, regs_per_sm, smem_per_sm, reserved) = if major >= 13 {
        ("sm_90", 65536, 228 * 1024, 1024)
    } else {
        ("sm_70", 65536, 96 * 1024, 0)
    };
    let every_sort = [
        SortVariant::Bitonic,
        SortVariant::CondenseRank,
        SortVariant::CondenseBitonic,
        SortVariant::Register,
        SortVariant::RegisterHash,
    ];
    for value_bytes in [4usize, 8] {
        // sm_90: the Hopper table with every sort, and the DCU paper's table
        // (run on the H200 to check its kernels); sm_70: the V100 paper's.
        let configs = if major >= 13 {
            vec![
                (
                    KernelTable::for_device(&props, value_bytes),
                    &every_sort[..],
                ),
                (
                    KernelTable::dcu_paper(&props, value_bytes),
                    &[SortVariant::Auto][..],
                ),
            ]
        } else {
            vec![(KernelTable::v100_paper(), &every_sort[..])]
        };
        for (ci, (table, sorts)) in configs.iter().enumerate() {
            for (si, &sort) in sorts.iter().enumerate() {
                let mut units = if value_bytes == 4 {
                    program::build_pruning::<f32>(
                        spgemm_kernels_cuda::PRELUDE_CUDA,
                        spgemm_kernels_cuda::BODY,
                        table,
                        sort,
                        Semiring::PlusTimes,
                    )
                } else {
                    program::build_pruning::<f64>(
                        spgemm_kernels_cuda::PRELUDE_CUDA,
                        spgemm_kernels_cuda::BODY,
                        table,
                        sort,
                        Semiring::PlusTimes,
                    )
                };
                // A semiring other than plus (compare-and-swap for its sum)
                // and the masked dot products, once per value type and
                // semiring.
                if ci == 0 && si == 0 {
                    let prelude = spgemm_kernels_cuda::PRELUDE_CUDA;
                    let body = spgemm_kernels_cuda::BODY;
                    units.extend(if value_bytes == 4 {
                        program::build::<f32>(prelude, body, table, sort, Semiring::MinPlus)
                    } else {
                        program::build::<f64>(prelude, body, table, sort, Semiring::MinPlus)
                    });
                    units.extend(Semiring::ALL.map(|r| {
                        let source = spgemm_kernels_cuda::MASKED_DOT;
                        if value_bytes == 4 {
                            program::masked_dot::<f32>(spgemm_kernels_cuda::PRELUDE_CUDA, source, r)
                        } else {
                            program::masked_dot::<f64>(spgemm_kernels_cuda::PRELUDE_CUDA, source, r)
                        }
                    }));
                    // Integer values of the same width: plus (hardware
                    // addition) and min (compare-and-swap), both programs.
                    let masked = spgemm_kernels_cuda::MASKED_DOT;
                    units.extend(if value_bytes == 4 {
                        integer_units::<i32>(prelude, body, masked, table, sort)
                    } else {
                        integer_units::<i64>(prelude, body, masked, table, sort)
                    });
                }
                for unit in &units {
                    let prog = &unit.program;
                    let t = std::time::Instant::now();
                    let compiled = spgemm_cuda::nvrtc::compile(
                        &prog.name,
                        &prog.source,
                        arch,
                        &["--ptxas-options=-v"],
                    )
                    .unwrap_or_else(|e| panic!("{} for {arch}: {e}", prog.name));
                    assert!(!compiled.cubin.is_empty());
                    let _ = writeln!(
                        std::io::stderr(),
                        "{arch} {}: {} kernels compiled in {} ms",
                        prog.name,
                        prog.kernels.len(),
                        t.elapsed().as_millis()
                    );
                    let report = parse(&compiled.log);
                    for kernel in &unit.kernels {
                        let name = &kernel.name();
                        let &(regs, smem, stack, spills) = report.get(name).unwrap_or_else(|| {
                            panic!("{name} missing from the ptxas report:\n{}", compiled.log)
                        });
                        assert_eq!(
                            spills, 0,
                            "{}: {name} spills {spills} bytes at {regs} registers",
                            prog.name
                        );
                        assert_eq!(stack, 0, "{}: {name} uses a stack frame", prog.name);
                        let bin = kernel.bin(table, sort);
                        if bin.is_none() {
                            let _ = writeln!(
                                std::io::stderr(),
                                "{arch} {} {name}: {regs} registers",
                                prog.name
                            );
                        }
                        if let Some((bin, shared)) = bin {
                            let blocks = (unit.min_blocks)(&bin);
                            assert!(
                            regs * bin.block_threads * blocks <= regs_per_sm,
                            "{}: {name} uses {regs} registers; {blocks} blocks of {} threads need at most {}",
                            prog.name,
                            bin.block_threads,
                            regs_per_sm / (bin.block_threads * blocks)
                        );
                            let per_block = smem as usize + shared + reserved;
                            assert!(
                            per_block * blocks as usize <= smem_per_sm,
                            "{}: {name} needs {per_block} bytes of shared memory per block; {blocks} blocks do not fit {smem_per_sm}",
                            prog.name
                        );
                            let _ = writeln!(
                            std::io::stderr(),
                            "{arch} {} {name}: {regs} registers, {} B shared, {blocks} blocks/SM",
                            prog.name,
                            per_block
                        );
                        }
                    }
                }
            }
        }
    }
    Completion::Completed
}

/// The same check with the CUDA 12 NVRTC (sm_70, the V100 table): NVRTC is
/// loaded once per process, so this runs the test above in a child process
/// whose library path holds the NVRTC 12 named by `SPGEMM_NVRTC12_LIB`.
fn kernels_compile_for_sm70_with_the_cuda12_nvrtc() -> Completion {
    let Some(dir) = std::env::var_os("SPGEMM_NVRTC12_LIB") else {
        return skip(
            "SPGEMM_NVRTC12_LIB not set (a folder with libnvrtc.so from nvidia-cuda-nvrtc-cu12)",
        );
    };
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "every_kernel_compiles_and_fits_its_table",
            "--nocapture",
        ])
        .env("LD_LIBRARY_PATH", &dir)
        .env("SPGEMM_REQUIRE_NVRTC", "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "sm_70 compile failed:\n{text}");
    assert!(
        text.contains("sm_70 spgemm_v100-paper_f64"),
        "the child did not compile for sm_70 (NVRTC 12 not loaded?):\n{text}"
    );
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
