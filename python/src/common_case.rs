//! The common case of `spgemm.matmul` on CuPy CSR matrices and PyTorch
//! sparse CSR tensors, read from Rust: value type, attributes, pointers and
//! the caller's current stream taken in one call, where the package's
//! Python took 15-40 µs ahead of a CuPy product and 60-110 µs ahead of a
//! PyTorch one, all of it before the first kernel (H100 host,
//! `docs/benchmarks/python-h100-2026-11-24.md`). Anything else (another format or
//! layout, values of two types or neither float32 nor float64, a strided
//! array, other index types, wrong lengths, operands on two devices or of
//! mismatched shapes) is declined, and the package's general path converts
//! the operands or names the error.

use crate::device::{matmul_device, DeviceCsr, DeviceOperand};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// A contiguous one-dimensional CuPy array: `(device address, length,
/// dtype kind, item size, device ordinal)`, or `None` for anything else.
type Array = (u64, usize, char, usize, i64);

/// The facts of CuPy array `x` that the product needs, or `None` when it
/// is not a contiguous one-dimensional array.
fn cupy_array(x: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
    let py = x.py();
    let Ok((len,)) = x.getattr(intern!(py, "shape"))?.extract::<(usize,)>() else {
        return Ok(None);
    };
    let dtype = x.getattr(intern!(py, "dtype"))?;
    let kind: char = dtype.getattr(intern!(py, "kind"))?.extract()?;
    let itemsize: usize = dtype.getattr(intern!(py, "itemsize"))?.extract()?;
    if len > 1 {
        let Ok((stride,)) = x.getattr(intern!(py, "strides"))?.extract::<(isize,)>() else {
            return Ok(None);
        };
        if stride != itemsize as isize {
            return Ok(None);
        }
    }
    let memory = x.getattr(intern!(py, "data"))?;
    let ptr: u64 = if len == 0 {
        0
    } else {
        memory.getattr(intern!(py, "ptr"))?.extract()?
    };
    let device: i64 = memory.getattr(intern!(py, "device_id"))?.extract()?;
    Ok(Some((ptr, len, kind, itemsize, device)))
}

/// Whether an index array of `kind` and `itemsize` is int64 (`Some(true)`)
/// or int32 (`Some(false)`); `None` for other types.
fn index_width(kind: char, itemsize: usize) -> Option<bool> {
    match (kind, itemsize) {
        ('i', 4) => Some(false),
        ('i', 8) => Some(true),
        _ => None,
    }
}

/// A device operand, its device ordinal and whether its values are
/// float64 (else float32).
type Operand = (DeviceOperand, i64, bool);

/// The device operand of CuPy CSR matrix `m` with float32 or float64
/// values, or `None` when the general path must take it.
fn cupy_operand(m: &Bound<'_, PyAny>, check: bool) -> PyResult<Option<Operand>> {
    let py = m.py();
    if !m.getattr(intern!(py, "format"))?.eq(intern!(py, "csr"))? {
        return Ok(None);
    }
    let Ok((nrows, ncols)) = m.getattr(intern!(py, "shape"))?.extract::<(usize, usize)>() else {
        return Ok(None);
    };
    // Wider columns would wrap in the kernels' int32 column indices: the
    // general path names them.
    if ncols > i32::MAX as usize {
        return Ok(None);
    }
    let [indptr, indices, data] = [
        intern!(py, "indptr"),
        intern!(py, "indices"),
        intern!(py, "data"),
    ]
    .map(|name| m.getattr(name).and_then(|x| cupy_array(&x)));
    let (Some(indptr), Some(indices), Some(data)) = (indptr?, indices?, data?) else {
        return Ok(None);
    };
    let (Some(wide_indptr), Some(wide_indices)) = (
        index_width(indptr.2, indptr.3),
        index_width(indices.2, indices.3),
    ) else {
        return Ok(None);
    };
    let nnz = data.1;
    let double = match (data.2, data.3) {
        ('f', 4) => false,
        ('f', 8) => true,
        _ => return Ok(None),
    };
    if indptr.1 != nrows + 1 || indices.1 != nnz {
        return Ok(None);
    }
    let device = data.4;
    if indptr.4 != device || indices.4 != device {
        return Ok(None);
    }
    let operand = (
        nrows,
        ncols,
        nnz,
        indptr.0,
        wide_indptr,
        indices.0,
        wide_indices,
        data.0,
        check,
    );
    Ok(Some((operand, device, double)))
}

/// The caller's current CuPy stream on `device` (its `CUstream` address,
/// 0 for the legacy default stream), as `cupy.cuda.get_current_stream`.
fn cupy_stream(py: Python<'_>, device: i64) -> PyResult<u64> {
    static GET: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let get = GET.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("cupy.cuda")?
                .getattr("get_current_stream")?
                .unbind(),
        )
    })?;
    get.bind(py)
        .call1((device,))?
        .getattr(intern!(py, "ptr"))?
        .extract()
}

/// PyTorch's objects the readers compare with: the index and value types
/// (`torch.int32`, `torch.int64`, `torch.float32`, `torch.float64`), the
/// sparse CSR layout and `torch.cuda.current_stream`.
struct Torch {
    int32: Py<PyAny>,
    int64: Py<PyAny>,
    float32: Py<PyAny>,
    float64: Py<PyAny>,
    sparse_csr: Py<PyAny>,
    current_stream: Py<PyAny>,
}

/// PyTorch's objects, imported once.
fn torch(py: Python<'_>) -> PyResult<&Torch> {
    static TORCH: PyOnceLock<Torch> = PyOnceLock::new();
    TORCH.get_or_try_init(py, || {
        let t = py.import("torch")?;
        let get = |name: &str| t.getattr(name).map(Bound::unbind);
        Ok::<_, PyErr>(Torch {
            int32: get("int32")?,
            int64: get("int64")?,
            float32: get("float32")?,
            float64: get("float64")?,
            sparse_csr: get("sparse_csr")?,
            current_stream: py.import("torch.cuda")?.getattr("current_stream")?.unbind(),
        })
    })
}

/// A contiguous one-dimensional tensor's device address and length, or
/// `None`.
fn torch_tensor(x: &Bound<'_, PyAny>) -> PyResult<Option<(u64, usize)>> {
    let py = x.py();
    let Ok((len,)) = x.getattr(intern!(py, "shape"))?.extract::<(usize,)>() else {
        return Ok(None);
    };
    if !x
        .call_method0(intern!(py, "is_contiguous"))?
        .extract::<bool>()?
    {
        return Ok(None);
    }
    let ptr = if len == 0 {
        0
    } else {
        x.call_method0(intern!(py, "data_ptr"))?.extract()?
    };
    Ok(Some((ptr, len)))
}

/// Whether tensor `x`'s type is `wide` (`Some(true)`) or `narrow`
/// (`Some(false)`); `None` for other types.
fn torch_width(
    x: &Bound<'_, PyAny>,
    narrow: &Py<PyAny>,
    wide: &Py<PyAny>,
) -> PyResult<Option<bool>> {
    let dtype = x.getattr(intern!(x.py(), "dtype"))?;
    Ok(if dtype.is(wide) {
        Some(true)
    } else if dtype.is(narrow) {
        Some(false)
    } else {
        None
    })
}

/// The device operand of PyTorch sparse CSR tensor `m` on a CUDA device,
/// with float32 or float64 values, or `None` when the general path must
/// take it.
fn torch_operand(m: &Bound<'_, PyAny>, check: bool) -> PyResult<Option<Operand>> {
    let py = m.py();
    let t = torch(py)?;
    if !m.getattr(intern!(py, "layout"))?.is(&t.sparse_csr) {
        return Ok(None);
    }
    // Batched tensors (more than two dimensions) are the general path's.
    let Ok((nrows, ncols)) = m.getattr(intern!(py, "shape"))?.extract::<(usize, usize)>() else {
        return Ok(None);
    };
    let place = m.getattr(intern!(py, "device"))?;
    let on_cuda = place
        .getattr(intern!(py, "type"))?
        .eq(intern!(py, "cuda"))?;
    let Ok(Some(device)) = place
        .getattr(intern!(py, "index"))?
        .extract::<Option<i64>>()
    else {
        return Ok(None);
    };
    if !on_cuda || ncols > i32::MAX as usize {
        return Ok(None);
    }
    let crow = m.call_method0(intern!(py, "crow_indices"))?;
    let col = m.call_method0(intern!(py, "col_indices"))?;
    let val = m.call_method0(intern!(py, "values"))?;
    let widths = (
        torch_width(&crow, &t.int32, &t.int64)?,
        torch_width(&col, &t.int32, &t.int64)?,
        torch_width(&val, &t.float32, &t.float64)?,
    );
    let (Some(wide_crow), Some(wide_col), Some(double)) = widths else {
        return Ok(None);
    };
    let arrays = (
        torch_tensor(&crow)?,
        torch_tensor(&col)?,
        torch_tensor(&val)?,
    );
    let (Some(crow), Some(col), Some(val)) = arrays else {
        return Ok(None);
    };
    let nnz = val.1;
    if crow.1 != nrows + 1 || col.1 != nnz {
        return Ok(None);
    }
    let operand = (
        nrows, ncols, nnz, crow.0, wide_crow, col.0, wide_col, val.0, check,
    );
    Ok(Some((operand, device, double)))
}

/// The caller's current PyTorch stream on `device` (its `CUstream`
/// address), as `torch.cuda.current_stream(device).cuda_stream`.
fn torch_stream(py: Python<'_>, device: i64) -> PyResult<u64> {
    let get = torch(py)?.current_stream.bind(py);
    get.call1((device,))?
        .getattr(intern!(py, "cuda_stream"))?
        .extract()
}

/// C = A·B for `a` and `b` (`b` may be `a`), each read by `operand`, on
/// the caller's current stream of their device (`stream`), as
/// `matmul_device` with that stream: `(C, device)`, or `None` when either
/// operand needs the general path, or A's columns are not B's rows (which
/// that path names).
fn multiply(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    check: bool,
    operand: fn(&Bound<'_, PyAny>, bool) -> PyResult<Option<Operand>>,
    stream: fn(Python<'_>, i64) -> PyResult<u64>,
) -> PyResult<Option<(DeviceCsr, i64)>> {
    let py = a.py();
    let Some((oa, device, double)) = operand(a, check)? else {
        return Ok(None);
    };
    let ob = if a.is(b) {
        oa
    } else {
        match operand(b, check)? {
            Some((ob, on, d)) if (on, d) == (device, double) => ob,
            _ => return Ok(None),
        }
    };
    let Ok(ordinal) = usize::try_from(device) else {
        return Ok(None);
    };
    if oa.1 != ob.0 {
        return Ok(None);
    }
    let stream = stream(py, device)?;
    let dtype = if double { "float64" } else { "float32" };
    let c = matmul_device(py, oa, ob, dtype, ordinal, Some(stream))?;
    Ok(Some((c, device)))
}

/// `matmul_cupy(a, b, check)`: C = A·B for two CuPy CSR matrices (`b` may
/// be `a`) with values of one type, float32 or float64, on the caller's
/// current CuPy stream of their device: `(C, device)`, or `None` when
/// either needs the package's general path (see the module's comment).
///
/// # Errors
/// Those of `matmul_device`; attributes CuPy matrices lack.
#[pyfunction]
pub(crate) fn matmul_cupy(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    check: bool,
) -> PyResult<Option<(DeviceCsr, i64)>> {
    multiply(a, b, check, cupy_operand, cupy_stream)
}

/// `matmul_torch(a, b, check)`: as `matmul_cupy` for two PyTorch sparse
/// CSR tensors on a CUDA device, on the caller's current PyTorch stream.
///
/// # Errors
/// Those of `matmul_device`; PyTorch missing, or attributes its tensors
/// lack.
#[pyfunction]
pub(crate) fn matmul_torch(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    check: bool,
) -> PyResult<Option<(DeviceCsr, i64)>> {
    multiply(a, b, check, torch_operand, torch_stream)
}
