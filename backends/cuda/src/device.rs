//! `Device` for NVIDIA GPUs on cudarc's driver API (`result` and `sys`
//! layers): primary context, stream-ordered allocation from the device's
//! memory pool, events, NVRTC-compiled modules.

use crate::error::{driver, other};
use crate::nvrtc;
use cudarc::driver::{result, sys};
use spgemm_core::device::{
    AtomicCapabilities, Device, DeviceBuffer, DeviceErrorKind, DeviceProperties, DeviceResult,
    KernelArg, KernelProgram, LaunchShape, PinnedBuffer, Vendor,
};
use std::ffi::{c_void, CString};
use std::sync::Arc;

/// The device's retained primary context and the modules loaded in it.
/// Shared (`Arc`) by the device and by every stream, event and buffer, so
/// it is released only after the last of them is destroyed.
struct Context {
    ctx: sys::CUcontext,
    dev: sys::CUdevice,
    /// The device's default memory pool, which keeps freed memory.
    pool: sys::CUmemoryPool,
    modules: std::sync::Mutex<Vec<sys::CUmodule>>,
}

// SAFETY: a CUDA context may be used from any thread once made current;
// every use binds it first. The module list is behind a mutex.
unsafe impl Send for Context {}
// SAFETY: as above.
unsafe impl Sync for Context {}

impl Context {
    fn bind(&self) -> DeviceResult<()> {
        // SAFETY: the context stays retained while `self` lives.
        unsafe { result::ctx::set_current(self.ctx) }.map_err(|e| driver("cuCtxSetCurrent", e))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: every stream, event and buffer of this context is gone
        // (each holds the Arc); modules were loaded here; the primary
        // context was retained once.
        unsafe {
            let _ = result::ctx::set_current(self.ctx);
            let _ = result::ctx::synchronize();
            for m in self
                .modules
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .drain(..)
            {
                let _ = result::module::unload(m);
            }
            let _ = result::primary_ctx::release(self.dev);
        }
    }
}

/// One NVIDIA GPU: its primary context and properties.
pub struct CudaDevice {
    ctx: Arc<Context>,
    props: DeviceProperties,
}

/// A CUDA stream (blocking with respect to the legacy default stream, on
/// which buffers are freed, so a free waits for every stream's work).
/// Created by us (destroyed on drop), or another library's
/// (`Device::borrow_stream`, never destroyed by us).
pub struct Stream(sys::CUstream, Arc<Context>, bool);
// SAFETY: stream handles are usable from any thread.
unsafe impl Send for Stream {}
// SAFETY: as above; the driver serialises work submitted to one stream.
unsafe impl Sync for Stream {}

impl Stream {
    /// The raw `CUstream`, for libraries that take one (cuSPARSE).
    pub fn raw(&self) -> sys::CUstream {
        self.0
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.2 {
            return;
        }
        let _ = self.1.bind();
        // SAFETY: the handle came from `cuStreamCreate` in this context,
        // which is still alive, and is destroyed once.
        let _ = unsafe { result::stream::destroy(self.0) };
    }
}

/// A CUDA event (timing enabled).
pub struct Event(sys::CUevent, Arc<Context>);
// SAFETY: event handles are usable from any thread.
unsafe impl Send for Event {}
// SAFETY: as above.
unsafe impl Sync for Event {}

impl Drop for Event {
    fn drop(&mut self) {
        let _ = self.1.bind();
        // SAFETY: created by `cuEventCreate` in this live context, destroyed once.
        let _ = unsafe { result::event::destroy(self.0) };
    }
}

/// Device memory from the stream-ordered pool.
pub struct Buffer {
    ptr: sys::CUdeviceptr,
    len: usize,
    ctx: Arc<Context>,
    /// Allocated by us (freed on drop), or borrowed (`Device::borrow`).
    owned: bool,
}
// SAFETY: a device address is valid in its context from any thread.
unsafe impl Send for Buffer {}
// SAFETY: as above.
unsafe impl Sync for Buffer {}

impl DeviceBuffer for Buffer {
    fn device_ptr(&self) -> u64 {
        self.ptr
    }
    fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let _ = self.ctx.bind();
        // SAFETY: freed once, in its live context, on the legacy default
        // stream, which waits for all work on our (blocking) streams that
        // may still use it.
        unsafe {
            if result::free_async(self.ptr, std::ptr::null_mut()).is_err() {
                let _ = result::free_sync(self.ptr);
            }
        }
    }
}

/// Page-locked host memory from `cuMemHostAlloc`.
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
        // SAFETY: allocated by `cuMemHostAlloc` in this live context and
        // freed once; the driver waits for copies that use it.
        let _ = unsafe { result::free_host(self.ptr as *mut c_void) };
    }
}

/// A loaded kernel.
pub struct Kernel(sys::CUfunction);
// SAFETY: function handles are usable from any thread.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

fn attr(dev: sys::CUdevice, a: sys::CUdevice_attribute) -> DeviceResult<i32> {
    // SAFETY: `dev` is a valid device handle.
    unsafe { result::device::get_attribute(dev, a) }
        .map_err(|e| driver(format!("cuDeviceGetAttribute({a:?})"), e))
}

impl CudaDevice {
    /// Opens GPU `ordinal`.
    ///
    /// # Errors
    /// [`DeviceErrorKind::NoDriver`] when libcuda cannot be loaded (checked
    /// before any call, since cudarc panics then), [`DeviceErrorKind::NoDevice`]
    /// when there is no such GPU, other driver errors.
    pub fn new(ordinal: usize) -> DeviceResult<Self> {
        // SAFETY: only tries to load the library.
        if !unsafe { sys::is_culib_present() } {
            return Err(other(
                DeviceErrorKind::NoDriver,
                "loading libcuda",
                "the CUDA driver library (libcuda.so) is not installed",
            ));
        }
        result::init().map_err(|e| driver("cuInit", e))?;
        let count = result::device::get_count().map_err(|e| driver("cuDeviceGetCount", e))?;
        if ordinal as i32 >= count {
            return Err(other(
                DeviceErrorKind::NoDevice,
                "cuDeviceGet",
                format!("GPU {ordinal} requested, {count} present"),
            ));
        }
        let dev = result::device::get(ordinal as i32).map_err(|e| driver("cuDeviceGet", e))?;
        // SAFETY: `dev` is valid; the primary context is released in Drop.
        let ctx = unsafe { result::primary_ctx::retain(dev) }
            .map_err(|e| driver("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: `ctx` was just retained.
        unsafe { result::ctx::set_current(ctx) }.map_err(|e| driver("cuCtxSetCurrent", e))?;
        use sys::CUdevice_attribute::*;
        let major = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        // SAFETY: `dev` is valid.
        let total =
            unsafe { result::device::total_mem(dev) }.map_err(|e| driver("cuDeviceTotalMem", e))?;
        let props = DeviceProperties {
            name: result::device::get_name(dev).map_err(|e| driver("cuDeviceGetName", e))?,
            vendor: Vendor::Nvidia,
            arch: format!("sm_{major}{minor}"),
            warp_width: attr(dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE)? as u32,
            multiprocessor_count: attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            max_threads_per_block: attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
            max_threads_per_multiprocessor: attr(
                dev,
                CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            )? as u32,
            max_blocks_per_multiprocessor: attr(
                dev,
                CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
            )? as u32,
            shared_memory_per_block: attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?
                as usize,
            shared_memory_per_block_optin: attr(
                dev,
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )? as usize,
            shared_memory_per_multiprocessor: attr(
                dev,
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            )? as usize,
            reserved_shared_memory_per_block: attr(
                dev,
                CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
            )? as usize,
            registers_per_multiprocessor: attr(
                dev,
                CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
            )? as u32,
            total_memory: total,
            atomics: AtomicCapabilities {
                f64_add: major >= 6,
                u64_add: true,
            },
        };
        // Keep freed memory in the pool: allocation is then not a per-call cost.
        let mut pool = std::ptr::null_mut();
        // SAFETY: valid device; the threshold attribute takes a u64.
        unsafe {
            sys::cuDeviceGetDefaultMemPool(&mut pool, dev)
                .result()
                .map_err(|e| driver("cuDeviceGetDefaultMemPool", e))?;
            let mut threshold: u64 = u64::MAX;
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut threshold as *mut u64 as *mut c_void,
            )
            .result()
            .map_err(|e| driver("cuMemPoolSetAttribute(release threshold)", e))?;
        }
        let ctx = Arc::new(Context {
            ctx,
            dev,
            pool,
            modules: Default::default(),
        });
        Ok(Self { ctx, props })
    }

    fn bind(&self) -> DeviceResult<()> {
        self.ctx.bind()
    }

    /// Makes this device's primary context current on the calling thread,
    /// for libraries that use the current context (NCCL through the CUDA
    /// runtime).
    ///
    /// # Errors
    /// A driver failure.
    pub fn make_current(&self) -> DeviceResult<()> {
        self.bind()
    }

    fn check_range(what: &str, len: usize, offset: usize, bytes: usize) -> DeviceResult<()> {
        spgemm_core::device::check_range("cuda", what, len, offset, bytes)
    }
}

impl Device for CudaDevice {
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
        let (free, total) = result::mem_get_info().map_err(|e| driver("cuMemGetInfo", e))?;
        // Memory the pool holds but no buffer uses is free to us as well.
        let pool_attr = |a| -> DeviceResult<u64> {
            let mut v: u64 = 0;
            // SAFETY: the pool lives as long as the context; both
            // attributes are u64.
            unsafe {
                sys::cuMemPoolGetAttribute(self.ctx.pool, a, &mut v as *mut u64 as *mut c_void)
            }
            .result()
            .map_err(|e| driver("cuMemPoolGetAttribute", e))?;
            Ok(v)
        };
        use sys::CUmemPool_attribute::*;
        let reserved = pool_attr(CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?;
        let used = pool_attr(CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?;
        let idle = usize::try_from(reserved.saturating_sub(used)).unwrap_or(usize::MAX);
        Ok((free.saturating_add(idle).min(total), total))
    }

    fn create_stream(&self) -> DeviceResult<Stream> {
        self.bind()?;
        let s = result::stream::create(result::stream::StreamKind::Default)
            .map_err(|e| driver("cuStreamCreate", e))?;
        Ok(Stream(s, self.ctx.clone(), true))
    }

    unsafe fn borrow_stream(&self, handle: u64) -> Stream {
        Stream(handle as sys::CUstream, self.ctx.clone(), false)
    }

    fn create_copy_stream(&self) -> DeviceResult<Stream> {
        self.bind()?;
        let s = result::stream::create(result::stream::StreamKind::NonBlocking)
            .map_err(|e| driver("cuStreamCreate (non-blocking)", e))?;
        Ok(Stream(s, self.ctx.clone(), true))
    }

    fn alloc(&self, stream: &Stream, bytes: usize) -> DeviceResult<Buffer> {
        self.bind()?;
        // SAFETY: a live stream of this context.
        let ptr = unsafe { result::malloc_async(stream.0, bytes.max(1)) }
            .map_err(|e| driver("cuMemAllocAsync", e))?;
        Ok(Buffer {
            ptr,
            len: bytes,
            ctx: self.ctx.clone(),
            owned: true,
        })
    }

    unsafe fn borrow(&self, ptr: u64, bytes: usize) -> Buffer {
        Buffer {
            ptr,
            len: bytes,
            ctx: self.ctx.clone(),
            owned: false,
        }
    }

    fn alloc_pinned(&self, bytes: usize) -> DeviceResult<Pinned> {
        self.bind()?;
        // SAFETY: a plain allocation in the current context; freed in Drop.
        let ptr = unsafe { result::malloc_host(bytes.max(1), 0) }
            .map_err(|e| driver(format!("cuMemHostAlloc ({bytes} bytes)"), e))?;
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
            "cuMemcpyHtoDAsync (pinned source)",
            src.len,
            src_offset,
            bytes,
        )?;
        Self::check_range("cuMemcpyHtoDAsync", dst.len, offset, bytes)?;
        self.bind()?;
        // SAFETY: both ranges checked; the caller keeps `src` unchanged
        // until the copy completes.
        unsafe {
            result::memcpy_htod_async(
                dst.ptr + offset as u64,
                &src.as_slice()[src_offset..src_offset + bytes],
                stream.0,
            )
        }
        .map_err(|e| driver("cuMemcpyHtoDAsync", e))
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
        Self::check_range("cuMemcpyDtoHAsync", src.len, offset, bytes)?;
        Self::check_range(
            "cuMemcpyDtoHAsync (pinned destination)",
            dst.len,
            dst_offset,
            bytes,
        )?;
        self.bind()?;
        // SAFETY: both ranges checked; the caller leaves `dst` alone until
        // the copy completes.
        unsafe {
            result::memcpy_dtoh_async(
                &mut dst.as_mut_slice()[dst_offset..dst_offset + bytes],
                src.ptr + offset as u64,
                stream.0,
            )
        }
        .map_err(|e| driver("cuMemcpyDtoHAsync", e))
    }

    fn sync_event(&self, event: &Event) -> DeviceResult<()> {
        self.bind()?;
        // SAFETY: a recorded event of this context.
        unsafe { result::event::synchronize(event.0) }.map_err(|e| driver("cuEventSynchronize", e))
    }

    fn copy_to_device(
        &self,
        stream: &Stream,
        src: &[u8],
        dst: &Buffer,
        offset: usize,
    ) -> DeviceResult<()> {
        Self::check_range("cuMemcpyHtoDAsync", dst.len, offset, src.len())?;
        self.bind()?;
        // SAFETY: range checked; pageable source memory is staged before the
        // call returns, so `src` may be reused afterwards.
        unsafe { result::memcpy_htod_async(dst.ptr + offset as u64, src, stream.0) }
            .map_err(|e| driver("cuMemcpyHtoDAsync", e))
    }

    fn copy_to_host(
        &self,
        stream: &Stream,
        src: &Buffer,
        offset: usize,
        dst: &mut [u8],
    ) -> DeviceResult<()> {
        Self::check_range("cuMemcpyDtoHAsync", src.len, offset, dst.len())?;
        self.bind()?;
        // SAFETY: range checked; the stream is synchronised before `dst` is used.
        unsafe {
            result::memcpy_dtoh_async(dst, src.ptr + offset as u64, stream.0)
                .map_err(|e| driver("cuMemcpyDtoHAsync", e))?;
            result::stream::synchronize(stream.0).map_err(|e| driver("cuStreamSynchronize", e))
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
        Self::check_range("cuMemcpyDtoDAsync (source)", src.len, src_offset, bytes)?;
        Self::check_range(
            "cuMemcpyDtoDAsync (destination)",
            dst.len,
            dst_offset,
            bytes,
        )?;
        self.bind()?;
        // SAFETY: both ranges checked.
        unsafe {
            result::memcpy_dtod_async(
                dst.ptr + dst_offset as u64,
                src.ptr + src_offset as u64,
                bytes,
                stream.0,
            )
        }
        .map_err(|e| driver("cuMemcpyDtoDAsync", e))
    }

    fn fill_zero(
        &self,
        stream: &Stream,
        dst: &Buffer,
        offset: usize,
        bytes: usize,
    ) -> DeviceResult<()> {
        Self::check_range("cuMemsetD8Async", dst.len, offset, bytes)?;
        self.bind()?;
        // SAFETY: range checked.
        unsafe { result::memset_d8_async(dst.ptr + offset as u64, 0, bytes, stream.0) }
            .map_err(|e| driver("cuMemsetD8Async", e))
    }

    fn load(&self, program: &KernelProgram) -> DeviceResult<Vec<Kernel>> {
        let cubin = nvrtc::cached(&program.name, &program.source, &self.props.arch)?;
        self.bind()?;
        // SAFETY: `cubin` is a complete image produced by NVRTC for this
        // architecture; the module is unloaded in Drop.
        let module = unsafe { result::module::load_data(cubin.as_ptr() as *const c_void) }
            .map_err(|e| driver(format!("cuModuleLoadData ({})", program.name), e))?;
        self.ctx
            .modules
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(module);
        let mut out = Vec::with_capacity(program.kernels.len());
        for name in &program.kernels {
            let cname = CString::new(name.as_str()).expect("kernel names have no NUL");
            // SAFETY: `module` is loaded; the function lives as long as it.
            let f = unsafe { result::module::get_function(module, cname) }
                .map_err(|e| driver(format!("cuModuleGetFunction({name})"), e))?;
            // Opt in to the largest dynamic shared memory the block may use.
            // SAFETY: `f` is a valid function handle.
            unsafe {
                let static_bytes = result::function::get_function_attribute(
                    f,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                )
                .unwrap_or(0);
                let max = self.props.shared_memory_per_block_optin as i32 - static_bytes;
                result::function::set_function_attribute(
                    f,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    max,
                )
                .map_err(|e| {
                    driver(
                        format!("cuFuncSetAttribute({name}, max dynamic shared {max})"),
                        e,
                    )
                })?;
            }
            out.push(Kernel(f));
        }
        Ok(out)
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
        unsafe {
            result::launch_kernel(
                kernel.0,
                (shape.blocks, 1, 1),
                (shape.threads, 1, 1),
                shape.shared_bytes,
                stream.0,
                &mut params,
            )
        }
        .map_err(|e| {
            driver(
                format!(
                    "cuLaunchKernel ({} blocks of {}, {} B shared)",
                    shape.blocks, shape.threads, shape.shared_bytes
                ),
                e,
            )
        })
    }

    fn record(&self, stream: &Stream) -> DeviceResult<Event> {
        self.bind()?;
        let ev = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .map_err(|e| driver("cuEventCreate", e))?;
        // SAFETY: both handles are live.
        unsafe { result::event::record(ev, stream.0) }.map_err(|e| driver("cuEventRecord", e))?;
        Ok(Event(ev, self.ctx.clone()))
    }

    fn wait(&self, stream: &Stream, event: &Event) -> DeviceResult<()> {
        self.bind()?;
        // SAFETY: both handles are live.
        unsafe {
            result::stream::wait_event(
                stream.0,
                event.0,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        }
        .map_err(|e| driver("cuStreamWaitEvent", e))
    }

    fn elapsed_ms(&self, start: &Event, end: &Event) -> DeviceResult<f32> {
        self.bind()?;
        // SAFETY: both events were recorded.
        unsafe {
            result::event::synchronize(end.0).map_err(|e| driver("cuEventSynchronize", e))?;
            result::event::elapsed(start.0, end.0).map_err(|e| driver("cuEventElapsedTime", e))
        }
    }

    fn synchronize(&self, stream: &Stream) -> DeviceResult<()> {
        self.bind()?;
        // SAFETY: a live stream.
        unsafe { result::stream::synchronize(stream.0) }
            .map_err(|e| driver("cuStreamSynchronize", e))
    }
}
