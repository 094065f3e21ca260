//! The common case of `spgemm.matmul` on CuPy CSR matrices, read from
//! Rust: value type, attributes, pointers and the caller's stream taken in
//! one call, where the package's Python took about 10 µs a call in a warm
//! loop and 25-70 µs ahead of a product (H100 host,
//! `docs/benchmarks/h100-python.md`), all of it before the first kernel.
//! Anything else (another format, values of two types or neither float32
//! nor float64, a strided array, other index types, wrong lengths,
//! operands on two devices or of mismatched shapes) is declined, and the
//! package's general path converts the operands or names the error.

use crate::device::{matmul_device, DeviceCsr, DeviceOperand};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// A contiguous one-dimensional CuPy array: `(device address, length,
/// dtype kind, item size, device ordinal)`, or `None` for anything else.
type Array = (u64, usize, char, usize, i64);

/// The facts of CuPy array `x` that the product needs, or `None` when it
/// is not a contiguous one-dimensional array.
fn array(x: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
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
fn operand(m: &Bound<'_, PyAny>, check: bool) -> PyResult<Option<Operand>> {
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
    .map(|name| m.getattr(name).and_then(|x| array(&x)));
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
fn current_stream(py: Python<'_>, device: i64) -> PyResult<u64> {
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

/// `matmul_cupy(a, b, check)`: C = A·B for two CuPy CSR matrices (`b`
/// may be `a`) with values of one type, float32 or float64, on the
/// caller's current stream of their device, as `matmul_device` with that
/// stream: `(C, device)`, or `None` when either operand needs the
/// package's general path (see the module's comment), or A's columns are
/// not B's rows (which that path names).
///
/// # Errors
/// Those of `matmul_device`; attributes CuPy matrices lack.
#[pyfunction]
pub(crate) fn matmul_cupy(
    py: Python<'_>,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    check: bool,
) -> PyResult<Option<(DeviceCsr, i64)>> {
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
    let stream = current_stream(py, device)?;
    let c = matmul_device(py, oa, ob, double, ordinal, Some(stream))?;
    Ok(Some((c, device)))
}
