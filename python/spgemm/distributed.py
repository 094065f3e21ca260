"""Distributed products over MPI for mpi4py users.

Each rank passes its block of rows of A and of B as SciPy CSR matrices
whose column indices are global (a block of A is ``rows_r x ncols(A)``),
and gets its block of rows of C back, split as A is. The ranks' blocks of
A, in rank order, stack to A; those of B to B. Needs the package built with
the ``mpi`` feature (``MATURIN_PEP517_ARGS="--features mpi" pip install
./python``, against the MPI that mpi4py uses) and mpi4py.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as _sp

from . import _spgemm

__all__ = ["matmul", "available"]


def available() -> bool:
    """Whether this build has the distributed product (the ``mpi`` feature)."""
    return hasattr(_spgemm, "distributed_matmul")


def _on_host(m, name: str):
    """``(m as SciPy, whether it was CuPy)``: a CuPy sparse matrix is
    copied to the host (the ranks exchange through host memory)."""
    if _sp.issparse(m):
        return m, False
    if type(m).__module__.startswith("cupyx.scipy.sparse"):
        return m.get(), True
    raise TypeError(f"{name} must be a SciPy or CuPy sparse matrix, not {type(m).__name__}")


_VALUES = tuple(np.dtype(t) for t in (np.float32, np.float64, np.int32, np.int64))


def _value_type(a, b) -> np.dtype:
    """The common type of A's and B's values, one of float32, float64,
    int32 and int64 (ValueError otherwise, before any rank communicates:
    every rank's blocks are of their matrices' types)."""
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype not in _VALUES:
        raise ValueError(
            f"unsupported dtype {dtype}: distributed products multiply float32, float64, int32 or int64"
        )
    return dtype


def _arrays(m, name: str, dtype=np.float64):
    m = m.tocsr()
    return (
        m.shape[1],
        np.ascontiguousarray(m.indptr, dtype=np.int64),
        np.ascontiguousarray(m.indices, dtype=np.int64),
        np.ascontiguousarray(m.data, dtype=dtype),
    )


def matmul(comm, a, b, *, algorithm: str = "auto", fetch: str = "messages",
           backend: str = "auto", devices: tuple[int, ...] = (0,)):
    """This rank's block of ``C = A @ B`` over the ranks of ``comm``.

    Collective: every rank of the mpi4py communicator ``comm`` calls it.
    ``a`` and ``b`` are this rank's rows of A (``rows x ncols(A)``) and of B
    (``rows x ncols(B)``), SciPy CSR (other formats are converted). ``algorithm`` is "auto", "1d" (each rank fetches the rows
    of B its rows of A reference) or "2d" (sparse SUMMA on a square number
    of ranks). ``fetch`` is how 1D reads other ranks' rows of B:
    "messages" (fetched and assembled) or "shared" (read in place from the
    node's shared memory, every rank on one node; 1D under "auto").
    ``backend`` is "auto", "cpu", "cuda" or "hip"; a rank's GPU is
    ``devices[node-local rank % len(devices)]``. Values are multiplied in
    the common type of A's and B's (float32, float64, int32 or int64;
    integer sums exact, wrapping on overflow as in :func:`spgemm.matmul`),
    which C has.

    Returns ``(c, algorithm_run)``: this rank's rows of C
    (``rows_of_a x ncols(B)``), CuPy CSR when ``a`` was CuPy and SciPy CSR
    otherwise, and the algorithm that ran.

    Raises ValueError (bad blocks, shapes that do not fit, a 2D run on a
    number of ranks that is not a square, shared rows on ranks of several
    nodes, an unknown ``algorithm`` or ``fetch``), MemoryError or RuntimeError
    (backend, device) on every rank alike, naming the first rank that
    failed; RuntimeError when the package was built without ``mpi``.
    """
    if not available():
        raise RuntimeError(
            "spgemm was built without the mpi feature: "
            'MATURIN_PEP517_ARGS="--features mpi" pip install ./python'
        )
    from mpi4py import MPI

    local = comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    device = devices[local % len(devices)]
    a, a_cupy = _on_host(a, "a")
    b, _ = _on_host(b, "b")
    dtype = _value_type(a, b)
    a_ncols, ap, ai, ad = _arrays(a, "a", dtype)
    b_ncols, bp, bi, bd = _arrays(b, "b", dtype)
    indptr, indices, data, run = _spgemm.distributed_matmul(
        MPI._handleof(comm), a_ncols, ap, ai, ad, b_ncols, bp, bi, bd,
        algorithm, fetch, backend, device,
    )
    c = _sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, b_ncols))
    if a_cupy:
        import cupyx.scipy.sparse as _csp

        c = _csp.csr_matrix(c)
    return c, run
