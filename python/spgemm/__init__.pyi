"""Type stubs of spgemm: sparse matrix-matrix products for SciPy, CuPy and
PyTorch CSR matrices. See the docstrings in ``__init__.py``."""

from typing import Any, Literal, Optional, TypeVar, Union

import numpy as np

_M = TypeVar("_M")
_Backend = Literal["auto", "cpu", "cuda", "hip"]
_Precision = Optional[Union[Literal["float32", "float64", "int32", "int64"], type, np.dtype]]
_Check = Union[bool, Literal["canonical"]]

__version__: str

def backends() -> list[tuple[str, bool, str]]:
    """(name, available, detail) for "cpu", "cuda" and "hip"."""

def matmul(
    a: _M,
    b: Optional[_M] = None,
    *,
    backend: _Backend = "auto",
    precision: _Precision = None,
    check: _Check = True,
    semiring: str = "plus_times",
    mask: Optional[_M] = None,
    complement: bool = False,
    prune: Optional[float] = None,
    keep: Optional[int] = None,
    prune_columns: bool = False,
) -> _M:
    """C = A @ B (shapes (M, K) @ (K, N) -> (M, N)), of ``a``'s kind:
    scipy.sparse csr_array / csr_matrix, cupyx.scipy.sparse.csr_matrix or a
    torch sparse CSR tensor on the same device (complete in the order of
    the caller's current stream). Raises TypeError, ValueError,
    MemoryError or RuntimeError as documented. ``semiring``, ``mask``,
    ``complement``, ``prune`` and ``keep`` (GraphBLAS-style products) run
    on every backend for SciPy matrices; CuPy and torch matrices take every
    semiring, unmasked or under a mask of their kind or its complement, on
    their GPU (no pruning)."""

def matmul_reduce(
    a: _M,
    b: Optional[_M] = None,
    *,
    backend: _Backend = "auto",
    precision: _Precision = None,
    check: _Check = True,
    semiring: str = "plus_times",
    mask: Optional[_M] = None,
    complement: bool = False,
    prune: Optional[float] = None,
    keep: Optional[int] = None,
    prune_columns: bool = False,
) -> Union[float, int, bool]:
    """The semiring's (+) over the entries of C<M> = A (+).(x) B (matmul's
    arguments): a float, an int for integer values, a bool for bool ones; the monoid's
    identity when C has no entries. Under a structural mask a GPU reduces
    the dot products on the device without forming C. Raises as matmul."""

class Plan:
    """The symbolic phase of A @ B for SciPy, CuPy or PyTorch matrices."""

    @property
    def nnz(self) -> int: ...
    @property
    def backend(self) -> str: ...
    def numeric(self, a: Any, b: Optional[Any] = None, *, check: Optional[_Check] = None) -> Any:
        """C = A @ B for operands with the plan's structure and new values."""

def symbolic(
    a: Any,
    b: Optional[Any] = None,
    *,
    backend: _Backend = "auto",
    precision: _Precision = None,
    check: _Check = True,
) -> Plan:
    """The symbolic phase of A @ B, kept as a Plan."""

def ptap(
    a: _M,
    p: _M,
    *,
    backend: _Backend = "auto",
    precision: _Precision = None,
    check: _Check = True,
) -> _M:
    """C = P.T @ A @ P (A (K, K), P (K, L) -> (L, L)) for SciPy matrices,
    A @ P kept on the backend's device between the two products."""

def rap(
    r: _M,
    a: _M,
    p: _M,
    *,
    backend: _Backend = "auto",
    precision: _Precision = None,
    check: _Check = True,
) -> _M:
    """C = R @ A @ P (R (Q, M), A (M, K), P (K, L) -> (Q, L)) for SciPy
    matrices."""

def bfs_levels(
    a: _M,
    source: int,
    *,
    backend: _Backend = "auto",
    check: _Check = True,
) -> Any:
    """Each vertex's level (int32, -1 where no path leads) in a
    breadth-first search of A's graph from ``source``: a NumPy array for
    SciPy input, else an array of A's kind on its device."""

class GalerkinPlan:
    """Both symbolic phases of a Galerkin product, to recompute it for new
    values of A."""

    @property
    def nnz(self) -> int: ...
    @property
    def backend(self) -> str: ...
    def numeric(self, a: _M, *, check: Optional[_Check] = None, out: Optional[_M] = None) -> _M:
        """C = R @ A @ P for A of the plan's structure with new values;
        with ``out`` (SciPy), C's values written into that C in place."""

def galerkin(
    a: _M,
    p: _M,
    r: Optional[_M] = None,
    *,
    backend: _Backend = "auto",
    precision: _Precision = None,
    check: _Check = True,
) -> tuple[GalerkinPlan, _M]:
    """(plan, C) for C = P.T @ A @ P, or R @ A @ P with ``r``."""
