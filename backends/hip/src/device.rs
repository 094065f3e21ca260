//! `Device` for AMD GPUs and Hygon DCUs on the HIP runtime ([`runtime`]):
//! RAII streams, events, device memory ([`Buffer`], stream-ordered from
//! the device's pool where the runtime has one), pinned host memory and
//! kernels compiled by hiprtc and cached on disk; the same names as the
//! CUDA backend's.
//!
//! The HIP runtime keeps a current device per host thread, so every call
//! selects this device first (`bind`).

use crate::hiprtc;
use crate::properties::{self, arch_in_properties, Attributes};
use crate::runtime::{self, api, attribute, check, err, pool_attribute, Api, DevicePtr, Status};
use spgemm_core::device::{
    Device, DeviceBuffer, DeviceErrorKind, DeviceProperties, DeviceResult, KernelArg,
    KernelProgram, LaunchShape, PinnedBuffer,
};
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::Arc;

/// One device as every handle of it needs it: the runtime, the ordinal,
/// its memory pool (when stream-ordered allocation is supported).
struct Context {
    api: &'static Api,
    ordinal: c_int,
    pool: Option<runtime::MemPool>,
}

// SAFETY: HIP handles may be used from any thread once the device is
// selected on it, which every use does first.
unsafe impl Send for Context {}
// SAFETY: as above.
unsafe impl Sync for Context {}

impl Context {
    fn bind(&self) -> DeviceResult<()> {
        // SAFETY: a device ordinal checked against the device count.
        check(self.api, "hipSetDevice", unsafe {
            (self.api.set_device)(self.ordinal)
        })
    }
    fn call(&self, what: impl Into<String>, s: Status) -> DeviceResult<()> {
        check(self.api, what, s)
    }
}

/// One AMD GPU or Hygon DCU.
pub struct HipDevice {
    ctx: Arc<Context>,
    props: DeviceProperties,
}

/// A HIP stream (blocking with respect to the null stream, on which
/// memory is freed, so a free waits for every stream's work).
/// Created by us (destroyed on drop), or another library's
/// (`Device::borrow_stream`, never destroyed by us).
pub struct Stream(runtime::Stream, Arc<Context>, bool);
// SAFETY: stream handles are usable from any thread.
unsafe impl Send for Stream {}
// SAFETY: as above; the runtime serialises work submitted to one stream.
unsafe impl Sync for Stream {}

impl Stream {
    /// The raw `hipStream_t`, for libraries that take one (rocSPARSE).
    pub fn raw(&self) -> runtime::Stream {
        self.0
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.2 {
            return;
        }
        let _ = self.1.bind();
        // SAFETY: created by hipStreamCreateWithFlags, destroyed once.
        let _ = unsafe { (self.1.api.stream_destroy)(self.0) };
    }
}

/// A HIP event (timing enabled).
pub struct Event(runtime::Event, Arc<Context>);
// SAFETY: event handles are usable from any thread.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Drop for Event {
    fn drop(&mut self) {
        let _ = self.1.bind();
        // SAFETY: created by hipEventCreateWithFlags, destroyed once.
        let _ = unsafe { (self.1.api.event_destroy)(self.0) };
    }
}

/// `len` bytes of device memory, freed (in stream order where the device
/// has a pool) on drop.
pub struct Buffer {
    ptr: DevicePtr,
    len: usize,
    ctx: Arc<Context>,
    /// Allocated by us (freed on drop), or borrowed (`Device::borrow`).
    owned: bool,
}
// SAFETY: a device address, usable from any thread.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

impl Drop for Buffer {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let (api, _) = (self.ctx.api, self.ctx.bind());
        // SAFETY: allocated by hipMallocAsync (pool) or hipMalloc, freed
        // once; the null stream orders the free after all earlier work.
        let _ = unsafe {
            match self.ctx.pool {
                Some(_) => (api.free_async)(self.ptr, std::ptr::null_mut()),
                None => (api.free)(self.ptr),
            }
        };
    }
}

impl DeviceBuffer for Buffer {
    fn device_ptr(&self) -> u64 {
        self.ptr as u64
    }
    fn len(&self) -> usize {
        self.len
    }
}

/// Page-locked host memory from `hipHostMalloc`.
pub struct Pinned {
    ptr: *mut u8,
    len: usize,
    ctx: Arc<Context>,
}
// SAFETY: plain host memory, owned; access goes through & / &mut.
unsafe impl Send for Pinned {}
// SAFETY: as above.
unsafe impl Sync for Pinned {}

impl PinnedBuffer for Pinned {
    fn as_slice(&self) -> &[u8] {
        // SAFETY: `len` bytes allocated at `ptr`, live while `self` is.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
    fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, borrowed uniquely.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        // SAFETY: allocated by hipHostMalloc, freed once.
        let _ = unsafe { (self.ctx.api.host_free)(self.ptr as *mut c_void) };
    }
}

/// A loaded code object, unloaded when its last function is dropped.
pub(crate) struct Module(runtime::Module, Arc<Context>);
// SAFETY: module handles are usable from any thread.
unsafe impl Send for Module {}
// SAFETY: as above.
unsafe impl Sync for Module {}

impl Drop for Module {
    fn drop(&mut self) {
        let _ = self.1.bind();
        // SAFETY: loaded by hipModuleLoadData, unloaded once, after every
        // function of it (each holds the Arc) is gone.
        let _ = unsafe { (self.1.api.module_unload)(self.0) };
    }
}

/// A compiled kernel (it keeps its code object loaded).
pub struct Kernel {
    f: runtime::Function,
    _module: Arc<Module>,
}
// SAFETY: function handles are usable from any thread.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

impl HipDevice {
    /// Opens device `ordinal`. The architecture comes from the runtime
    /// (`gcnArchName`), or from `$SPGEMM_HIP_ARCH` when set.
    ///
    /// # Errors
    /// [`DeviceErrorKind::NoDriver`] without libamdhip64;
    /// [`DeviceErrorKind::NoDevice`] when there is no such device
    /// (`hipErrorNoDevice` included); other runtime errors.
    pub fn new(ordinal: usize) -> DeviceResult<Self> {
        let api = api()?;
        // SAFETY: plain runtime calls with live out-pointers.
        unsafe {
            check(api, "hipInit", (api.init)(0))?;
            let mut count: c_int = 0;
            check(api, "hipGetDeviceCount", (api.get_device_count)(&mut count))?;
            if ordinal >= count as usize {
                return Err(err(
                    DeviceErrorKind::NoDevice,
                    "hipGetDeviceCount",
                    format!("device {ordinal} requested, {count} present"),
                ));
            }
        }
        let mut ctx = Context {
            api,
            ordinal: ordinal as c_int,
            pool: None,
        };
        ctx.bind()?;
        let attr = |a: i32| -> Option<i32> {
            let mut v: c_int = 0;
            // SAFETY: a valid device and a live out-pointer; attributes the
            // runtime does not know are refused with a status.
            let s = unsafe { (api.device_get_attribute)(&mut v, a, ctx.ordinal) };
            (s == runtime::status::SUCCESS).then_some(v)
        };
        let attributes = Attributes {
            warp_size: attr(attribute::WARP_SIZE),
            multiprocessors: attr(attribute::MULTIPROCESSOR_COUNT),
            max_threads_per_block: attr(attribute::MAX_THREADS_PER_BLOCK),
            max_threads_per_multiprocessor: attr(attribute::MAX_THREADS_PER_MULTIPROCESSOR),
            max_blocks_per_multiprocessor: attr(attribute::MAX_BLOCKS_PER_MULTIPROCESSOR),
            shared_per_block: attr(attribute::MAX_SHARED_MEMORY_PER_BLOCK),
            shared_per_multiprocessor: attr(attribute::MAX_SHARED_MEMORY_PER_MULTIPROCESSOR),
            registers_per_multiprocessor: attr(attribute::MAX_REGISTERS_PER_MULTIPROCESSOR),
        };
        let mut name = vec![0u8; 256];
        // SAFETY: the buffer holds `name.len()` bytes.
        ctx.call("hipDeviceGetName", unsafe {
            (api.device_get_name)(name.as_mut_ptr() as *mut c_char, 256, ctx.ordinal)
        })?;
        let name = String::from_utf8_lossy(&name[..name.iter().position(|&b| b == 0).unwrap_or(0)])
            .into_owned();
        let arch = match std::env::var("SPGEMM_HIP_ARCH") {
            Ok(a) => a,
            Err(_) => {
                // hipDeviceProp_t changed size across ROCm versions: a
                // buffer far larger than any, searched for gcnArchName.
                let mut buf = vec![0u8; 16 << 10];
                // SAFETY: the buffer is larger than every hipDeviceProp_t.
                ctx.call("hipGetDeviceProperties", unsafe {
                    (api.get_device_properties)(buf.as_mut_ptr() as *mut c_void, ctx.ordinal)
                })?;
                arch_in_properties(&buf).ok_or_else(|| {
                    err(
                        DeviceErrorKind::Other,
                        "hipGetDeviceProperties",
                        "no architecture name (gcnArchName) found; set SPGEMM_HIP_ARCH",
                    )
                })?
            }
        };
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: live out-pointers.
        ctx.call("hipMemGetInfo", unsafe {
            (api.mem_get_info)(&mut free, &mut total)
        })?;
        if attr(attribute::MEMORY_POOLS_SUPPORTED).unwrap_or(0) > 0 {
            let mut pool: runtime::MemPool = std::ptr::null_mut();
            // SAFETY: a valid device; the threshold attribute takes a u64.
            unsafe {
                ctx.call(
                    "hipDeviceGetDefaultMemPool",
                    (api.device_get_default_mem_pool)(&mut pool, ctx.ordinal),
                )?;
                // Keep freed memory in the pool: allocation is then not a
                // per-call cost.
                let mut threshold = u64::MAX;
                ctx.call(
                    "hipMemPoolSetAttribute(release threshold)",
                    (api.mem_pool_set_attribute)(
                        pool,
                        pool_attribute::RELEASE_THRESHOLD,
                        &mut threshold as *mut u64 as *mut c_void,
                    ),
                )?;
            }
            ctx.pool = Some(pool);
        }
        let props = properties::properties(name, &arch, &attributes, total);
        Ok(Self {
            ctx: Arc::new(ctx),
            props,
        })
    }

    fn bind(&self) -> DeviceResult<()> {
        self.ctx.bind()
    }

    /// Makes this device current on the calling thread, for libraries
    /// that use the current device (RCCL).
    ///
    /// # Errors
    /// A runtime failure.
    pub fn make_current(&self) -> DeviceResult<()> {
        self.bind()
    }

    fn check_range(what: &str, len: usize, offset: usize, bytes: usize) -> DeviceResult<()> {
        spgemm_core::device::check_range("hip", what, len, offset, bytes)
    }

    fn at(buf: &Buffer, offset: usize) -> DevicePtr {
        (buf.ptr as usize + offset) as DevicePtr
    }

    /// A pool attribute (u64).
    fn pool_attr(&self, pool: runtime::MemPool, a: i32) -> DeviceResult<u64> {
        let mut v = 0u64;
        // SAFETY: the device's default pool; the attribute is a u64.
        self.ctx.call("hipMemPoolGetAttribute", unsafe {
            (self.ctx.api.mem_pool_get_attribute)(pool, a, &mut v as *mut u64 as *mut c_void)
        })?;
        Ok(v)
    }
}

impl HipDevice {
    /// A stream with `hipStreamCreateWithFlags`'s `flags`.
    fn stream_with_flags(&self, flags: std::ffi::c_uint) -> DeviceResult<Stream> {
        self.bind()?;
        let mut s: runtime::Stream = std::ptr::null_mut();
        // SAFETY: a live out-pointer and a valid flag value.
        self.ctx.call("hipStreamCreateWithFlags", unsafe {
            (self.ctx.api.stream_create_with_flags)(&mut s, flags)
        })?;
        Ok(Stream(s, self.ctx.clone(), true))
    }
}

impl Device for HipDevice {
    type Stream = Stream;
    type Event = Event;
    type Buffer = Buffer;
    type Kernel = Kernel;
    type Pinned = Pinned;

    fn properties(&self) -> &DeviceProperties {
        &self.props
    }

    fn memory_info(&self) -> DeviceResult<(usize, usize)> {
        self.bind()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: live out-pointers.
        self.ctx.call("hipMemGetInfo", unsafe {
            (self.ctx.api.mem_get_info)(&mut free, &mut total)
        })?;
        // Memory the pool holds but no buffer uses is free to us as well.
        if let Some(pool) = self.ctx.pool {
            let reserved = self.pool_attr(pool, pool_attribute::RESERVED_MEM_CURRENT)?;
            let used = self.pool_attr(pool, pool_attribute::USED_MEM_CURRENT)?;
            let idle = usize::try_from(reserved.saturating_sub(used)).unwrap_or(usize::MAX);
            free = free.saturating_add(idle).min(total);
        }
        Ok((free, total))
    }

    fn create_stream(&self) -> DeviceResult<Stream> {
        self.stream_with_flags(0)
    }

    fn create_copy_stream(&self) -> DeviceResult<Stream> {
        self.stream_with_flags(runtime::STREAM_NON_BLOCKING)
    }

    unsafe fn borrow_stream(&self, handle: u64) -> Stream {
        Stream(handle as runtime::Stream, self.ctx.clone(), false)
    }

    fn alloc(&self, stream: &Stream, bytes: usize) -> DeviceResult<Buffer> {
        self.bind()?;
        let mut ptr: DevicePtr = std::ptr::null_mut();
        let api = self.ctx.api;
        // SAFETY: a live stream of this device and a live out-pointer.
        let (call, s) = unsafe {
            match self.ctx.pool {
                Some(_) => (
                    "hipMallocAsync",
                    (api.malloc_async)(&mut ptr, bytes.max(1), stream.0),
                ),
                None => ("hipMalloc", (api.malloc)(&mut ptr, bytes.max(1))),
            }
        };
        self.ctx.call(call, s)?;
        Ok(Buffer {
            ptr,
            len: bytes,
            ctx: self.ctx.clone(),
            owned: true,
        })
    }

    unsafe fn borrow(&self, ptr: u64, bytes: usize) -> Buffer {
        Buffer {
            ptr: ptr as DevicePtr,
            len: bytes,
            ctx: self.ctx.clone(),
            owned: false,
        }
    }

    fn alloc_pinned(&self, bytes: usize) -> DeviceResult<Pinned> {
        self.bind()?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: a live out-pointer; flags 0 = hipHostMallocDefault.
        self.ctx
            .call(format!("hipHostMalloc ({bytes} bytes)"), unsafe {
                (self.ctx.api.host_malloc)(&mut ptr, bytes.max(1), 0)
            })?;
        Ok(Pinned {
            ptr: ptr as *mut u8,
            len: bytes,
            ctx: self.ctx.clone(),
        })
    }

    unsafe fn copy_to_device_async(
        &self,
        stream: &Stream,
        src: &Pinned,
        src_offset: usize,
        bytes: usize,
        dst: &Buffer,
        offset: usize,
    ) -> DeviceResult<()> {
        Self::check_range(
            "hipMemcpyHtoDAsync (pinned source)",
            src.len,
            src_offset,
            bytes,
        )?;
        Self::check_range("hipMemcpyHtoDAsync", dst.len, offset, bytes)?;
        self.bind()?;
        // SAFETY: both ranges checked; the caller keeps `src` unchanged
        // until the copy completes.
        self.ctx.call("hipMemcpyHtoDAsync", unsafe {
            (self.ctx.api.memcpy_htod_async)(
                Self::at(dst, offset),
                src.ptr.add(src_offset) as *mut c_void,
                bytes,
                stream.0,
            )
        })
    }

    unsafe fn copy_to_host_async(
        &self,
        stream: &Stream,
        src: &Buffer,
        offset: usize,
        dst: &mut Pinned,
        dst_offset: usize,
        bytes: usize,
    ) -> DeviceResult<()> {
        Self::check_range("hipMemcpyDtoHAsync", src.len, offset, bytes)?;
        Self::check_range(
            "hipMemcpyDtoHAsync (pinned destination)",
            dst.len,
            dst_offset,
            bytes,
        )?;
        self.bind()?;
        // SAFETY: both ranges checked; the caller leaves `dst` alone until
        // the copy completes.
        self.ctx.call("hipMemcpyDtoHAsync", unsafe {
            (self.ctx.api.memcpy_dtoh_async)(
                dst.ptr.add(dst_offset) as *mut c_void,
                Self::at(src, offset),
                bytes,
                stream.0,
            )
        })
    }

    fn sync_event(&self, event: &Event) -> DeviceResult<()> {
        self.bind()?;
        // SAFETY: a recorded event.
        self.ctx.call("hipEventSynchronize", unsafe {
            (self.ctx.api.event_synchronize)(event.0)
        })
    }

    fn copy_to_device(
        &self,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        offset: usize,
    ) -> DeviceResult<()> {
        Self::check_range("hipMemcpyHtoDAsync", dst.len, offset, src.len())?;
        self.bind()?;
        let api = self.ctx.api;
        // SAFETY: range checked; the stream is synchronised before
        // returning, so `src` (pageable memory) may be reused afterwards.
        unsafe {
            self.ctx.call(
                "hipMemcpyHtoDAsync",
                (api.memcpy_htod_async)(
                    Self::at(dst, offset),
                    src.as_ptr() as *mut c_void,
                    src.len(),
                    stream.0,
                ),
            )?;
            self.ctx
                .call("hipStreamSynchronize", (api.stream_synchronize)(stream.0))
        }
    }

    fn copy_to_host(
        &self,
        stream: &Stream,
        src: &Buffer,
        offset: usize,
        dst: &mut [u8],
    ) -> DeviceResult<()> {
        Self::check_range("hipMemcpyDtoHAsync", src.len, offset, dst.len())?;
        self.bind()?;
        let api = self.ctx.api;
        // SAFETY: range checked; the stream is synchronised before `dst`
        // is used.
        unsafe {
            self.ctx.call(
                "hipMemcpyDtoHAsync",
                (api.memcpy_dtoh_async)(
                    dst.as_mut_ptr() as *mut c_void,
                    Self::at(src, offset),
                    dst.len(),
                    stream.0,
                ),
            )?;
            self.ctx
                .call("hipStreamSynchronize", (api.stream_synchronize)(stream.0))
        }
    }

    fn copy_device(
        &self,
        stream: &Stream,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        bytes: usize,
    ) -> DeviceResult<()> {
        Self::check_range("hipMemcpyDtoDAsync (source)", src.len, src_offset, bytes)?;
        Self::check_range(
            "hipMemcpyDtoDAsync (destination)",
            dst.len,
            dst_offset,
            bytes,
        )?;
        self.bind()?;
        // SAFETY: both ranges checked.
        self.ctx.call("hipMemcpyDtoDAsync", unsafe {
            (self.ctx.api.memcpy_dtod_async)(
                Self::at(dst, dst_offset),
                Self::at(src, src_offset),
                bytes,
                stream.0,
            )
        })
    }

    fn fill_zero(
        &self,
        stream: &Stream,
        dst: &Buffer,
        offset: usize,
        bytes: usize,
    ) -> DeviceResult<()> {
        Self::check_range("hipMemsetD8Async", dst.len, offset, bytes)?;
        self.bind()?;
        // SAFETY: range checked.
        self.ctx.call("hipMemsetD8Async", unsafe {
            (self.ctx.api.memset_d8_async)(Self::at(dst, offset), 0, bytes, stream.0)
        })
    }

    fn load(&self, program: &KernelProgram) -> DeviceResult<Vec<Kernel>> {
        let code = hiprtc::cached(&program.name, &program.source, &self.props.arch)?;
        self.bind()?;
        let api = self.ctx.api;
        let mut module: runtime::Module = std::ptr::null_mut();
        // SAFETY: `code` is a complete code object produced by hiprtc for
        // this architecture; the module is unloaded by Module's Drop.
        self.ctx
            .call(format!("hipModuleLoadData ({})", program.name), unsafe {
                (api.module_load_data)(&mut module, code.as_ptr() as *const c_void)
            })?;
        let module = Arc::new(Module(module, self.ctx.clone()));
        program
            .kernels
            .iter()
            .map(|name| {
                let cname = CString::new(name.as_str()).expect("kernel names have no NUL");
                let mut f: runtime::Function = std::ptr::null_mut();
                // SAFETY: the module is loaded; the function lives as long
                // as it (Kernel holds the module).
                self.ctx
                    .call(format!("hipModuleGetFunction({name})"), unsafe {
                        (api.module_get_function)(&mut f, module.0, cname.as_ptr())
                    })?;
                Ok(Kernel {
                    f,
                    _module: module.clone(),
                })
            })
            .collect()
    }

    unsafe fn launch(
        &self,
        stream: &Stream,
        kernel: &Kernel,
        shape: LaunchShape,
        args: &[KernelArg],
    ) -> DeviceResult<()> {
        self.bind()?;
        let mut storage = KernelArg::slots(args);
        let mut params: Vec<*mut c_void> = storage
            .iter_mut()
            .map(|v| v as *mut u64 as *mut c_void)
            .collect();
        // SAFETY: the caller guarantees the arguments match the kernel.
        let s = unsafe {
            (self.ctx.api.module_launch_kernel)(
                kernel.f,
                shape.blocks,
                1,
                1,
                shape.threads,
                1,
                1,
                shape.shared_bytes,
                stream.0,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        self.ctx.call(
            format!(
                "hipModuleLaunchKernel ({} blocks of {}, {} B shared)",
                shape.blocks, shape.threads, shape.shared_bytes
            ),
            s,
        )
    }

    fn record(&self, stream: &Stream) -> DeviceResult<Event> {
        self.bind()?;
        let api = self.ctx.api;
        let mut e: runtime::Event = std::ptr::null_mut();
        // SAFETY: a live out-pointer; flags 0 = hipEventDefault (timing).
        self.ctx.call("hipEventCreateWithFlags", unsafe {
            (api.event_create_with_flags)(&mut e, 0)
        })?;
        let event = Event(e, self.ctx.clone());
        // SAFETY: a live event and stream of this device.
        self.ctx.call("hipEventRecord", unsafe {
            (api.event_record)(event.0, stream.0)
        })?;
        Ok(event)
    }

    fn wait(&self, stream: &Stream, event: &Event) -> DeviceResult<()> {
        self.bind()?;
        // SAFETY: a live stream and a recorded event.
        self.ctx.call("hipStreamWaitEvent", unsafe {
            (self.ctx.api.stream_wait_event)(stream.0, event.0, 0)
        })
    }

    fn elapsed_ms(&self, start: &Event, end: &Event) -> DeviceResult<f32> {
        self.bind()?;
        let api = self.ctx.api;
        let mut ms = 0f32;
        // SAFETY: both events were recorded; `end` is waited for first.
        unsafe {
            self.ctx
                .call("hipEventSynchronize", (api.event_synchronize)(end.0))?;
            self.ctx.call(
                "hipEventElapsedTime",
                (api.event_elapsed_time)(&mut ms, start.0, end.0),
            )?;
        }
        Ok(ms)
    }

    fn synchronize(&self, stream: &Stream) -> DeviceResult<()> {
        self.bind()?;
        // SAFETY: a live stream.
        self.ctx.call("hipStreamSynchronize", unsafe {
            (self.ctx.api.stream_synchronize)(stream.0)
        })
    }
}
