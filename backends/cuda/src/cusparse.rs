//! cuSPARSE's SpGEMM (`cusparseSpGEMM_*`, algorithm `CUSPARSE_SPGEMM_DEFAULT`)
//! run in the same process, on the same device, streams and memory pool as
//! spgemm, for `spgemm bench --compare cusparse`.
//!
//! Timed like spgemm: device events around everything after the inputs are
//! on the device (work estimation, compute, C's allocation, copy), over
//! `reps` runs after `warmup`; the peak extra device memory counts the two
//! work buffers and C. cuSPARSE's generic SpGEMM takes 32-bit indices, so a
//! product with more than `i32::MAX` entries (or rows/columns) is refused.

use crate::device::CudaDevice;
use crate::error::other;
use cudarc::cusparse::sys;
use spgemm_core::device::{Device, DeviceErrorKind, DeviceResult};
use spgemm_core::gpu::VendorRun;
use spgemm_core::{CsrMatrix, Scalar};
use std::ffi::c_void;

fn check(call: &str, s: sys::cusparseStatus_t) -> DeviceResult<()> {
    if s == sys::cusparseStatus_t::CUSPARSE_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(other(DeviceErrorKind::Other, call, format!("{s:?}")))
    }
}

fn i32_of(what: &str, v: usize) -> DeviceResult<i64> {
    if v > i32::MAX as usize {
        return Err(other(
            DeviceErrorKind::Other,
            "cuSPARSE SpGEMM",
            format!("{what} = {v} needs 64-bit indices, which cusparseSpGEMM does not take"),
        ));
    }
    Ok(v as i64)
}

/// Times cuSPARSE's `C = A·B` (`reps` runs after `warmup`); phases:
/// work estimation, compute, C's allocation and copy.
///
/// # Errors
/// libcusparse missing, 32-bit index limits, cuSPARSE or driver failures.
pub fn time<T: Scalar>(
    dev: &CudaDevice,
    a: &CsrMatrix<T>,
    b: &CsrMatrix<T>,
    warmup: usize,
    reps: usize,
) -> DeviceResult<Vec<VendorRun>> {
    // SAFETY: only tries to load the library.
    if !unsafe { sys::is_culib_present() } {
        return Err(other(
            DeviceErrorKind::NoDriver,
            "loading libcusparse",
            "libcusparse.so is not installed",
        ));
    }
    let value_type = match T::NAME {
        "f64" => sys::cudaDataType::CUDA_R_64F,
        "f32" => sys::cudaDataType::CUDA_R_32F,
        other_type => {
            return Err(other(
                DeviceErrorKind::Other,
                "cusparseSpGEMM",
                format!("values of {other_type}: cuSPARSE multiplies f32 and f64 only"),
            ))
        }
    };
    let s = dev.create_stream()?;
    let upload = |m: &CsrMatrix<T>| -> DeviceResult<(crate::Buffer, crate::Buffer, crate::Buffer)> {
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
    use spgemm_core::device::DeviceBuffer;
    let ptr = |x: &crate::Buffer| x.device_ptr() as *mut c_void;
    let (m, kdim, n) = (
        i32_of("rows of A", a.nrows())?,
        i32_of("rows of B", b.nrows())?,
        i32_of("columns of B", b.ncols())?,
    );
    let (one, zero): (T, T) = (T::ONE, T::ZERO);
    let (alpha, beta) = (
        &one as *const T as *const c_void,
        &zero as *const T as *const c_void,
    );
    let op = sys::cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;
    let alg = sys::cusparseSpGEMMAlg_t::CUSPARSE_SPGEMM_DEFAULT;
    let i32i = sys::cusparseIndexType_t::CUSPARSE_INDEX_32I;
    let base = sys::cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO;
    let mut runs = Vec::new();
    // SAFETY: every pointer handed to cuSPARSE addresses a live buffer of
    // the size its descriptor states; descriptors and the handle are
    // destroyed before the buffers (which outlive this block).
    unsafe {
        let mut handle = std::ptr::null_mut();
        check("cusparseCreate", sys::cusparseCreate(&mut handle))?;
        check(
            "cusparseSetStream",
            sys::cusparseSetStream(handle, s.raw() as _),
        )?;
        let (mut da, mut db) = (std::ptr::null_mut(), std::ptr::null_mut());
        check(
            "cusparseCreateCsr(A)",
            sys::cusparseCreateCsr(
                &mut da,
                m,
                kdim,
                a.nnz() as i64,
                ptr(&ga.0),
                ptr(&ga.1),
                ptr(&ga.2),
                i32i,
                i32i,
                base,
                value_type,
            ),
        )?;
        check(
            "cusparseCreateCsr(B)",
            sys::cusparseCreateCsr(
                &mut db,
                kdim,
                n,
                b.nnz() as i64,
                ptr(&gb.0),
                ptr(&gb.1),
                ptr(&gb.2),
                i32i,
                i32i,
                base,
                value_type,
            ),
        )?;
        let result = (|| -> DeviceResult<()> {
            for rep in 0..warmup + reps.max(1) {
                let t0 = dev.record(&s)?;
                let mut dc = std::ptr::null_mut();
                check(
                    "cusparseCreateCsr(C)",
                    sys::cusparseCreateCsr(
                        &mut dc,
                        m,
                        n,
                        0,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        i32i,
                        i32i,
                        base,
                        value_type,
                    ),
                )?;
                let mut desc = std::ptr::null_mut();
                check(
                    "cusparseSpGEMM_createDescr",
                    sys::cusparseSpGEMM_createDescr(&mut desc),
                )?;
                let estimate = |size: &mut usize, buf: *mut c_void| {
                    check(
                        "cusparseSpGEMM_workEstimation",
                        sys::cusparseSpGEMM_workEstimation(
                            handle, op, op, alpha, da as _, db as _, beta, dc, value_type, alg,
                            desc, size, buf,
                        ),
                    )
                };
                let compute = |size: &mut usize, buf: *mut c_void| {
                    check(
                        "cusparseSpGEMM_compute",
                        sys::cusparseSpGEMM_compute(
                            handle, op, op, alpha, da as _, db as _, beta, dc, value_type, alg,
                            desc, size, buf,
                        ),
                    )
                };
                // Each call is made twice: first for its buffer size, then with the buffer.
                let (mut size1, mut size2) = (0usize, 0usize);
                estimate(&mut size1, std::ptr::null_mut())?;
                let buf1 = dev.alloc(&s, size1)?;
                estimate(&mut size1, ptr(&buf1))?;
                let t_est = dev.record(&s)?;
                compute(&mut size2, std::ptr::null_mut())?;
                let buf2 = dev.alloc(&s, size2)?;
                compute(&mut size2, ptr(&buf2))?;
                let t_comp = dev.record(&s)?;
                let (mut r, mut c, mut nnz) = (0i64, 0i64, 0i64);
                check(
                    "cusparseSpMatGetSize",
                    sys::cusparseSpMatGetSize(dc, &mut r, &mut c, &mut nnz),
                )?;
                let c_bytes = 4 * (m as usize + 1) + nnz as usize * (4 + std::mem::size_of::<T>());
                let (crpt, ccol, cval) = (
                    dev.alloc(&s, 4 * (m as usize + 1))?,
                    dev.alloc(&s, 4 * nnz as usize)?,
                    dev.alloc(&s, nnz as usize * std::mem::size_of::<T>())?,
                );
                check(
                    "cusparseCsrSetPointers",
                    sys::cusparseCsrSetPointers(dc, ptr(&crpt), ptr(&ccol), ptr(&cval)),
                )?;
                check(
                    "cusparseSpGEMM_copy",
                    sys::cusparseSpGEMM_copy(
                        handle, op, op, alpha, da as _, db as _, beta, dc, value_type, alg, desc,
                    ),
                )?;
                let t1 = dev.record(&s)?;
                let ms = dev.elapsed_ms(&t0, &t1)? as f64;
                let estimation_ms = dev.elapsed_ms(&t0, &t_est)? as f64;
                let compute_ms = dev.elapsed_ms(&t_est, &t_comp)? as f64;
                let copy_ms = dev.elapsed_ms(&t_comp, &t1)? as f64;
                check(
                    "cusparseSpGEMM_destroyDescr",
                    sys::cusparseSpGEMM_destroyDescr(desc),
                )?;
                check(
                    "cusparseDestroySpMat(C)",
                    sys::cusparseDestroySpMat(dc as _),
                )?;
                if rep >= warmup {
                    runs.push(VendorRun {
                        ms,
                        phases_ms: vec![
                            ("estimation", estimation_ms),
                            ("compute", compute_ms),
                            ("copy", copy_ms),
                        ],
                        nnz_c: nnz as usize,
                        peak_bytes: size1 + size2 + c_bytes,
                    });
                }
            }
            Ok(())
        })();
        let _ = sys::cusparseDestroySpMat(da as _);
        let _ = sys::cusparseDestroySpMat(db as _);
        let _ = sys::cusparseDestroy(handle);
        result?;
    }
    dev.synchronize(&s)?;
    Ok(runs)
}
