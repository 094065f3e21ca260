//! The HIP runtime, loaded from libamdhip64 at run time and declared by
//! hand: the functions spgemm calls and the constants it passes, with the
//! values of ROCm's `hip_runtime_api.h` (checked against the installed
//! header by `tests/declarations.rs`), declared like every library this
//! backend loads (`library.rs`). Layered like cudarc: raw entry
//! points ([`Api`]), then [`check`], which turns a status into a
//! `DeviceError` without assuming the status is one this file knows.
//!
//! Why not `hip-runtime-sys`: its build script needs the ROCm headers and
//! links libamdhip64 at build time, and `cargo build --features hip` must
//! succeed on machines without ROCm (as `--features cuda` does through
//! cudarc's dynamic loading).

use spgemm_core::device::{DeviceError, DeviceErrorKind, DeviceResult};
use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// `hipError_t` (a C enum: an `int`); kept as an integer so that values
/// this file does not name are still safe to hold.
pub type Status = c_int;
/// `hipStream_t`.
pub type Stream = *mut c_void;
/// `hipEvent_t`.
pub type Event = *mut c_void;
/// `hipModule_t`.
pub type Module = *mut c_void;
/// `hipFunction_t`.
pub type Function = *mut c_void;
/// `hipMemPool_t`.
pub type MemPool = *mut c_void;
/// `hipDeviceptr_t`.
pub type DevicePtr = *mut c_void;

/// `hipStreamNonBlocking`: a stream that does not synchronize with the
/// null stream.
pub const STREAM_NON_BLOCKING: c_uint = 1;

/// `hipError_t` values spgemm tells apart.
pub mod status {
    use super::Status;
    /// `hipSuccess`.
    pub const SUCCESS: Status = 0;
    /// `hipErrorInvalidValue`.
    pub const INVALID_VALUE: Status = 1;
    /// `hipErrorOutOfMemory`.
    pub const OUT_OF_MEMORY: Status = 2;
    /// `hipErrorNotInitialized`.
    pub const NOT_INITIALIZED: Status = 3;
    /// `hipErrorInsufficientDriver`.
    pub const INSUFFICIENT_DRIVER: Status = 35;
    /// `hipErrorNoDevice`.
    pub const NO_DEVICE: Status = 100;
    /// `hipErrorInvalidDevice`.
    pub const INVALID_DEVICE: Status = 101;
    /// `hipErrorIllegalAddress`.
    pub const ILLEGAL_ADDRESS: Status = 700;
    /// `hipErrorLaunchOutOfResources`.
    pub const LAUNCH_OUT_OF_RESOURCES: Status = 701;
    /// `hipErrorLaunchFailure`.
    pub const LAUNCH_FAILURE: Status = 719;
}

/// `hipDeviceAttribute_t` values spgemm queries.
pub mod attribute {
    /// `hipDeviceAttributeComputeCapabilityMajor`.
    pub const COMPUTE_CAPABILITY_MAJOR: i32 = 23;
    /// `hipDeviceAttributeMaxBlocksPerMultiProcessor`.
    pub const MAX_BLOCKS_PER_MULTIPROCESSOR: i32 = 25;
    /// `hipDeviceAttributeMaxThreadsPerBlock`.
    pub const MAX_THREADS_PER_BLOCK: i32 = 56;
    /// `hipDeviceAttributeMaxThreadsPerMultiProcessor`.
    pub const MAX_THREADS_PER_MULTIPROCESSOR: i32 = 57;
    /// `hipDeviceAttributeComputeCapabilityMinor`.
    pub const COMPUTE_CAPABILITY_MINOR: i32 = 61;
    /// `hipDeviceAttributeMultiprocessorCount`.
    pub const MULTIPROCESSOR_COUNT: i32 = 63;
    /// `hipDeviceAttributeMaxRegistersPerMultiprocessor`.
    pub const MAX_REGISTERS_PER_MULTIPROCESSOR: i32 = 72;
    /// `hipDeviceAttributeMaxSharedMemoryPerBlock`.
    pub const MAX_SHARED_MEMORY_PER_BLOCK: i32 = 74;
    /// `hipDeviceAttributeWarpSize`.
    pub const WARP_SIZE: i32 = 87;
    /// `hipDeviceAttributeMemoryPoolsSupported`.
    pub const MEMORY_POOLS_SUPPORTED: i32 = 88;
    /// `hipDeviceAttributeMaxSharedMemoryPerMultiprocessor` (AMD specific).
    pub const MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: i32 = 10002;
}

/// `hipMemPoolAttr` values.
pub mod pool_attribute {
    /// `hipMemPoolAttrReleaseThreshold` (u64).
    pub const RELEASE_THRESHOLD: i32 = 4;
    /// `hipMemPoolAttrReservedMemCurrent` (u64).
    pub const RESERVED_MEM_CURRENT: i32 = 5;
    /// `hipMemPoolAttrUsedMemCurrent` (u64).
    pub const USED_MEM_CURRENT: i32 = 7;
}

/// The library names tried, in order (ROCm 5, 6 and the unversioned link).
pub const LIBRARIES: [&str; 3] = ["libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"];

/// Every symbol [`Api`] loads, for checks against the library.
pub const SYMBOLS: &[&str] = Api::SYMBOLS;

crate::library::dynamic_library! {
    /// The runtime's entry points, loaded once per process.
    pub struct Api from LIBRARIES;
    init = "hipInit": fn(c_uint) -> Status;
    runtime_get_version = "hipRuntimeGetVersion": fn(*mut c_int) -> Status;
    get_device_count = "hipGetDeviceCount": fn(*mut c_int) -> Status;
    set_device = "hipSetDevice": fn(c_int) -> Status;
    device_get_attribute = "hipDeviceGetAttribute": fn(*mut c_int, c_int, c_int) -> Status;
    device_get_name = "hipDeviceGetName": fn(*mut c_char, c_int, c_int) -> Status;
    get_device_properties = "hipGetDeviceProperties": fn(*mut c_void, c_int) -> Status;
    mem_get_info = "hipMemGetInfo": fn(*mut usize, *mut usize) -> Status;
    stream_create_with_flags = "hipStreamCreateWithFlags": fn(*mut Stream, c_uint) -> Status;
    stream_destroy = "hipStreamDestroy": fn(Stream) -> Status;
    stream_synchronize = "hipStreamSynchronize": fn(Stream) -> Status;
    stream_wait_event = "hipStreamWaitEvent": fn(Stream, Event, c_uint) -> Status;
    event_create_with_flags = "hipEventCreateWithFlags": fn(*mut Event, c_uint) -> Status;
    event_record = "hipEventRecord": fn(Event, Stream) -> Status;
    event_synchronize = "hipEventSynchronize": fn(Event) -> Status;
    event_elapsed_time = "hipEventElapsedTime": fn(*mut f32, Event, Event) -> Status;
    event_destroy = "hipEventDestroy": fn(Event) -> Status;
    malloc = "hipMalloc": fn(*mut DevicePtr, usize) -> Status;
    free = "hipFree": fn(DevicePtr) -> Status;
    malloc_async = "hipMallocAsync": fn(*mut DevicePtr, usize, Stream) -> Status;
    free_async = "hipFreeAsync": fn(DevicePtr, Stream) -> Status;
    device_get_default_mem_pool = "hipDeviceGetDefaultMemPool": fn(*mut MemPool, c_int) -> Status;
    mem_pool_set_attribute = "hipMemPoolSetAttribute": fn(MemPool, c_int, *mut c_void) -> Status;
    mem_pool_get_attribute = "hipMemPoolGetAttribute": fn(MemPool, c_int, *mut c_void) -> Status;
    host_malloc = "hipHostMalloc": fn(*mut *mut c_void, usize, c_uint) -> Status;
    host_free = "hipHostFree": fn(*mut c_void) -> Status;
    memcpy_htod_async = "hipMemcpyHtoDAsync": fn(DevicePtr, *mut c_void, usize, Stream) -> Status;
    memcpy_dtoh_async = "hipMemcpyDtoHAsync": fn(*mut c_void, DevicePtr, usize, Stream) -> Status;
    memcpy_dtod_async = "hipMemcpyDtoDAsync": fn(DevicePtr, DevicePtr, usize, Stream) -> Status;
    memset_d8_async = "hipMemsetD8Async": fn(DevicePtr, u8, usize, Stream) -> Status;
    module_load_data = "hipModuleLoadData": fn(*mut Module, *const c_void) -> Status;
    module_get_function = "hipModuleGetFunction": fn(*mut Function, Module, *const c_char) -> Status;
    module_unload = "hipModuleUnload": fn(Module) -> Status;
    module_launch_kernel = "hipModuleLaunchKernel": fn(
        Function, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Stream,
        *mut *mut c_void, *mut *mut c_void
    ) -> Status;
    get_error_name = "hipGetErrorName": fn(Status) -> *const c_char;
    get_error_string = "hipGetErrorString": fn(Status) -> *const c_char;
}

/// A `DeviceError` of the HIP backend.
pub(crate) fn err(
    kind: DeviceErrorKind,
    call: impl Into<String>,
    message: impl Into<String>,
) -> DeviceError {
    DeviceError::new(kind, "hip", call, message)
}

/// The runtime, loaded on first use.
///
/// # Errors
/// [`DeviceErrorKind::NoDriver`] naming the libraries tried or the missing
/// symbol.
pub fn api() -> DeviceResult<&'static Api> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(Api::load)
        .as_ref()
        .map_err(|e| DeviceError {
            kind: DeviceErrorKind::NoDriver,
            backend: "hip",
            call: "loading the HIP runtime".into(),
            message: e.clone(),
        })
}

/// The kind of failure a status means.
pub fn kind_of(s: Status) -> DeviceErrorKind {
    match s {
        status::OUT_OF_MEMORY => DeviceErrorKind::OutOfMemory,
        status::NO_DEVICE | status::INVALID_DEVICE => DeviceErrorKind::NoDevice,
        status::NOT_INITIALIZED | status::INSUFFICIENT_DRIVER => DeviceErrorKind::NoDriver,
        status::LAUNCH_FAILURE
        | status::LAUNCH_OUT_OF_RESOURCES
        | status::ILLEGAL_ADDRESS
        | status::INVALID_VALUE => DeviceErrorKind::Launch,
        _ => DeviceErrorKind::Other,
    }
}

/// `Ok` for `hipSuccess`, else the error for `call` with the runtime's
/// name and description of the status.
pub fn check(api: &Api, call: impl Into<String>, s: Status) -> DeviceResult<()> {
    if s == status::SUCCESS {
        return Ok(());
    }
    let text = |p: *const c_char| {
        if p.is_null() {
            String::new()
        } else {
            // SAFETY: the runtime returns static NUL-terminated strings
            // (an "unknown" one for statuses it does not know).
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        }
    };
    // SAFETY: both functions accept any status value.
    let (name, description) = unsafe {
        (
            text((api.get_error_name)(s)),
            text((api.get_error_string)(s)),
        )
    };
    Err(err(
        kind_of(s),
        call,
        format!("{name} ({s}): {description}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_kinds_and_unknown_ones_are_other() {
        assert_eq!(kind_of(status::OUT_OF_MEMORY), DeviceErrorKind::OutOfMemory);
        assert_eq!(kind_of(status::NO_DEVICE), DeviceErrorKind::NoDevice);
        assert_eq!(kind_of(status::LAUNCH_FAILURE), DeviceErrorKind::Launch);
        assert_eq!(kind_of(123_456), DeviceErrorKind::Other);
        assert_eq!(kind_of(-1), DeviceErrorKind::Other);
    }
}
