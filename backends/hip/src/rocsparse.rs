//! rocSPARSE's SpGEMM (`rocsparse_?csrgemm`: buffer size, `csrgemm_nnz`,
//! numeric) run in the same process, on the same device, streams and
//! memory pool as spgemm, for `spgemm bench --compare rocsparse`.
//! librocsparse is loaded at run time and its few functions declared by
//! hand (checked against the installed header by `tests/declarations.rs`).
//!
//! Timed like spgemm and like the cuSPARSE comparison: device events around
//! everything after the inputs are on the device (buffer, C's row offsets
//! and nnz, C's allocation, numeric), over `reps` runs after `warmup`.
//! rocSPARSE's default build takes 32-bit indices (`rocsparse_int`), so a
//! product with more than `i32::MAX` entries (or rows/columns) is refused.

use crate::device::HipDevice;
use crate::runtime::err;
use spgemm_core::device::{Device, DeviceBuffer, DeviceError, DeviceErrorKind, DeviceResult};
use spgemm_core::gpu::VendorRun;
use spgemm_core::{CsrMatrix, Scalar};
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

type Handle = *mut c_void;
type Descr = *mut c_void;
type Info = *mut c_void;
/// `rocsparse_operation_none`.
const OPERATION_NONE: c_int = 111;

/// The library names tried, in order.
pub const LIBRARIES: [&str; 2] = ["librocsparse.so", "librocsparse.so.0"];

/// Every symbol [`time`] loads, for checks against the library.
pub const SYMBOLS: &[&str] = Lib::SYMBOLS;

crate::library::dynamic_library! {
    /// rocSPARSE's entry points spgemm compares with.
    struct Lib from LIBRARIES;
    create_handle = "rocsparse_create_handle": fn(*mut Handle) -> c_int;
    destroy_handle = "rocsparse_destroy_handle": fn(Handle) -> c_int;
    set_stream = "rocsparse_set_stream": fn(Handle, *mut c_void) -> c_int;
    create_descr = "rocsparse_create_mat_descr": fn(*mut Descr) -> c_int;
    destroy_descr = "rocsparse_destroy_mat_descr": fn(Descr) -> c_int;
    create_info = "rocsparse_create_mat_info": fn(*mut Info) -> c_int;
    destroy_info = "rocsparse_destroy_mat_info": fn(Info) -> c_int;
    sbuffer_size = "rocsparse_scsrgemm_buffer_size": fn(
        Handle, c_int, c_int, i32, i32, i32, *const c_void, Descr, i32, *const i32, *const i32,
        Descr, i32, *const i32, *const i32, *const c_void, Descr, i32, *const i32, *const i32,
        Info, *mut usize,
    ) -> c_int;
    dbuffer_size = "rocsparse_dcsrgemm_buffer_size": fn(
        Handle, c_int, c_int, i32, i32, i32, *const c_void, Descr, i32, *const i32, *const i32,
        Descr, i32, *const i32, *const i32, *const c_void, Descr, i32, *const i32, *const i32,
        Info, *mut usize,
    ) -> c_int;
    nnz = "rocsparse_csrgemm_nnz": fn(
        Handle, c_int, c_int, i32, i32, i32, Descr, i32, *const i32, *const i32, Descr, i32,
        *const i32, *const i32, Descr, i32, *const i32, *const i32, Descr, *mut i32, *mut i32,
        Info, *mut c_void,
    ) -> c_int;
    scsrgemm = "rocsparse_scsrgemm": fn(
        Handle, c_int, c_int, i32, i32, i32, *const c_void, Descr, i32, *const c_void,
        *const i32, *const i32, Descr, i32, *const c_void, *const i32, *const i32,
        *const c_void, Descr, i32, *const c_void, *const i32, *const i32, Descr, *mut c_void,
        *const i32, *mut i32, Info, *mut c_void,
    ) -> c_int;
    dcsrgemm = "rocsparse_dcsrgemm": fn(
        Handle, c_int, c_int, i32, i32, i32, *const c_void, Descr, i32, *const c_void,
        *const i32, *const i32, Descr, i32, *const c_void, *const i32, *const i32,
        *const c_void, Descr, i32, *const c_void, *const i32, *const i32, Descr, *mut c_void,
        *const i32, *mut i32, Info, *mut c_void,
    ) -> c_int;
}

fn lib() -> DeviceResult<&'static Lib> {
    static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();
    LIB.get_or_init(Lib::load)
        .as_ref()
        .map_err(|e| err(DeviceErrorKind::NoDriver, "loading rocSPARSE", e.clone()))
}

fn check(call: &str, s: c_int) -> DeviceResult<()> {
    if s == 0 {
        Ok(())
    } else {
        Err(err(
            DeviceErrorKind::Other,
            call,
            format!("rocsparse_status {s}"),
        ))
    }
}

fn i32_of(what: &str, v: usize) -> DeviceResult<i32> {
    i32::try_from(v).map_err(|_| {
        err(
            DeviceErrorKind::Other,
            "rocSPARSE csrgemm",
            format!("{what} = {v} needs 64-bit indices, which rocsparse_int is not"),
        )
    })
}

/// Times rocSPARSE's `C = A·B` (`reps` runs after `warmup`); phases:
/// `nnz` (buffer, C's row offsets and nnz), `compute` (C's allocation and
/// the numeric step).
///
/// # Errors
/// librocsparse missing, 32-bit index limits, rocSPARSE or runtime
/// failures.
pub fn time<T: Scalar>(
    dev: &HipDevice,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    warmup: usize,
    reps: usize,
) -> DeviceResult<Vec<VendorRun>> {
    if T::INTEGER {
        return Err(DeviceError::new(
            DeviceErrorKind::Other,
            "hip",
            "rocsparse_csrgemm",
            format!(
                "values of {}: rocSPARSE multiplies f32 and f64 only",
                T::NAME
            ),
        ));
    }
    let lib = lib()?;
    let f64 = T::NAME == "f64";
    let (buffer_size, csrgemm) = if f64 {
        (lib.dbuffer_size, lib.dcsrgemm)
    } else {
        (lib.sbuffer_size, lib.scsrgemm)
    };
    let s = dev.create_stream()?;
    type Bufs = (crate::Buffer, crate::Buffer, crate::Buffer);
    let upload = |m: &CsrMatrix<T>| -> DeviceResult<Bufs> {
        i32_of("nnz", m.nnz())?;
        let rpt: Vec<i32> = m.row_offsets().iter().map(|&o| o as i32).collect();
        let col: Vec<i32> = m.col_indices().iter().map(|&c| c as i32).collect();
        let bufs = (
            dev.alloc(&s, 4 * rpt.len())?,
            dev.alloc(&s, 4 * col.len())?,
            dev.alloc(&s, std::mem::size_of_val(m.values()))?,
        );
        dev.copy_to_device(&s, bytemuck::cast_slice(&rpt), &bufs.0, 0)?;
        dev.copy_to_device(&s, bytemuck::cast_slice(&col), &bufs.1, 0)?;
        dev.copy_to_device(&s, bytemuck::cast_slice(m.values()), &bufs.2, 0)?;
        Ok(bufs)
    };
    let (ga, gb) = (upload(a)?, upload(b)?);
    let p = |x: &crate::Buffer| x.device_ptr() as *mut c_void;
    let (m, kdim, n) = (
        i32_of("rows of A", a.nrows())?,
        i32_of("rows of B", b.nrows())?,
        i32_of("columns of B", b.ncols())?,
    );
    let (na, nb) = (a.nnz() as i32, b.nnz() as i32);
    let one = T::ONE;
    let alpha = &one as *const T as *const c_void;
    let null = std::ptr::null_mut::<c_void>();
    let nuli = std::ptr::null::<i32>();
    let op = OPERATION_NONE;
    let mut runs = Vec::new();
    // SAFETY: every pointer handed to rocSPARSE addresses a live buffer of
    // the size its arguments state; D is absent (beta null); handle,
    // descriptor and info are destroyed before the buffers.
    unsafe {
        let (mut handle, mut descr, mut info) = (null, null, null);
        check("rocsparse_create_handle", (lib.create_handle)(&mut handle))?;
        let result = (|| -> DeviceResult<()> {
            check("rocsparse_set_stream", (lib.set_stream)(handle, s.raw()))?;
            check("rocsparse_create_mat_descr", (lib.create_descr)(&mut descr))?;
            check("rocsparse_create_mat_info", (lib.create_info)(&mut info))?;
            let (ar, ac, av) = (p(&ga.0) as *const i32, p(&ga.1) as *const i32, p(&ga.2));
            let (br, bc, bv) = (p(&gb.0) as *const i32, p(&gb.1) as *const i32, p(&gb.2));
            for rep in 0..warmup + reps.max(1) {
                let t0 = dev.record(&s)?;
                let mut size = 0usize;
                check(
                    "rocsparse_?csrgemm_buffer_size",
                    buffer_size(
                        handle, op, op, m, n, kdim, alpha, descr, na, ar, ac, descr, nb, br, bc,
                        null, null, 0, nuli, nuli, info, &mut size,
                    ),
                )?;
                let buffer = dev.alloc(&s, size)?;
                let crpt = dev.alloc(&s, 4 * (m as usize + 1))?;
                let mut nnz_c: i32 = 0;
                check(
                    "rocsparse_csrgemm_nnz",
                    (lib.nnz)(
                        handle,
                        op,
                        op,
                        m,
                        n,
                        kdim,
                        descr,
                        na,
                        ar,
                        ac,
                        descr,
                        nb,
                        br,
                        bc,
                        null,
                        0,
                        nuli,
                        nuli,
                        descr,
                        p(&crpt) as *mut i32,
                        &mut nnz_c,
                        info,
                        p(&buffer),
                    ),
                )?;
                let t_nnz = dev.record(&s)?;
                let nnz = nnz_c.max(0) as usize;
                let (ccol, cval) = (
                    dev.alloc(&s, 4 * nnz)?,
                    dev.alloc(&s, nnz * std::mem::size_of::<T>())?,
                );
                check(
                    "rocsparse_?csrgemm",
                    csrgemm(
                        handle,
                        op,
                        op,
                        m,
                        n,
                        kdim,
                        alpha,
                        descr,
                        na,
                        av,
                        ar,
                        ac,
                        descr,
                        nb,
                        bv,
                        br,
                        bc,
                        null,
                        null,
                        0,
                        null,
                        nuli,
                        nuli,
                        descr,
                        p(&cval),
                        p(&crpt) as *const i32,
                        p(&ccol) as *mut i32,
                        info,
                        p(&buffer),
                    ),
                )?;
                let t1 = dev.record(&s)?;
                let ms = dev.elapsed_ms(&t0, &t1)? as f64;
                if rep >= warmup {
                    runs.push(VendorRun {
                        ms,
                        phases_ms: vec![
                            ("nnz", dev.elapsed_ms(&t0, &t_nnz)? as f64),
                            ("compute", dev.elapsed_ms(&t_nnz, &t1)? as f64),
                        ],
                        nnz_c: nnz,
                        peak_bytes: size
                            + 4 * (m as usize + 1)
                            + nnz * (4 + std::mem::size_of::<T>()),
                    });
                }
            }
            Ok(())
        })();
        if !info.is_null() {
            (lib.destroy_info)(info);
        }
        if !descr.is_null() {
            (lib.destroy_descr)(descr);
        }
        (lib.destroy_handle)(handle);
        result?;
    }
    dev.synchronize(&s)?;
    Ok(runs)
}
