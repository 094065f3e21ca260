//! Typed views of device buffers and the accounting of device memory a
//! product uses beyond its inputs.

use super::kernels::DevicePtr;
use crate::device::{Device, DeviceBuffer};
use crate::error::Result;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `len` elements of `T` in device memory.
pub struct DeviceArray<D: Device, T> {
    pub(crate) buf: Option<D::Buffer>,
    pub(crate) len: usize,
    _t: PhantomData<T>,
}

impl<D: Device, T: bytemuck::Pod> DeviceArray<D, T> {
    /// An uninitialised array of `len` elements on `stream`.
    pub(crate) fn alloc(
        dev: &D,
        stream: &D::Stream,
        len: usize,
        what: &str,
        usage: &Usage,
    ) -> Result<Self> {
        let bytes = len * std::mem::size_of::<T>();
        let buf = if bytes == 0 {
            None
        } else {
            Some(dev.alloc(stream, bytes).map_err(|mut e| {
                e.call = format!("{} ({what}, {bytes} bytes)", e.call);
                e
            })?)
        };
        usage.add(bytes);
        Ok(Self {
            buf,
            len,
            _t: PhantomData,
        })
    }

    /// `len` elements at `ptr` that the caller owns ([`Device::borrow`]):
    /// never freed, counted toward no product's memory.
    ///
    /// # Safety
    /// As [`Device::borrow`], for `len` elements of `T`.
    pub(crate) unsafe fn borrowed(dev: &D, ptr: u64, len: usize) -> Self {
        let bytes = len * std::mem::size_of::<T>();
        Self {
            // SAFETY: the caller's guarantee.
            buf: (bytes > 0).then(|| unsafe { dev.borrow(ptr, bytes) }),
            len,
            _t: PhantomData,
        }
    }

    /// Uploads `host`.
    pub(crate) fn from_host(
        dev: &D,
        stream: &D::Stream,
        host: &[T],
        what: &str,
        usage: &Usage,
    ) -> Result<Self> {
        let a = Self::alloc(dev, stream, host.len(), what, usage)?;
        if let Some(b) = &a.buf {
            dev.copy_to_device(stream, bytemuck::cast_slice(host), b, 0)?;
        }
        Ok(a)
    }

    /// Shortens the array to its first `len` elements (no more than it
    /// has). The buffer keeps its size, and the product's memory its
    /// count, until the array is dropped.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Device address of element `i` (0 for an empty array).
    pub(crate) fn ptr_at(&self, i: usize) -> u64 {
        self.buf.as_ref().map_or(0, |b| {
            b.device_ptr() + (i * std::mem::size_of::<T>()) as u64
        })
    }

    /// Device address of the array, as a kernel argument.
    pub(crate) fn ptr(&self) -> DevicePtr {
        DevicePtr(self.ptr_at(0))
    }

    /// Device address of element `i`, as a kernel argument.
    pub(crate) fn ptr_to(&self, i: usize) -> DevicePtr {
        DevicePtr(self.ptr_at(i))
    }

    /// Copies elements `start..start + out.len()` to `out` (waits for `stream`).
    pub(crate) fn read(
        &self,
        dev: &D,
        stream: &D::Stream,
        start: usize,
        out: &mut [T],
    ) -> Result<()> {
        if out.is_empty() {
            return Ok(());
        }
        let b = self.buf.as_ref().expect("non-empty read of an empty array");
        dev.copy_to_host(
            stream,
            b,
            start * std::mem::size_of::<T>(),
            bytemuck::cast_slice_mut(out),
        )?;
        Ok(())
    }

    /// Zeroes elements `start..start + n`.
    pub(crate) fn zero(&self, dev: &D, stream: &D::Stream, start: usize, n: usize) -> Result<()> {
        if let (Some(b), true) = (&self.buf, n > 0) {
            let s = std::mem::size_of::<T>();
            dev.fill_zero(stream, b, start * s, n * s)?;
        }
        Ok(())
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Device address of the first element (0 for an empty array), valid
    /// while the array lives: for handing it to another library.
    pub fn device_ptr(&self) -> u64 {
        self.ptr_at(0)
    }
}

/// Device bytes in use by one product (current and peak).
#[derive(Default)]
pub struct Usage {
    current: AtomicUsize,
    peak: AtomicUsize,
}

impl Usage {
    pub(crate) fn add(&self, bytes: usize) {
        let now = self.current.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
    }
    pub(crate) fn sub(&self, bytes: usize) {
        self.current.fetch_sub(bytes, Ordering::Relaxed);
    }
    /// Largest number of bytes in use at once.
    pub fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }
}
