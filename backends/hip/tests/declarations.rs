//! The hand-written declarations of the HIP runtime and rocSPARSE checked
//! against the installed ROCm: every constant against the value its header
//! gives (a small C program compiled against the headers prints them), and
//! every symbol against the shared library. Reported as ignored, with the
//! reason, without the headers or libraries, unless
//! `SPGEMM_REQUIRE_HIPRTC=1` (CI installs libamdhip64-dev and
//! librocsparse-dev), which fails them instead.

use libtest_mimic::{Completion, Trial};
use spgemm_hip::runtime::{attribute, pool_attribute, status};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

fn include_dir() -> Option<PathBuf> {
    let roots = ["HIP_PATH", "ROCM_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain(["/opt/rocm", "/usr"].map(PathBuf::from));
    roots.map(|r| r.join("include")).find(|d| {
        d.join("hip/hip_runtime_api.h").is_file() && d.join("rocsparse/rocsparse.h").is_file()
    })
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    type Test = fn() -> Completion;
    let tests: [(&str, Test); 5] = [
        (
            "constants_match_the_installed_headers",
            constants_match_the_installed_headers,
        ),
        (
            "every_runtime_symbol_is_in_libamdhip64",
            every_runtime_symbol_is_in_libamdhip64,
        ),
        (
            "every_hiprtc_symbol_is_in_its_library",
            every_hiprtc_symbol_is_in_its_library,
        ),
        (
            "every_rocsparse_symbol_is_in_librocsparse",
            every_rocsparse_symbol_is_in_librocsparse,
        ),
        (
            "every_rccl_symbol_is_in_librccl",
            every_rccl_symbol_is_in_librccl,
        ),
    ];
    let trials = tests
        .into_iter()
        .map(|(name, test)| Trial::ignorable_test(name, move || Ok(test())))
        .collect();
    libtest_mimic::run(&args, trials).exit();
}

/// An ignored test, with the reason (libtest-mimic's runner); a failure
/// under `SPGEMM_REQUIRE_HIPRTC=1`.
fn skip(why: &str) -> Completion {
    assert!(
        std::env::var("SPGEMM_REQUIRE_HIPRTC").map_or(true, |v| v != "1"),
        "SPGEMM_REQUIRE_HIPRTC=1 but {why}"
    );
    Completion::ignored_with(format!(
        "{why} (Debian: apt install libamdhip64-dev librocsparse-dev)"
    ))
}

/// `name value` lines printed by a C program compiled against the headers.
fn header_values(include: &PathBuf, names: &[&str]) -> HashMap<String, i64> {
    let dir = std::env::temp_dir().join(format!("spgemm-decl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = String::from(
        "#include <stdio.h>\n#include <hip/hip_runtime_api.h>\n#include <rocsparse/rocsparse.h>\nint main(void) {\n",
    );
    for n in names {
        c += &format!("  printf(\"%s %lld\\n\", \"{n}\", (long long)({n}));\n");
    }
    c += "  return 0;\n}\n";
    let src = dir.join("values.c");
    std::fs::write(&src, c).unwrap();
    let exe = dir.join("values");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-D__HIP_PLATFORM_AMD__", "-I"])
        .arg(include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{cc}: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new(&exe).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.trim().parse().unwrap()))
        .collect()
}

fn constants_match_the_installed_headers() -> Completion {
    let Some(include) = include_dir() else {
        return skip("the HIP and rocSPARSE headers were not found");
    };
    let ours: Vec<(&str, i64)> = vec![
        ("hipSuccess", status::SUCCESS as i64),
        ("hipErrorInvalidValue", status::INVALID_VALUE as i64),
        ("hipErrorOutOfMemory", status::OUT_OF_MEMORY as i64),
        ("hipErrorNotInitialized", status::NOT_INITIALIZED as i64),
        (
            "hipErrorInsufficientDriver",
            status::INSUFFICIENT_DRIVER as i64,
        ),
        ("hipErrorNoDevice", status::NO_DEVICE as i64),
        ("hipErrorInvalidDevice", status::INVALID_DEVICE as i64),
        ("hipErrorIllegalAddress", status::ILLEGAL_ADDRESS as i64),
        (
            "hipErrorLaunchOutOfResources",
            status::LAUNCH_OUT_OF_RESOURCES as i64,
        ),
        ("hipErrorLaunchFailure", status::LAUNCH_FAILURE as i64),
        (
            "hipDeviceAttributeComputeCapabilityMajor",
            attribute::COMPUTE_CAPABILITY_MAJOR as i64,
        ),
        (
            "hipDeviceAttributeMaxBlocksPerMultiProcessor",
            attribute::MAX_BLOCKS_PER_MULTIPROCESSOR as i64,
        ),
        (
            "hipDeviceAttributeMaxThreadsPerBlock",
            attribute::MAX_THREADS_PER_BLOCK as i64,
        ),
        (
            "hipDeviceAttributeMaxThreadsPerMultiProcessor",
            attribute::MAX_THREADS_PER_MULTIPROCESSOR as i64,
        ),
        (
            "hipDeviceAttributeComputeCapabilityMinor",
            attribute::COMPUTE_CAPABILITY_MINOR as i64,
        ),
        (
            "hipDeviceAttributeMultiprocessorCount",
            attribute::MULTIPROCESSOR_COUNT as i64,
        ),
        (
            "hipDeviceAttributeMaxRegistersPerMultiprocessor",
            attribute::MAX_REGISTERS_PER_MULTIPROCESSOR as i64,
        ),
        (
            "hipDeviceAttributeMaxSharedMemoryPerBlock",
            attribute::MAX_SHARED_MEMORY_PER_BLOCK as i64,
        ),
        ("hipDeviceAttributeWarpSize", attribute::WARP_SIZE as i64),
        (
            "hipDeviceAttributeMemoryPoolsSupported",
            attribute::MEMORY_POOLS_SUPPORTED as i64,
        ),
        (
            "hipDeviceAttributeMaxSharedMemoryPerMultiprocessor",
            attribute::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR as i64,
        ),
        (
            "hipMemPoolAttrReleaseThreshold",
            pool_attribute::RELEASE_THRESHOLD as i64,
        ),
        (
            "hipMemPoolAttrReservedMemCurrent",
            pool_attribute::RESERVED_MEM_CURRENT as i64,
        ),
        (
            "hipMemPoolAttrUsedMemCurrent",
            pool_attribute::USED_MEM_CURRENT as i64,
        ),
        // Sizes the declarations assume: C enums and rocsparse_int are 32-bit.
        ("sizeof(hipError_t)", 4),
        ("sizeof(hipDeviceAttribute_t)", 4),
        ("sizeof(rocsparse_int)", 4),
        ("rocsparse_operation_none", 111),
        ("rocsparse_status_success", 0),
    ];
    let names: Vec<&str> = ours.iter().map(|(n, _)| *n).collect();
    let theirs = header_values(&include, &names);
    for (name, value) in ours {
        assert_eq!(
            theirs.get(name),
            Some(&value),
            "{name} in {}",
            include.display()
        );
    }
    Completion::Completed
}

fn symbols_resolve(libraries: &[&str], symbols: &[&str]) -> Completion {
    symbols_resolve_or(libraries, symbols, skip)
}

/// [`symbols_resolve`], with `missing` saying what a missing library means.
fn symbols_resolve_or(
    libraries: &[&str],
    symbols: &[&str],
    missing: fn(&str) -> Completion,
) -> Completion {
    // SAFETY: loading the libraries runs their initialisers only.
    let Some(lib) = libraries
        .iter()
        .find_map(|l| unsafe { libloading::Library::new(l) }.ok())
    else {
        return missing(&format!("none of {libraries:?} could be loaded"));
    };
    for s in symbols {
        // SAFETY: only the presence of the symbol is checked; it is not called.
        let found = unsafe { lib.get::<*const ()>(s.as_bytes()) };
        assert!(found.is_ok(), "{s} missing from {libraries:?}");
    }
    Completion::Completed
}

fn every_runtime_symbol_is_in_libamdhip64() -> Completion {
    symbols_resolve(
        &spgemm_hip::runtime::LIBRARIES,
        spgemm_hip::runtime::SYMBOLS,
    )
}

fn every_hiprtc_symbol_is_in_its_library() -> Completion {
    symbols_resolve(&spgemm_hip::hiprtc::LIBRARIES, spgemm_hip::hiprtc::SYMBOLS)
}

fn every_rccl_symbol_is_in_librccl() -> Completion {
    // Debian packages no RCCL (ROCm's own packages do): ignored where it
    // is missing, even under SPGEMM_REQUIRE_HIPRTC=1.
    symbols_resolve_or(
        &spgemm_hip::rccl::LIBRARIES,
        spgemm_hip::rccl::SYMBOLS,
        |why| Completion::ignored_with(format!("{why} (RCCL comes with ROCm)")),
    )
}

fn every_rocsparse_symbol_is_in_librocsparse() -> Completion {
    symbols_resolve(
        &spgemm_hip::rocsparse::LIBRARIES,
        spgemm_hip::rocsparse::SYMBOLS,
    )
}
