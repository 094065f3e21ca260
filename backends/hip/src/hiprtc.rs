//! hiprtc, the HIP run-time compiler, loaded from libamdhip64 at run time
//! and declared by hand like the runtime (`library.rs`; the few
//! functions spgemm needs; hip-runtime-sys does not bind hiprtc). Layered
//! like cudarc: raw symbols, then calls that return `Result`, then
//! [`compile`].
//!
//! Only architectures from [`VALIDATED_ARCHS`] are passed to hiprtc: given
//! an unknown one, hiprtc aborts the whole process instead of failing.

use crate::runtime::err;
use spgemm_core::device::{DeviceErrorKind, DeviceResult};
use std::ffi::{c_char, c_int, c_void, CString};

/// Architectures known to compile with hiprtc (ROCm 5.2 and later).
pub const VALIDATED_ARCHS: [&str; 6] =
    ["gfx906", "gfx908", "gfx90a", "gfx940", "gfx1030", "gfx1100"];

/// Options every program is compiled with (besides the architecture).
pub const OPTIONS: [&str; 2] = ["-O3", "-std=c++17"];

/// The library that carries hiprtc in ROCm 5.
pub const LIBRARIES: [&str; 2] = ["libamdhip64.so", "libamdhip64.so.5"];

type Program = *mut c_void;

/// Every symbol [`compile`] loads, for checks against the library.
pub const SYMBOLS: &[&str] = Hiprtc::SYMBOLS;

crate::library::dynamic_library! {
    /// hiprtc's entry points in the loaded library.
    struct Hiprtc from LIBRARIES;
    create = "hiprtcCreateProgram": fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int;
    compile = "hiprtcCompileProgram": fn(Program, c_int, *const *const c_char) -> c_int;
    log_size = "hiprtcGetProgramLogSize": fn(Program, *mut usize) -> c_int;
    log = "hiprtcGetProgramLog": fn(Program, *mut c_char) -> c_int;
    code_size = "hiprtcGetCodeSize": fn(Program, *mut usize) -> c_int;
    code = "hiprtcGetCode": fn(Program, *mut c_char) -> c_int;
    destroy = "hiprtcDestroyProgram": fn(*mut Program) -> c_int;
    error_string = "hiprtcGetErrorString": fn(c_int) -> *const c_char;
}

impl Hiprtc {
    /// The library, loaded.
    ///
    /// # Errors
    /// [`DeviceErrorKind::NoDriver`] naming the libraries tried or the
    /// missing symbol.
    fn open() -> DeviceResult<Self> {
        Self::load().map_err(|e| err(DeviceErrorKind::NoDriver, "loading hiprtc", e))
    }

    fn check(&self, call: &str, status: c_int) -> DeviceResult<()> {
        if status == 0 {
            return Ok(());
        }
        // SAFETY: hiprtcGetErrorString returns a static string for any code
        // (an "unknown" one for values it does not know), or null.
        let text = unsafe {
            let p = (self.error_string)(status);
            if p.is_null() {
                format!("hiprtc status {status}")
            } else {
                std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        Err(err(DeviceErrorKind::Compile, call, text))
    }
}

/// Whether hiprtc can be loaded.
pub fn present() -> bool {
    Hiprtc::open().is_ok()
}

/// A compiled code object (an AMDGPU ELF) and the compiler's log.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The code object for the architecture.
    pub code: Vec<u8>,
    /// Compiler log.
    pub log: String,
}

/// Compiles `source` for `arch` with hiprtc (`-O3`, C++17).
///
/// # Errors
/// [`DeviceErrorKind::Compile`] for an architecture outside
/// [`VALIDATED_ARCHS`] or a failed compilation (with the log);
/// [`DeviceErrorKind::NoDriver`] without libamdhip64.
pub fn compile(name: &str, source: &str, arch: &str) -> DeviceResult<Compiled> {
    if !VALIDATED_ARCHS.contains(&arch) {
        return Err(err(
            DeviceErrorKind::Compile,
            "hiprtcCompileProgram",
            format!("architecture {arch} is not in the validated list {VALIDATED_ARCHS:?}"),
        ));
    }
    let rtc = Hiprtc::open()?;
    let src = CString::new(source).map_err(|_| {
        err(
            DeviceErrorKind::Compile,
            "hiprtcCreateProgram",
            "source contains a NUL byte",
        )
    })?;
    let cname = CString::new(format!("{name}.hip")).map_err(|_| {
        err(
            DeviceErrorKind::Compile,
            "hiprtcCreateProgram",
            "name contains a NUL byte",
        )
    })?;
    let opts: Vec<CString> = std::iter::once(format!("--gpu-architecture={arch}"))
        .chain(OPTIONS.iter().map(|o| o.to_string()))
        .map(|o| CString::new(o).expect("options have no NUL"))
        .collect();
    let ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    let mut prog: Program = std::ptr::null_mut();
    // SAFETY: every pointer passed lives across the calls; the program is
    // destroyed exactly once below; buffers are sized by the size queries.
    unsafe {
        rtc.check(
            "hiprtcCreateProgram",
            (rtc.create)(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            ),
        )?;
        let status = (rtc.compile)(prog, ptrs.len() as c_int, ptrs.as_ptr());
        let mut n = 0usize;
        let log = if (rtc.log_size)(prog, &mut n) == 0 && n > 0 {
            let mut buf = vec![0u8; n];
            (rtc.log)(prog, buf.as_mut_ptr() as *mut c_char);
            String::from_utf8_lossy(&buf)
                .trim_end_matches('\0')
                .to_string()
        } else {
            String::new()
        };
        let result = rtc
            .check(&format!("hiprtcCompileProgram ({name} for {arch})"), status)
            .map_err(|mut e| {
                e.message = format!("{}\n{log}", e.message);
                e
            });
        let code = result.and_then(|()| {
            let mut size = 0usize;
            rtc.check("hiprtcGetCodeSize", (rtc.code_size)(prog, &mut size))?;
            let mut code = vec![0u8; size];
            rtc.check(
                "hiprtcGetCode",
                (rtc.code)(prog, code.as_mut_ptr() as *mut c_char),
            )?;
            Ok(code)
        });
        (rtc.destroy)(&mut prog);
        Ok(Compiled { code: code?, log })
    }
}

/// The code object of `source` for `arch`, from the on-disk cache
/// (`spgemm_core::kernel_cache`; key: source, architecture, options and the
/// HIP runtime version) or compiled (and stored).
///
/// # Errors
/// As [`compile`]; a runtime that cannot be loaded.
pub fn cached(name: &str, source: &str, arch: &str) -> DeviceResult<Vec<u8>> {
    let api = crate::runtime::api()?;
    let mut version: c_int = 0;
    // SAFETY: a live out-pointer.
    crate::runtime::check(api, "hipRuntimeGetVersion", unsafe {
        (api.runtime_get_version)(&mut version)
    })?;
    let key = (source, arch, OPTIONS, version);
    spgemm_core::kernel_cache::cached(&format!("{name}-{arch}"), key, "hsaco", || {
        Ok(compile(name, source, arch)?.code)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn unknown_architectures_are_refused_before_hiprtc_sees_them() {
        let e = super::compile("x", "extern \"C\" __global__ void k() {}", "gfx9999").unwrap_err();
        assert!(e.to_string().contains("validated list"), "{e}");
    }
}
