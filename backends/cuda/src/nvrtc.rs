//! Run-time compilation with NVRTC for the device present, cached on disk
//! (`spgemm_core::kernel_cache`; key: the program source, the target
//! architecture, the options and the NVRTC version).

use crate::error::other;
use cudarc::nvrtc::{result, sys};
use spgemm_core::device::{DeviceErrorKind, DeviceResult};
use std::ffi::CString;

/// Options every program is compiled with (besides the architecture).
pub const OPTIONS: [&str; 2] = ["-std=c++17", "-default-device"];

/// NVRTC's shared-library names, as cudarc (feature `cuda-13000`) looks for them.
const LIBRARIES: [&str; 4] = [
    "libnvrtc.so",
    "libnvrtc.so.13",
    "libnvrtc.so.1",
    "nvrtc64_130_0.dll",
];

/// Whether an NVRTC library can be loaded (cudarc panics when it cannot).
pub fn present() -> bool {
    // SAFETY: loading NVRTC runs only its (side-effect-free) initialisers.
    LIBRARIES
        .iter()
        .any(|l| unsafe { libloading::Library::new(l) }.is_ok())
}

/// NVRTC's `(major, minor)` version.
///
/// # Errors
/// No NVRTC library.
pub fn version() -> DeviceResult<(i32, i32)> {
    if !present() {
        return Err(other(
            DeviceErrorKind::NoDriver,
            "loading NVRTC",
            format!("none of {LIBRARIES:?} could be loaded"),
        ));
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (checked above); both pointers are live.
    let status = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    if status != sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(other(
            DeviceErrorKind::Compile,
            "nvrtcVersion",
            format!("{status:?}"),
        ));
    }
    Ok((major, minor))
}

/// Output of one compilation: the CUBIN for `arch` and NVRTC's log
/// (resource usage when `--ptxas-options=-v` is among the options).
pub struct Compiled {
    /// Device code for the real architecture.
    pub cubin: Vec<u8>,
    /// Compiler log.
    pub log: String,
}

/// Compiles `source` for `arch` (e.g. `"sm_90"`) with [`OPTIONS`] and `extra` options.
///
/// # Errors
/// [`DeviceErrorKind::NoDriver`] without NVRTC; [`DeviceErrorKind::Compile`]
/// with the compiler log.
pub fn compile(name: &str, source: &str, arch: &str, extra: &[&str]) -> DeviceResult<Compiled> {
    version()?;
    let src = CString::new(source).map_err(|_| {
        other(
            DeviceErrorKind::Compile,
            "nvrtcCreateProgram",
            "source contains a NUL byte",
        )
    })?;
    let cname = CString::new(format!("{name}.cu")).expect("name has no NUL");
    let prog = result::create_program(&src, Some(&cname)).map_err(|e| {
        other(
            DeviceErrorKind::Compile,
            "nvrtcCreateProgram",
            format!("{e:?}"),
        )
    })?;
    let mut opts: Vec<String> = vec![format!("--gpu-architecture={arch}")];
    opts.extend(OPTIONS.iter().map(|s| s.to_string()));
    opts.extend(extra.iter().map(|s| s.to_string()));
    // SAFETY: `prog` is a live program; it is destroyed exactly once below.
    let out = unsafe {
        let status = result::compile_program(prog, &opts);
        let log = result::get_program_log(prog)
            .map(|l| {
                let bytes: Vec<u8> = l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .unwrap_or_default();
        let res = match status {
            Err(e) => Err(other(
                DeviceErrorKind::Compile,
                format!("nvrtcCompileProgram ({name} for {arch})"),
                format!("{e:?}\n{log}"),
            )),
            Ok(()) => {
                let mut size = 0usize;
                let cubin =
                    if sys::nvrtcGetCUBINSize(prog, &mut size) == sys::nvrtcResult::NVRTC_SUCCESS {
                        let mut buf = vec![0u8; size];
                        (sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut _)
                            == sys::nvrtcResult::NVRTC_SUCCESS)
                            .then_some(buf)
                    } else {
                        None
                    };
                match cubin {
                    Some(cubin) if !cubin.is_empty() => Ok(Compiled { cubin, log }),
                    _ => Err(other(
                        DeviceErrorKind::Compile,
                        "nvrtcGetCUBIN",
                        format!("no CUBIN for {arch} (a virtual architecture?)"),
                    )),
                }
            }
        };
        let _ = result::destroy_program(prog);
        res
    };
    out
}

/// The CUBIN of `source` for `arch`, from the on-disk cache
/// (`spgemm_core::kernel_cache`) or compiled (and stored).
///
/// # Errors
/// As [`compile`].
pub fn cached(name: &str, source: &str, arch: &str) -> DeviceResult<Vec<u8>> {
    let (major, minor) = version()?;
    let key = (source, arch, OPTIONS, major, minor);
    spgemm_core::kernel_cache::cached(&format!("{name}-{arch}"), key, "cubin", || {
        Ok(compile(name, source, arch, &[])?.cubin)
    })
}
