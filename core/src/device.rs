//! The device abstraction GPU backends implement (CUDA through cudarc, HIP
//! through hip-runtime-sys), after Ginkgo's executors and cudarc's layers.
//!
//! A backend only allocates, copies, compiles, launches and reports device
//! properties; the algorithm that drives it lives once in this crate. The CPU
//! backend does not implement this trait: it runs the row-wise algorithm
//! directly.
//!
//! Memory is untyped bytes on the device ([`DeviceBuffer`]); the driver in
//! `core` keeps the types. Work is ordered on streams; buffers are freed in
//! stream order when dropped, so a drop never synchronises the device
//! (OpSparse §4.6).

use std::fmt;

/// Who made the device: decides the kernel prelude (warp width, lane masks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vendor {
    /// NVIDIA (CUDA): warps of 32.
    Nvidia,
    /// AMD or Hygon DCU (HIP): wavefronts of 64 (or 32 on RDNA).
    Amd,
}

/// Which atomic operations the device performs natively on global and
/// shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicCapabilities {
    /// `atomicAdd` on `double` (NVIDIA sm_60+, all CDNA/GCN through CAS loops in HIP).
    pub f64_add: bool,
    /// 64-bit `atomicAdd`/`atomicMax` on unsigned integers.
    pub u64_add: bool,
}

/// What a device is: everything the kernel tables are derived from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProperties {
    /// Marketing name, e.g. `"NVIDIA H100 80GB HBM3"`.
    pub name: String,
    /// Vendor.
    pub vendor: Vendor,
    /// Compilation target, e.g. `"sm_90"` or `"gfx906"`.
    pub arch: String,
    /// Threads per warp / wavefront (32 or 64).
    pub warp_width: u32,
    /// Streaming multiprocessors / compute units.
    pub multiprocessor_count: u32,
    /// Largest block, in threads.
    pub max_threads_per_block: u32,
    /// Resident threads per multiprocessor at full occupancy.
    pub max_threads_per_multiprocessor: u32,
    /// Resident blocks per multiprocessor.
    pub max_blocks_per_multiprocessor: u32,
    /// Shared memory a block may use without opting in, bytes.
    pub shared_memory_per_block: usize,
    /// Shared memory a block may use after opting in, bytes (≥ the above).
    pub shared_memory_per_block_optin: usize,
    /// Shared memory of one multiprocessor, bytes.
    pub shared_memory_per_multiprocessor: usize,
    /// Shared memory the runtime reserves per resident block, bytes (1 KiB on sm_80+).
    pub reserved_shared_memory_per_block: usize,
    /// 32-bit registers of one multiprocessor.
    pub registers_per_multiprocessor: u32,
    /// Device memory, bytes.
    pub total_memory: usize,
    /// Native atomics.
    pub atomics: AtomicCapabilities,
}

/// What kind of failure a backend reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceErrorKind {
    /// The driver library (libcuda, libamdhip64) could not be loaded.
    NoDriver,
    /// The driver works but there is no (such) device.
    NoDevice,
    /// An allocation did not fit in device memory.
    OutOfMemory,
    /// Run-time compilation of a kernel failed.
    Compile,
    /// A kernel launch or its execution failed.
    Launch,
    /// Any other driver error.
    Other,
}

/// A failure reported by a device backend: which call failed and the
/// driver's own message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceError {
    /// The kind of failure.
    pub kind: DeviceErrorKind,
    /// `"cuda"` or `"hip"`.
    pub backend: &'static str,
    /// The call or step that failed, e.g. `"cuMemAllocAsync (C values, 96 MiB)"`.
    pub call: String,
    /// The driver's message.
    pub message: String,
}

impl DeviceError {
    /// An error of `kind` from `backend` (`"cuda"`, `"hip"`) in `call`.
    pub fn new(
        kind: DeviceErrorKind,
        backend: &'static str,
        call: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            backend,
            call: call.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for DeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} error in {}: {}",
            self.backend, self.call, self.message
        )
    }
}

impl std::error::Error for DeviceError {}

/// `Ok` when `bytes` bytes at `offset` lie within a `len`-byte buffer;
/// else an error of `backend` naming `what` (the copy or fill asked for).
///
/// # Errors
/// [`DeviceErrorKind::Other`] for a range past the end (or overflowing).
pub fn check_range(
    backend: &'static str,
    what: &str,
    len: usize,
    offset: usize,
    bytes: usize,
) -> DeviceResult<()> {
    if offset.checked_add(bytes).is_none_or(|end| end > len) {
        return Err(DeviceError::new(
            DeviceErrorKind::Other,
            backend,
            what,
            format!("{bytes} bytes at offset {offset} exceed a {len}-byte buffer"),
        ));
    }
    Ok(())
}

/// Result of a device call.
pub type DeviceResult<T> = Result<T, DeviceError>;

/// Device memory owned by a backend; freed (stream-ordered) on drop.
pub trait DeviceBuffer: Send + Sync {
    /// Device address of the first byte.
    fn device_ptr(&self) -> u64;
    /// Size in bytes.
    fn len(&self) -> usize;
    /// Whether the buffer holds no bytes.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Page-locked (pinned) host memory owned by a backend: the device copies
/// to and from it at the bus's full speed and without a staging copy of
/// the driver's own (hySpMM §3.3 overlaps such copies with compute).
pub trait PinnedBuffer: Send + Sync {
    /// The bytes (read them only when no copy into them is in flight).
    fn as_slice(&self) -> &[u8];
    /// The bytes, for filling before a copy to the device.
    fn as_mut_slice(&mut self) -> &mut [u8];
}

/// One kernel argument, passed by value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KernelArg {
    /// A device address (from [`DeviceBuffer::device_ptr`] plus an offset).
    Ptr(u64),
    /// `unsigned int`.
    U32(u32),
    /// `unsigned long long`.
    U64(u64),
}

impl KernelArg {
    /// The arguments as 8-byte slots for a driver's launch call (which
    /// takes a pointer to each parameter): a 32-bit parameter reads its
    /// slot's low half (little-endian).
    pub fn slots(args: &[KernelArg]) -> Vec<u64> {
        args.iter()
            .map(|a| match *a {
                KernelArg::Ptr(p) | KernelArg::U64(p) => p,
                KernelArg::U32(v) => v as u64,
            })
            .collect()
    }
}

/// Grid shape of one launch: 1-D grids and blocks are all this algorithm uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks in the grid (≥ 1).
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory, bytes.
    pub shared_bytes: u32,
}

/// Source of one module of kernels, specialised for a device by constants
/// in its text, and the names of the kernels to load from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelProgram {
    /// Module name, used in error messages and cache file names.
    pub name: String,
    /// Complete source text (prelude included).
    pub source: String,
    /// Kernels (`extern "C"` names) to load.
    pub kernels: Vec<String>,
}

/// A GPU as the SpGEMM driver in `core` sees it.
///
/// Every call is asynchronous with respect to the host unless it says
/// otherwise, and ordered within its stream.
pub trait Device: Send + Sync {
    /// An ordered queue of work.
    type Stream: Send + Sync;
    /// A point in a stream, for ordering between streams and timing.
    type Event: Send + Sync;
    /// Device memory.
    type Buffer: DeviceBuffer;
    /// A loaded kernel.
    type Kernel: Send + Sync;
    /// Page-locked host memory.
    type Pinned: PinnedBuffer;

    /// What the device is.
    fn properties(&self) -> &DeviceProperties;
    /// `(free, total)` device memory in bytes; `free` counts memory the
    /// backend's pool keeps for reuse as free.
    ///
    /// # Errors
    /// A driver failure.
    fn memory_info(&self) -> DeviceResult<(usize, usize)>;
    /// A new stream.
    ///
    /// # Errors
    /// A driver failure.
    fn create_stream(&self) -> DeviceResult<Self::Stream>;
    /// A new stream for copies that must overlap other work: it does not
    /// synchronize with the legacy default stream (non-blocking), on which
    /// device memory is freed, so a free does not wait for its copies nor
    /// its copies for a free. It orders against other streams only through
    /// events ([`Device::wait`]).
    ///
    /// # Errors
    /// A driver failure.
    fn create_copy_stream(&self) -> DeviceResult<Self::Stream>;
    /// Another library's stream (CuPy's or PyTorch's current stream), for
    /// ordering work with [`Device::record`] and [`Device::wait`]; never
    /// destroyed by us. Handle 0 is the legacy default stream.
    ///
    /// # Safety
    /// `handle` is a stream of this device in this backend's context (or
    /// 0) that outlives the returned value.
    unsafe fn borrow_stream(&self, handle: u64) -> Self::Stream;
    /// `bytes` of device memory, ordered on `stream` (from a pool: not a
    /// per-call cost). Contents are undefined.
    ///
    /// # Errors
    /// [`DeviceErrorKind::OutOfMemory`] when it does not fit.
    fn alloc(&self, stream: &Self::Stream, bytes: usize) -> DeviceResult<Self::Buffer>;
    /// `bytes` of device memory at `ptr` that the caller owns (another
    /// library's array, e.g. CuPy's or PyTorch's): used like an allocation
    /// of ours, never freed by us.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` is memory of this device, usable from this
    /// backend's context, that stays allocated while the buffer lives.
    unsafe fn borrow(&self, ptr: u64, bytes: usize) -> Self::Buffer;
    /// `bytes` of page-locked host memory (`cuMemHostAlloc`,
    /// `hipHostMalloc`); slow to allocate, so callers keep and reuse it.
    ///
    /// # Errors
    /// A driver failure (out of host memory among them).
    fn alloc_pinned(&self, bytes: usize) -> DeviceResult<Self::Pinned>;
    /// Starts copying `src[src_offset..src_offset + bytes]` to
    /// `dst[offset..]` on `stream` and returns at once.
    ///
    /// # Safety
    /// `src` must be neither written nor dropped until the copy is complete
    /// (an event recorded after it has completed, or the stream synchronised).
    ///
    /// # Errors
    /// A driver failure, or a range past the end of either buffer.
    unsafe fn copy_to_device_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Pinned,
        src_offset: usize,
        bytes: usize,
        dst: &Self::Buffer,
        offset: usize,
    ) -> DeviceResult<()>;
    /// Starts copying `bytes` bytes of `src` from `offset` into
    /// `dst[dst_offset..]` on `stream` and returns at once.
    ///
    /// # Safety
    /// `dst` must be neither read, written nor dropped until the copy is
    /// complete (an event recorded after it has completed, or the stream
    /// synchronised).
    ///
    /// # Errors
    /// A driver failure, or a range past the end of either buffer.
    unsafe fn copy_to_host_async(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        offset: usize,
        dst: &mut Self::Pinned,
        dst_offset: usize,
        bytes: usize,
    ) -> DeviceResult<()>;
    /// Blocks until the work before `event` on its stream is complete.
    ///
    /// # Errors
    /// A driver failure, including asynchronous kernel faults.
    fn sync_event(&self, event: &Self::Event) -> DeviceResult<()>;
    /// Copies `src` to `dst[offset..]`. The host slice may be reused once the
    /// call returns.
    ///
    /// # Errors
    /// A driver failure, or a copy past the end of `dst`.
    fn copy_to_device(
        &self,
        stream: &Self::Stream,
        src: &[u8],
        dst: &Self::Buffer,
        offset: usize,
    ) -> DeviceResult<()>;
    /// Copies `src[offset..offset + dst.len()]` to `dst`; returns when the
    /// copy (and all earlier work on `stream`) is complete.
    ///
    /// # Errors
    /// A driver failure (including earlier asynchronous kernel faults), or a
    /// copy past the end of `src`.
    fn copy_to_host(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        offset: usize,
        dst: &mut [u8],
    ) -> DeviceResult<()>;
    /// Copies `bytes` bytes from `src[src_offset..]` to `dst[dst_offset..]`
    /// on the device.
    ///
    /// # Errors
    /// A driver failure, or a range past the end of either buffer.
    fn copy_device(
        &self,
        stream: &Self::Stream,
        src: &Self::Buffer,
        src_offset: usize,
        dst: &Self::Buffer,
        dst_offset: usize,
        bytes: usize,
    ) -> DeviceResult<()>;
    /// Sets `bytes` bytes of `dst` from `offset` to zero.
    ///
    /// # Errors
    /// A driver failure, or a range past the end of `dst`.
    fn fill_zero(
        &self,
        stream: &Self::Stream,
        dst: &Self::Buffer,
        offset: usize,
        bytes: usize,
    ) -> DeviceResult<()>;
    /// Compiles (or loads from the on-disk cache) `program` for this device
    /// and returns its kernels in the order of `program.kernels`.
    ///
    /// # Errors
    /// [`DeviceErrorKind::Compile`] with the compiler log.
    fn load(&self, program: &KernelProgram) -> DeviceResult<Vec<Self::Kernel>>;
    /// Launches `kernel` on `stream`.
    ///
    /// # Safety
    /// `args` must match the kernel's parameter list in number, order and
    /// type; every pointer must address live device memory large enough for
    /// every access the kernel makes with the other arguments; the buffers
    /// must outlive the launch's completion on `stream`.
    ///
    /// # Errors
    /// [`DeviceErrorKind::Launch`] if the launch is refused.
    unsafe fn launch(
        &self,
        stream: &Self::Stream,
        kernel: &Self::Kernel,
        shape: LaunchShape,
        args: &[KernelArg],
    ) -> DeviceResult<()>;
    /// Records an event on `stream`.
    ///
    /// # Errors
    /// A driver failure.
    fn record(&self, stream: &Self::Stream) -> DeviceResult<Self::Event>;
    /// Makes `stream` wait for `event`.
    ///
    /// # Errors
    /// A driver failure.
    fn wait(&self, stream: &Self::Stream, event: &Self::Event) -> DeviceResult<()>;
    /// Milliseconds between two completed events (waits for `end`).
    ///
    /// # Errors
    /// A driver failure.
    fn elapsed_ms(&self, start: &Self::Event, end: &Self::Event) -> DeviceResult<f32>;
    /// Blocks until all work on `stream` is complete.
    ///
    /// # Errors
    /// A driver failure, including asynchronous kernel faults.
    fn synchronize(&self, stream: &Self::Stream) -> DeviceResult<()>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_past_the_end_or_overflowing_are_errors_naming_the_call() {
        assert!(check_range("cuda", "copy", 16, 8, 8).is_ok());
        let e = check_range("hip", "hipMemcpyDtoHAsync", 16, 9, 8).unwrap_err();
        assert_eq!(e.backend, "hip");
        assert!(e.to_string().contains("hipMemcpyDtoHAsync"), "{e}");
        assert!(check_range("cuda", "fill", 16, usize::MAX, 2).is_err());
    }

    #[test]
    fn kernel_arguments_fill_eight_byte_slots() {
        let slots = KernelArg::slots(&[
            KernelArg::Ptr(1 << 40),
            KernelArg::U32(7),
            KernelArg::U64(9),
        ]);
        assert_eq!(slots, vec![1 << 40, 7, 9]);
    }
}
