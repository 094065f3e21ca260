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


def _common_type(a_dtype, b_dtype) -> np.dtype:
    """The common type of A's and B's values; the product takes float32,
    float64, int32 and int64, checked over every rank before it starts (a
    rank whose blocks hold another is every rank's ValueError)."""
    return np.result_type(a_dtype, b_dtype)


def _arrays(m, name: str, dtype=np.float64):
    m = m.tocsr()
    return (
        m.shape[1],
        np.ascontiguousarray(m.indptr, dtype=np.int64),
        np.ascontiguousarray(m.indices, dtype=np.int64),
        np.ascontiguousarray(m.data, dtype=dtype),
    )


def _on_device(m) -> bool:
    """Whether ``m`` is a CuPy sparse matrix or a torch sparse tensor."""
    from . import _device

    return _device.is_cupy(m) or _device.is_torch(m)


def _device_blocks(comm, a, b, algorithm: str, exchange: str):
    """``matmul`` of CuPy or torch blocks, left on their GPUs: each rank's
    blocks prepared (checked, converted to one value type) and any rank's
    failure raised on every rank before the product's collectives."""
    from mpi4py import MPI

    from . import _device

    try:
        kind = "cupy" if _device.is_cupy(a) else "torch"
        if (kind == "cupy") != _device.is_cupy(b):
            raise TypeError("A's and B's blocks must be of one kind")
        dtype = _common_type(_device.values_dtype(a, kind), _device.values_dtype(b, kind))
        if dtype not in _VALUES:
            raise ValueError(f"unsupported dtype {dtype}: distributed products multiply "
                             "float32, float64, int32 or int64")
        prepared = _device._operands(kind, a, b, "cuda", dtype, True)
        failure = None
    except (TypeError, ValueError) as e:
        prepared, failure = None, f"{type(e).__name__}: {e}"
    failures = comm.allgather(failure)
    first = next((r for r, f in enumerate(failures) if f), None)
    if first is not None:
        raise ValueError(f"rank {first} of {comm.Get_size()}: {failures[first]}")
    device, oa, ob, hold, stream = prepared
    c, run = _spgemm.distributed_matmul_device(
        MPI._handleof(comm), oa, ob, np.dtype(dtype).name, device, stream, str(exchange), str(algorithm)
    )
    del hold
    return _device._result(kind, c, device), run


def matmul(comm, a, b, *, algorithm: str = "auto", fetch: str = "auto",
           backend: str = "auto", devices: tuple[int, ...] = (0,), exchange: str = "host"):
    """This rank's block of ``C = A @ B`` over the ranks of ``comm``.

    Collective: every rank of the mpi4py communicator ``comm`` calls it.
    ``a`` and ``b`` are this rank's rows of A (``rows x ncols(A)``) and of B
    (``rows x ncols(B)``), SciPy CSR (other formats are converted). ``algorithm`` is "auto", "1d" (each rank fetches the rows
    of B its rows of A reference) or "2d" (sparse SUMMA on a square number
    of ranks). ``fetch`` is how 1D reads other ranks' rows of B:
    "messages" (fetched and assembled), "shared" (read in place from the
    node's shared memory, every rank on one node; 1D under "auto") or
    "auto" (shared on one node where some rank references at least half of
    the rows of B that other ranks hold, messages otherwise).
    ``backend`` is "auto", "cpu", "cuda" or "hip"; a rank's GPU is
    ``devices[node-local rank % len(devices)]``. Values are multiplied in
    the common type of A's and B's (float32, float64, int32 or int64;
    integer sums exact, wrapping on overflow as in :func:`spgemm.matmul`),
    which C has.

    CuPy CSR matrices and PyTorch sparse CSR tensors on a GPU (with
    ``backend`` "auto" or "cuda") stay there: each rank's blocks are read
    in place on their GPU, the rows of B a rank needs move GPU to GPU by
    1D rows (``algorithm`` "auto" or "1d"), staged through pinned host
    memory (``exchange="host"``) or by NCCL (``exchange="nccl"``, one GPU
    a rank, the package built with the ``nccl`` feature), and C's block is
    left on the rank's GPU, of the blocks' kind. With ``backend="cpu"``
    CuPy blocks are copied to the host and multiplied there.

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

    if backend in ("auto", "cuda") and _on_device(a) and _on_device(b):
        return _device_blocks(comm, a, b, algorithm, exchange)
    local = comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
    device = devices[local % len(devices)]
    a, a_cupy = _on_host(a, "a")
    b, _ = _on_host(b, "b")
    dtype = _common_type(a.dtype, b.dtype)
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
