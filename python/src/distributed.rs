//! `spgemm.distributed.matmul` for mpi4py users (feature `mpi`): each
//! rank's block of rows of A and B (CSR arrays, global column indices) in,
//! its block of C out, over the ranks of the mpi4py communicator.

use numpy::{Element, IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spgemm::distributed::mpi::raw::FromRaw;
use spgemm::distributed::mpi::topology::SimpleCommunicator;
use spgemm::distributed::{multiply, Choice, DistCsr, Fetch, Options};
use spgemm::{Backend, Scalar};
use std::mem::ManuallyDrop;

/// A communicator handle used while the GIL is released: the product
/// runs on this same thread (`Python::detach` does not move it), so the
/// handle never crosses threads.
pub(crate) struct Borrowed<C>(pub(crate) C);
impl<'a> Borrowed<&'a SimpleCommunicator> {
    /// The communicator (a method, so that a closure captures the wrapper).
    pub(crate) fn get(&self) -> &'a SimpleCommunicator {
        self.0
    }
}

// SAFETY: see above; the handle stays on the calling thread.
unsafe impl<C> Send for Borrowed<C> {}
// SAFETY: as above.
unsafe impl<C> Sync for Borrowed<C> {}

/// This rank's block as a `DistCsr`: the arrays are checked first and
/// the check agreed by every rank, so that a bad block on one rank is an
/// error on all, not a rank waiting for the others.
fn block<T: Scalar + Element>(
    comm: &SimpleCommunicator,
    ncols: u64,
    indptr: &PyReadonlyArray1<'_, i64>,
    indices: &PyReadonlyArray1<'_, i64>,
    data: &PyReadonlyArray1<'_, T>,
) -> PyResult<DistCsr<T>> {
    let arrays = (|| {
        let bad = |e: numpy::AsSliceError| spgemm::distributed::Error::Argument(e.to_string());
        let (p, c, v) = (
            indptr.as_slice().map_err(bad)?,
            indices.as_slice().map_err(bad)?,
            data.as_slice().map_err(bad)?,
        );
        let offsets = p
            .iter()
            .map(|&o| usize::try_from(o))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| spgemm::distributed::Error::Argument("a row offset is negative".into()))?;
        let cols = c
            .iter()
            .map(|&x| u64::try_from(x))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| {
                spgemm::distributed::Error::Argument("a column index is negative".into())
            })?;
        Ok((offsets, cols, v.to_vec()))
    })();
    let (offsets, cols, values) =
        spgemm::distributed::comm::agree(comm, arrays).map_err(|e| crate::to_py(e.into()))?;
    DistCsr::from_local(comm, ncols, offsets, cols, values).map_err(|e| crate::to_py(e.into()))
}

/// Arrays of C's block: row offsets, global columns, values (of A's and
/// B's type), and the algorithm run.
type Block<'py> = (
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyAny>,
    String,
);

/// `C = A·B` over the ranks of the MPI communicator whose handle is
/// `comm` (mpi4py's `MPI._handleof(comm)`): this rank's rows of A
/// (`a_indptr`, `a_indices`, `a_data`; A has `a_ncols` columns) and of B,
/// its rows of C back. Collective; every rank's error is every rank's.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (comm, a_ncols, a_indptr, a_indices, a_data, b_ncols, b_indptr, b_indices, b_data, algorithm, fetch, backend, device))]
pub fn distributed_matmul<'py>(
    py: Python<'py>,
    comm: usize,
    a_ncols: u64,
    a_indptr: PyReadonlyArray1<'py, i64>,
    a_indices: PyReadonlyArray1<'py, i64>,
    a_data: &Bound<'py, PyAny>,
    b_ncols: u64,
    b_indptr: PyReadonlyArray1<'py, i64>,
    b_indices: PyReadonlyArray1<'py, i64>,
    b_data: &Bound<'py, PyAny>,
    algorithm: &str,
    fetch: &str,
    backend: &str,
    device: usize,
) -> PyResult<Block<'py>> {
    let algorithm: Choice = algorithm.parse().map_err(PyValueError::new_err)?;
    let fetch: Fetch = fetch.parse().map_err(PyValueError::new_err)?;
    // SAFETY: mpi4py's handle of a live communicator, used only during
    // this call.
    let comm = unsafe { borrowed_comm(comm) };
    let comm = &*comm.0;
    let be = agreed_backend(comm, backend, device)?;
    let of = |d: &Bound<'py, PyAny>| -> Option<String> {
        d.getattr("dtype")
            .and_then(|t| t.str())
            .map(|t| t.to_string())
            .ok()
    };
    let (ta, tb) = (of(a_data), of(b_data));
    agreed_value_type(comm, ta.as_deref().filter(|_| ta == tb))?;
    let a = (a_ncols, &a_indptr, &a_indices, a_data);
    let b = (b_ncols, &b_indptr, &b_indices, b_data);
    let options = Options { algorithm, fetch };
    let run = |be: &Backend| -> Option<PyResult<Block<'py>>> {
        product::<f64>(py, comm, a, b, be, options)
            .or_else(|| product::<f32>(py, comm, a, b, be, options))
            .or_else(|| product::<i64>(py, comm, a, b, be, options))
            .or_else(|| product::<i32>(py, comm, a, b, be, options))
    };
    run(&be).unwrap_or_else(|| {
        Err(PyValueError::new_err(
            "the blocks' values must be one of float32, float64, int32 and int64, the same for A and B",
        ))
    })
}

/// The communicator whose mpi4py handle is `handle`, borrowed (never
/// freed here).
///
/// # Safety
/// `handle` is mpi4py's handle of a live communicator (`MPI._handleof`),
/// which outlives the borrow.
pub(crate) unsafe fn borrowed_comm(handle: usize) -> Borrowed<ManuallyDrop<SimpleCommunicator>> {
    type RawComm = spgemm::distributed::mpi::ffi::MPI_Comm;
    const _: () = assert!(std::mem::size_of::<RawComm>() <= std::mem::size_of::<usize>());
    // SAFETY: an `MPI_Comm` widened to an integer (a pointer under
    // OpenMPI, an int under MPICH: its low bytes on the little-endian
    // hosts MPI runs on), live (the caller's guarantee).
    Borrowed(ManuallyDrop::new(unsafe {
        SimpleCommunicator::from_raw(std::mem::transmute_copy::<usize, RawComm>(&handle))
    }))
}

/// The backend `name` on GPU `device`, opened on every rank (an error on
/// any is every rank's).
pub(crate) fn agreed_backend(
    comm: &SimpleCommunicator,
    name: &str,
    device: usize,
) -> PyResult<std::sync::Arc<Backend>> {
    let be = crate::open(name, device);
    spgemm::distributed::comm::agree(
        comm,
        be.map_err(|e| spgemm::distributed::Error::Argument(e.to_string())),
    )
    .map_err(|e| crate::to_py(e.into()))
}

/// The value types distributed products take, by NumPy's names.
pub(crate) const VALUE_TYPES: [&str; 4] = ["float64", "float32", "int64", "int32"];

/// Checks that every rank's blocks hold values of one type of
/// [`VALUE_TYPES`], `dtype` here (`None`: not one type, or another
/// type): ranks of different types would exchange values of different
/// sizes. The same one-line `ValueError` on every rank otherwise.
pub(crate) fn agreed_value_type(comm: &SimpleCommunicator, dtype: Option<&str>) -> PyResult<()> {
    let names = VALUE_TYPES;
    let code = dtype
        .and_then(|d| names.iter().position(|n| *n == d))
        .unwrap_or(names.len()) as u64;
    let codes = spgemm::distributed::comm::all_gather(comm, code);
    if let Some(q) = codes.iter().position(|&c| c >= names.len() as u64) {
        return Err(PyValueError::new_err(format!(
            "rank {q}'s blocks of A and B do not hold values of one type of float32, float64, \
             int32 and int64"
        )));
    }
    if let Some(q) = codes.iter().position(|&c| c != codes[0]) {
        return Err(PyValueError::new_err(format!(
            "rank {q}'s blocks hold {} values where rank 0's hold {}: every rank's must be of \
             one type",
            names[codes[q] as usize], names[codes[0] as usize]
        )));
    }
    Ok(())
}

/// A block's arrays: its columns, row offsets, global columns and values.
type Arrays<'a, 'py> = (
    u64,
    &'a PyReadonlyArray1<'py, i64>,
    &'a PyReadonlyArray1<'py, i64>,
    &'a Bound<'py, PyAny>,
);

/// `C = A·B` for values of type `T`; `None` when A's or B's values are not
/// of `T` (the same on every rank: the caller converted them alike).
fn product<'py, T: Scalar + Element>(
    py: Python<'py>,
    comm: &SimpleCommunicator,
    (a_ncols, a_indptr, a_indices, a_data): Arrays<'_, 'py>,
    (b_ncols, b_indptr, b_indices, b_data): Arrays<'_, 'py>,
    be: &Backend,
    options: Options,
) -> Option<PyResult<Block<'py>>> {
    let a_data = a_data.extract::<PyReadonlyArray1<'py, T>>().ok()?;
    let b_data = b_data.extract::<PyReadonlyArray1<'py, T>>().ok()?;
    Some((|| {
        let a = block(comm, a_ncols, a_indptr, a_indices, &a_data)?;
        let b = block(comm, b_ncols, b_indptr, b_indices, &b_data)?;
        let shared = Borrowed(comm);
        let (c, stats) = py
            .detach(|| multiply(shared.get(), &a, &b, be, options))
            .map_err(|e| crate::to_py(e.into()))?;
        let local = c.local();
        let indptr: Vec<i64> = local.row_offsets().iter().map(|&o| o as i64).collect();
        let indices: Vec<i64> = local
            .col_indices()
            .iter()
            .map(|&k| c.col_map()[k as usize] as i64)
            .collect();
        Ok((
            indptr.into_pyarray(py),
            indices.into_pyarray(py),
            local.values().to_vec().into_pyarray(py).into_any(),
            stats.algorithm.to_string(),
        ))
    })())
}
