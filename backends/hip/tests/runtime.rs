//! The HIP runtime layer on a machine without an AMD GPU (CI, and every
//! machine the authors had): opening a device is a clear error, never a
//! panic or an abort. With a device present and `SPGEMM_REQUIRE_GPU=1`
//! the device must open and report a validated architecture instead.

use spgemm_core::device::{Device, DeviceErrorKind};

#[test]
fn opening_a_device_is_a_clear_error_or_a_validated_device() {
    let required = std::env::var("SPGEMM_REQUIRE_GPU").is_ok_and(|v| v == "1");
    match spgemm_hip::HipDevice::new(0) {
        Ok(d) => {
            let p = d.properties();
            assert!(
                spgemm_hip::hiprtc::VALIDATED_ARCHS.contains(&p.arch.as_str()),
                "{p:?}"
            );
            assert!(p.warp_width == 32 || p.warp_width == 64, "{p:?}");
        }
        Err(e) => {
            assert!(!required, "SPGEMM_REQUIRE_GPU=1 but: {e}");
            assert!(
                matches!(
                    e.kind,
                    DeviceErrorKind::NoDriver | DeviceErrorKind::NoDevice
                ),
                "{e:?}"
            );
            assert_eq!(e.backend, "hip");
            let text = e.to_string();
            assert!(!text.is_empty());
            eprintln!("SKIPPED device checks: {text}");
        }
    }
}

#[test]
fn a_device_past_the_count_is_no_device() {
    if let Err(e) = spgemm_hip::HipDevice::new(1 << 20) {
        assert!(
            matches!(
                e.kind,
                DeviceErrorKind::NoDriver | DeviceErrorKind::NoDevice
            ),
            "{e:?}"
        );
    } else {
        panic!("device 2^20 opened");
    }
}
