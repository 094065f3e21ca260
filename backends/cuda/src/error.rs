//! Converting driver and NVRTC status codes into `DeviceError`s that carry
//! the failing call and the driver's own message.

use cudarc::driver::{result::DriverError, sys};
use spgemm_core::device::{DeviceError, DeviceErrorKind};

/// A `DeviceError` for a failed driver call.
pub(crate) fn driver(call: impl Into<String>, e: DriverError) -> DeviceError {
    let kind = match e.0 {
        sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => DeviceErrorKind::OutOfMemory,
        sys::CUresult::CUDA_ERROR_NO_DEVICE | sys::CUresult::CUDA_ERROR_INVALID_DEVICE => {
            DeviceErrorKind::NoDevice
        }
        sys::CUresult::CUDA_ERROR_LAUNCH_FAILED
        | sys::CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
        | sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
        | sys::CUresult::CUDA_ERROR_INVALID_VALUE => DeviceErrorKind::Launch,
        _ => DeviceErrorKind::Other,
    };
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let text = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    DeviceError {
        kind,
        backend: "cuda",
        call: call.into(),
        message: format!("{name}: {text}"),
    }
}

/// A `DeviceError` of kind `kind` with a message of ours.
pub(crate) fn other(
    kind: DeviceErrorKind,
    call: impl Into<String>,
    message: impl Into<String>,
) -> DeviceError {
    DeviceError::new(kind, "cuda", call, message)
}
