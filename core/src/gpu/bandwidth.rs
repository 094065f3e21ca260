//! What the hardware moves: the bus through pinned memory (the bound of
//! a host-to-host product) and device memory (the bandwidth floor of a
//! product on the device), each measured with device events.

use super::engine::GpuEngine;
use crate::device::{Device, PinnedBuffer};
use crate::error::Result;

impl<D: Device> GpuEngine<D> {
    /// The bus's bandwidth through pinned memory, bytes per second, host to
    /// device and device to host: 256 MiB copied each way, four times,
    /// timed by device events. The bound a host-to-host product is measured
    /// against (`spgemm bench --whole-job`).
    ///
    /// # Errors
    /// Device errors (out of device or pinned host memory among them).
    pub fn pinned_bandwidth(&self) -> Result<(f64, f64)> {
        const BYTES: usize = 256 << 20;
        const REPS: usize = 4;
        let dev = &self.device;
        let s = dev.create_stream()?;
        let buf = dev.alloc(&s, BYTES)?;
        let mut pinned = dev.alloc_pinned(BYTES)?;
        pinned.as_mut_slice().fill(1);
        let mut rate = |up: bool| -> Result<f64> {
            let start = dev.record(&s)?;
            for _ in 0..REPS {
                // SAFETY: the stream is waited for (through `end`) before
                // `pinned` is touched again or dropped.
                unsafe {
                    if up {
                        dev.copy_to_device_async(&s, &pinned, 0, BYTES, &buf, 0)?;
                    } else {
                        dev.copy_to_host_async(&s, &buf, 0, &mut pinned, 0, BYTES)?;
                    }
                }
            }
            let end = dev.record(&s)?;
            let ms = dev.elapsed_ms(&start, &end)? as f64;
            Ok((REPS * BYTES) as f64 / (ms.max(1e-6) / 1e3))
        };
        let r = rate(true).and_then(|up| Ok((up, rate(false)?)));
        dev.synchronize(&s)?;
        r
    }

    /// The device memory's bandwidth, bytes per second: a device-to-device
    /// copy of 256 MiB, four times, timed by device events, each copy
    /// counted as reading and writing its bytes. The bandwidth floor of a
    /// product (`spgemm bench`, [`crate::stats::bandwidth_floor_bytes`])
    /// is measured against it.
    ///
    /// # Errors
    /// Device errors (out of device memory among them).
    pub fn memory_bandwidth(&self) -> Result<f64> {
        const BYTES: usize = 256 << 20;
        const REPS: usize = 4;
        let dev = &self.device;
        let s = dev.create_stream()?;
        let (src, dst) = (dev.alloc(&s, BYTES)?, dev.alloc(&s, BYTES)?);
        dev.copy_device(&s, &src, 0, &dst, 0, BYTES)?;
        let start = dev.record(&s)?;
        for _ in 0..REPS {
            dev.copy_device(&s, &src, 0, &dst, 0, BYTES)?;
        }
        let end = dev.record(&s)?;
        dev.synchronize(&s)?;
        let ms = dev.elapsed_ms(&start, &end)? as f64;
        Ok((2 * REPS * BYTES) as f64 / (ms.max(1e-6) / 1e3))
    }
}
