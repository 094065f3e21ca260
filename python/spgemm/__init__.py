"""Sparse matrix-matrix products, C = A @ B, on NVIDIA GPUs and multicore CPUs.

``spgemm.matmul`` multiplies SciPy CSR matrices (on the host; the GIL is
released while it runs) and CuPy or PyTorch CSR matrices (on their device,
read in place, no round trip through the host) and returns the same kind of
matrix. ``spgemm.symbolic`` keeps the structure of a product to recompute
it with new values. ``spgemm.distributed.matmul`` multiplies over the
ranks of an mpi4py communicator (built with the ``mpi`` feature). The Rust
library underneath is ``spgemm``; see ``python/README.md``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as _sp

from . import _spgemm
from . import _device

__version__: str = _spgemm.__version__

__all__ = [
    "matmul",
    "matmul_reduce",
    "ptap",
    "rap",
    "galerkin",
    "GalerkinPlan",
    "symbolic",
    "bfs_levels",
    "backends",
    "Plan",
    "__version__",
]

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_INTEGERS = (np.dtype(np.int32), np.dtype(np.int64))


def backends() -> list[tuple[str, bool, str]]:
    """The backends of this build: ``(name, available, detail)`` for "cpu",
    "cuda" and "hip". ``detail`` names the device when the backend is
    available and says why not otherwise (not compiled in, no driver, no
    device). Opening a GPU backend here also compiles or loads its kernels,
    so later products start at once.
    """
    return _spgemm.backends()


def _precision(a_dtype, b_dtype, precision, integers=False) -> np.dtype:
    """The value type of the product: ``precision`` when given, else the
    common type of A and B, which must be float32 or float64, or int32 or
    int64 where ``integers`` (``matmul`` on SciPy matrices and PyTorch
    tensors)."""
    allowed = _FLOATS + _INTEGERS if integers else _FLOATS
    names = "float32, float64, int32 or int64" if integers else "float32 or float64"
    if precision is not None:
        want = np.dtype(precision)
        if want not in allowed:
            raise ValueError(f"precision must be {names}, not {want}{_where_integers(want)}")
        for d in (a_dtype, b_dtype):
            if np.dtype(d).kind == "c":
                raise ValueError(f"complex values ({np.dtype(d)}) are not supported")
        return want
    want = np.result_type(a_dtype, b_dtype)
    if want not in allowed:
        raise ValueError(
            f"unsupported dtype {want}: spgemm multiplies {names} "
            f"(pass precision= to convert other real types){_where_integers(want)}"
        )
    return want


def _where_integers(dtype) -> str:
    """Where integer values of ``dtype`` are taken, when they are not here."""
    if np.dtype(dtype) in _INTEGERS:
        return (
            "; integer values are multiplied by matmul on SciPy matrices and PyTorch "
            "tensors (CuPy's sparse matrices hold none)"
        )
    return ""


def _host_operand(m, dtype: np.dtype, values=True) -> tuple:
    """``(nrows, ncols, indptr, indices, data)`` of a SciPy matrix, its
    arrays borrowed (copied only to convert the value type, or to make a
    non-CSR matrix CSR). Values converted to integers must be integers of
    the type unless ``values`` is False (a mask, whose values are not
    read)."""
    if m.format != "csr":
        m = m.tocsr()
    nrows, ncols = m.shape
    idx = []
    for name in ("indptr", "indices"):
        arr = getattr(m, name)
        if arr.dtype not in (np.int32, np.int64):
            arr = arr.astype(np.int64)
        idx.append(np.ascontiguousarray(arr))
    if values and dtype.kind == "i" and m.data.dtype != dtype:
        # Converting to integers must not change a value (2.5, NaN, or
        # one past the type's range).
        with np.errstate(invalid="ignore"):
            data = np.ascontiguousarray(m.data, dtype=dtype)
            bad = np.flatnonzero(data != m.data)
        if bad.size:
            raise ValueError(f"data[{bad[0]}] = {m.data[bad[0]]} is not a value of {dtype}")
    else:
        data = np.ascontiguousarray(m.data, dtype=dtype)
    return (nrows, ncols, idx[0], idx[1], data)


def _kind(m) -> str:
    """"scipy", "cupy" or "torch", or TypeError for anything else."""
    if _sp.issparse(m):
        return "scipy"
    if _device.is_cupy(m):
        return "cupy"
    if _device.is_torch(m):
        return "torch"
    raise TypeError(
        f"expected a scipy.sparse matrix or array, a cupyx.scipy.sparse matrix or a "
        f"torch sparse CSR or CSC tensor, not {type(m).__module__}.{type(m).__name__}"
    )


def _kinds(a, b) -> str:
    ka = _kind(a)
    kb = ka if b is a else _kind(b)
    if ka != kb:
        raise TypeError(f"A and B must be of the same kind, not {ka} and {kb}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(
            f"dimension mismatch: A is {a.shape[0]}x{a.shape[1]} but B is "
            f"{b.shape[0]}x{b.shape[1]} (A's columns must equal B's rows)"
        )
    return ka


def _host_result_of(is_array: bool, shape, arrays):
    """C as SciPy CSR (an array when ``is_array``) from its arrays."""
    indptr, indices, data = arrays
    cls = _sp.csr_array if is_array else _sp.csr_matrix
    return cls((data, indices, indptr), shape=shape)


def _host_result(a, shape, arrays):
    return _host_result_of(isinstance(a, _sp.sparray), shape, arrays)


def _native_check(check, kind: str) -> bool:
    """Whether the native call checks that rows are sorted without
    duplicates: SciPy operands only with ``check="canonical"`` (non-canonical
    ones are multiplied as they are otherwise); device operands with
    ``check=True`` or ``"canonical"``."""
    if check is not True and check is not False and check != "canonical":
        raise ValueError(f"check must be True, False or 'canonical', not {check!r}")
    if kind == "scipy":
        return check == "canonical"
    return check is not False


def matmul(
    a,
    b=None,
    *,
    backend: str = "auto",
    precision=None,
    check=True,
    semiring: str = "plus_times",
    mask=None,
    complement: bool = False,
    prune=None,
    keep=None,
    prune_columns: bool = False,
):
    """C = A @ B for sparse matrices, returned as the same kind as ``a``;
    with ``semiring``, ``mask`` or ``prune`` / ``keep``, C<M> = A (+).(x) B
    as GraphBLAS computes it.

    Parameters
    ----------
    a : scipy.sparse matrix or array, cupyx.scipy.sparse.csr_matrix, or
        torch sparse CSR tensor on a CUDA device; shape (M, K).
        SciPy matrices in other formats (COO, CSC, ...) are converted with
        ``tocsr()`` first, which copies them.
    b : same kind as ``a``, shape (K, N); ``None`` (the default) means ``a``.
        With a semiring, mask or pruning, a SciPy CSC ``b`` (such as
        ``x.T`` for a CSR ``x``) is read as the CSR arrays of its
        transpose, not converted, and so is a CuPy CSC ``b`` under a
        structural mask: ``matmul(L, L.T, semiring="plus_pair", mask=L)``
        counts triangles from L alone, its dot products reading L's rows
        (as GraphBLAS's transposing descriptor does).
    backend : "auto" (a GPU when one is present, else the CPU), "cpu",
        "cuda" or "hip". CuPy and PyTorch inputs use the GPU they are on.
    precision : None, "float32", "float64", or for SciPy matrices and
        PyTorch tensors "int32" or "int64" (integer values: counts,
        weights; sums exact, wrapping on overflow as GraphBLAS's INT32 and
        INT64 do; CuPy's sparse matrices hold no integers). None: the
        common type of A's and B's values, which must be one of these,
        or bool for both (SciPy matrices and PyTorch tensors: C is bool,
        the semiring taken in its GraphBLAS form on booleans, "plus_times",
        "lor_land" and "max_times" as or-and, "plus_pair" and "any_pair"
        as any-pair, "min_plus" as and-or, "max_plus" as or-or; computed
        on 0 / 1 in int32, the values converted in and out; ``prune``
        drops the false entries for a threshold in (0, 1] and ``keep``
        prefers true ones, except with "min_plus" and "max_plus", which
        refuse them). Converting to an integer type
        refuses a value it would change (2.5, NaN, out of range), naming
        its position in ``data``; a mask's values are not read.
    check : True (the default), "canonical" or False. Index bounds and
        indptr are always checked. SciPy matrices that are not in SciPy's
        canonical format (rows unsorted, or a column repeated in a row) are
        accepted unless ``check="canonical"``: they are multiplied as they
        are, every stored entry contributing, as SciPy's own ``@`` does, with
        no copy and no extra pass (C is canonical either way).
        ``check="canonical"`` refuses them instead, naming the first row at
        fault. CuPy and PyTorch matrices, read in place on the device, must
        have sorted rows without duplicates under True and "canonical" (one
        pass over their indices on the device); False skips that check there
        and multiplies them as they are.
    semiring : the product's semiring, by its GraphBLAS name:
        "plus_times" (the default), "min_plus", "max_plus", "max_times",
        "lor_land" (or "or_and": values read as true when nonzero, C holds
        1 and 0), "plus_pair" (C counts the k joining i and j) and
        "any_pair" (C's structure, values 1); the last two never read
        A's or B's values. C has an entry wherever some k joins i and j.
    mask : a matrix of ``a``'s kind, shape (M, N), whose structure (not its values)
        selects C's entries: C keeps only entries where ``mask`` has one
        (C<M>), or with ``complement=True`` only where it has none (C<!M>).
        Under a mask, masked-out products are never accumulated; under its
        complement the CPU skips them, and so do GPUs where C's grid is
        small (a breadth-first search's step: one row, pushed into a
        bitmap past the mask's); elsewhere GPUs accumulate them and drop
        their entries on the device.
    complement : use the complement of ``mask``'s structure.
    prune : drop C's entries of magnitude below this threshold (>= 0).
    keep : keep at most this many entries of largest magnitude per row
        (ties to the lower column), after ``prune``.
    prune_columns : apply ``prune`` and ``keep`` to C's columns rather than
        its rows (HipMCL's column-stochastic form), by computing the rows of
        C.T = B.T (+).(x) A.T.

    Products with a semiring other than "plus_times", a mask, ``prune`` or
    ``keep`` on SciPy matrices run on every backend ("auto": a GPU when one
    is present): the CPU backend in one pass; GPU backends on the first
    GPU, every semiring without a mask (the product's kernels compiled with
    the semiring), under a mask (a dot product per entry of the mask) or
    its complement (the product, then the mask's entries dropped on the
    device), C pruned on the device before it is copied back (unmasked
    products prune each row as they write it where the row is in shared
    memory: in one pass for short rows, so that C never exists unpruned
    there, and in the numeric phase's hash tables after a symbolic phase;
    other rows are pruned after the product). On CuPy and
    PyTorch matrices (the mask of the same kind, on the same GPU) the same
    GPU products run, pruning included, C left on the GPU and complete when
    the call returns. On device matrices a mask needs A's
    and B's rows sorted without duplicates, a complemented mask its own
    rows sorted (``check`` True verifies them).

    Returns
    -------
    C, shape (M, N), of ``a``'s kind: ``csr_array`` for SciPy arrays,
    ``csr_matrix`` for SciPy matrices, CuPy ``csr_matrix`` or a torch
    sparse CSR tensor on the same device, complete in the order of the
    caller's current stream on that device (the call returns once the
    product is enqueued, as CuPy's and PyTorch's own operations do; work
    on another stream must wait for that one). Rows are sorted; entries whose
    products cancel to zero are kept as explicit zeros. Host results have
    int32 indices when nnz(C) and both dimensions fit, int64 otherwise.

    Raises
    ------
    TypeError: inputs that are not sparse matrices, or of different kinds.
    ValueError: shape mismatch (of the mask too), an unknown semiring, a
        negative ``prune`` or ``keep``, unsupported dtype, malformed CSR (out-of-range
        or negative indices, decreasing indptr; unsorted rows or duplicates
        where ``check`` asks for sorted rows), naming the row, column or
        position at fault; a ``check`` other than True, False, "canonical".
    MemoryError: host or device memory exhausted (products too large for the
        device are computed in chunks of rows first).
    RuntimeError: the requested backend cannot run (not compiled in, no
        driver or no device), or the device failed.
    """
    if b is None:
        b = a
    extras = (semiring, mask, complement, prune, keep, prune_columns)
    if precision is None and _booleans(a, b):
        return _boolean_product(a, b, backend, check, *extras, reduce=False)
    if semiring != "plus_times" or mask is not None or prune is not None or keep is not None:
        return _matmul_spec(a, b, backend, precision, check, *extras)
    if precision is None:
        # Host work here delays the first kernel: the common case of device
        # inputs skips it.
        c = _device.matmul_common(a, b, backend, _native_check(check, "cupy"))
        if c is not None:
            return c
    kind = _kinds(a, b)
    dtypes = (_device.values_dtype(a, kind), _device.values_dtype(b, kind))
    dtype = _precision(*dtypes, precision, integers=kind != "cupy")
    if kind != "scipy":
        return _device.matmul(kind, a, b, backend, dtype, _native_check(check, kind))
    oa = _host_operand(a, dtype)
    ob = oa if b is a else _host_operand(b, dtype)
    c = _spgemm.matmul(oa, ob, backend, _native_check(check, kind))
    return _host_result(a, (a.shape[0], b.shape[1]), c)


def matmul_reduce(
    a,
    b=None,
    *,
    backend: str = "auto",
    precision=None,
    check=True,
    semiring: str = "plus_times",
    mask=None,
    complement: bool = False,
    prune=None,
    keep=None,
    prune_columns: bool = False,
):
    """The (+)-reduction of C<M> = A (+).(x) B to one value: C's entries
    combined by the semiring's monoid, as GraphBLAS's reduce to a scalar
    (python-graphblas's ``C.reduce_scalar()``) gives it. Triangle
    counting is ``matmul_reduce(L, L.T, semiring="plus_pair", mask=L)``.

    Takes exactly :func:`matmul`'s arguments and reads them as it does.
    Under a structural mask (no complement, no pruning) a GPU reduces the
    mask's dot products on the device and C is never formed: nothing of C
    is allocated, compacted or copied, one value comes back. Otherwise C
    is formed as :func:`matmul` forms it and its values reduced (on the
    host, after C's values are copied there for device matrices).

    Returns
    -------
    A Python float (an int for int32 and int64 values, a bool for bool
    ones): the sum for
    "plus_times" and "plus_pair", the least value for "min_plus", the
    greatest for "max_plus" and "max_times" (NaN values skipped), 1 or 0
    for "lor_land" and "any_pair"; the monoid's identity when C has no
    entries (0, +inf, -inf; the type's largest or smallest value for
    integers). Floating-point sums on a GPU combine the entries in no
    fixed order, so they may differ from run to run in their last bits.

    Raises
    ------
    As :func:`matmul`.
    """
    if b is None:
        b = a
    extras = (semiring, mask, complement, prune, keep, prune_columns)
    if precision is None and _booleans(a, b):
        return _boolean_product(a, b, backend, check, *extras, reduce=True)
    return _matmul_spec(a, b, backend, precision, check, *extras, reduce=True)


# The semirings on bool values, as GraphBLAS renames them for BOOL
# (plus -> lor, times -> land, min -> land, max -> lor, pair -> 1, any ->
# any): each computed as the semiring named here on 0 / 1 in int32. The
# exact ones give exactly 0 and 1, so that prune and keep select what they
# select on booleans; min_plus (land_lor) and max_plus (lor_lor) give 0 to
# 2, true where at least 1.
_BOOLEAN = {
    "plus_times": ("lor_land", True),
    "lor_land": ("lor_land", True),
    "or_and": ("lor_land", True),
    "max_times": ("lor_land", True),
    "plus_pair": ("any_pair", True),
    "any_pair": ("any_pair", True),
    "min_plus": ("min_plus", False),
    "max_plus": ("max_plus", False),
}


def _booleans(a, b) -> bool:
    """Whether A's and B's values are both bool (SciPy matrices or torch
    tensors)."""
    kind = _kinds(a, b)
    return all(np.dtype(_device.values_dtype(m, kind)) == np.bool_ for m in (a, b))


def _boolean_product(a, b, backend, check, semiring, mask, complement, prune, keep, columns, reduce):
    """``matmul`` (``matmul_reduce`` with ``reduce``) of bool matrices: the
    semiring's GraphBLAS form on booleans, computed on 0 / 1 values in
    int32 (A's and B's values converted, C's converted back to bool:
    nonzero is true)."""
    name = str(semiring).strip().lower().replace("-", "_")
    if name not in _BOOLEAN:
        raise ValueError(
            f"semiring {semiring!r} on bool values: bool products take "
            f"{', '.join(sorted(_BOOLEAN))} (pass precision= to multiply the values as numbers)"
        )
    ring, exact = _BOOLEAN[name]
    if (prune is not None or keep is not None) and not exact:
        raise ValueError(
            f"prune and keep with {name} on bool values: its int32 results are not the booleans "
            "(pass precision= to prune the values as numbers)"
        )
    if prune is not None:
        tau = float(prune)
        if not tau >= 0:
            raise ValueError(f"prune: the threshold must be a number at least 0, not {prune}")
        # False is 0 and true 1: a threshold in (0, 1] drops the false
        # entries, one above 1 drops every entry.
        prune = min(math.ceil(tau), 2)
    c = _matmul_spec(a, b, backend, "int32", check, ring, mask, complement, prune, keep, columns, reduce=reduce)
    if reduce:
        return bool(c >= 1)
    if _sp.issparse(c):
        return c.astype(np.bool_)
    import torch

    return torch.sparse_csr_tensor(c.crow_indices(), c.col_indices(), c.values().bool(), size=c.shape)


def _matmul_spec(a, b, backend, precision, check, semiring, mask, complement, prune, keep, columns,
                 reduce=False):
    """``matmul`` with a semiring, mask or pruning (``matmul_reduce`` with
    ``reduce``): SciPy matrices on any backend; CuPy and torch matrices on
    their GPU."""
    kind = _kinds(a, b)
    if mask is not None and _kind(mask) != kind:
        raise TypeError(f"the mask must be of A's kind ({kind}), not {_kind(mask)}")
    if keep is not None and (not isinstance(keep, (int, np.integer)) or keep < 0):
        raise ValueError(f"keep must be an integer at least 0, not {keep!r}")
    dtypes = (_device.values_dtype(a, kind), _device.values_dtype(b, kind))
    dtype = _precision(*dtypes, precision, integers=kind != "cupy")
    if kind != "scipy":
        check = _native_check(check, kind)
        if reduce and mask is not None and not complement and prune is None and keep is None:
            return _device.matmul_reduce(kind, a, b, mask, backend, dtype, check, semiring)
        c = _device.matmul_spec(
            kind, a, b, mask, complement, backend, dtype, check, semiring, prune, keep, columns
        )
        if not reduce:
            return c
        # C formed on the device, its values reduced on the host.
        values = c.data.get() if kind == "cupy" else c.values().cpu().numpy()
        return _spgemm.reduce_values(values, str(semiring))
    oa = _host_operand(a, dtype)
    # A CSC matrix B (``x.T`` of a CSR x) holds Bᵀ's CSR arrays: read as
    # they are, not converted.
    b_transposed = b.format == "csc" and b is not a
    bt = b.T if b_transposed else b
    ob = oa if bt is a else _host_operand(bt, dtype)
    # The mask as A's or B's own arrays when it is A or B (converted once).
    om = oa if mask is a else ob if mask is b and not b_transposed else None
    if om is None and mask is not None:
        om = _host_operand(mask, dtype, values=False)
    c = _spgemm.matmul_spec(
        oa,
        ob,
        om,
        backend,
        _native_check(check, kind),
        str(semiring),
        bool(complement),
        None if prune is None else float(prune),
        None if keep is None else int(keep),
        bool(columns),
        b_transposed,
        bool(reduce),
    )
    return c if reduce else _host_result(a, (a.shape[0], b.shape[1]), c)


class GalerkinPlan:
    """Both symbolic phases of a Galerkin product C = R @ A @ P (R = P.T for
    :func:`galerkin` without ``r``), to recompute it for new values of A with
    the same structure (an algebraic multigrid re-setup) by the two numeric
    phases only. Built by :func:`galerkin`; GPU backends keep R, A, P and
    A @ P on the device. A plan built from CuPy or PyTorch matrices keeps
    their A's structure arrays, P and R, which must stay unchanged while it
    lives, and takes A of that kind."""

    def __init__(self, native, shape, dtype, check, a_is_array, kind="scipy"):
        self._native = native
        self._shape = shape
        self._dtype = dtype
        self._check = check
        self._a_is_array = a_is_array
        self._kind = kind

    @property
    def nnz(self) -> int:
        """Number of entries of C."""
        return self._native.nnz

    @property
    def backend(self) -> str:
        """The backend the plan runs on ("cpu", "cuda" or "hip")."""
        return self._native.backend if self._kind == "scipy" else "cuda"

    def numeric(self, a, *, check=None, out=None):
        """C = R @ A @ P for ``a`` (of the kind the plan was built from) with
        exactly the structure the plan was built for and new values
        (converted to the plan's dtype), returned as :func:`galerkin`
        returned C: SciPy, or CuPy / torch on their device, complete.

        ``out`` (SciPy plans): the C that :func:`galerkin` or an earlier
        ``numeric`` of this plan returned, its structure unchanged; C's new
        values are written into ``out.data`` in place and ``out`` is
        returned (PETSc's ``MatPtAP`` with ``MAT_REUSE_MATRIX``): no new
        arrays, and from a GPU only the values come back. An ``a`` or
        ``out`` refused as below leaves ``out`` as it was.

        ValueError for another structure of A, naming what differs, or an
        ``out`` whose structure, dtype or shape is not C's; TypeError for
        another kind of matrix, or ``out`` given to a plan of CuPy or torch
        matrices."""
        kind = _kind(a)
        if kind != self._kind:
            raise TypeError(f"the Galerkin plan was built for {self._kind} matrices, not {kind}")
        if kind != "scipy":
            if out is not None:
                raise TypeError(
                    "out= refills a SciPy C; a plan of CuPy or torch matrices returns C on the device"
                )
            return self._native.numeric(a)
        check = self._check if check is None else check
        oa = _host_operand(a, self._dtype)
        if out is None:
            c = self._native.numeric(oa, _native_check(check, "scipy"))
            return _host_result_of(self._a_is_array, self._shape, c)
        if not _sp.issparse(out) or out.format != "csr" or out.shape != self._shape:
            raise ValueError(
                f"out must be the {self._shape[0]}x{self._shape[1]} SciPy CSR C this plan "
                "returned"
            )
        if out.data.dtype != self._dtype:
            raise ValueError(f"out holds {out.data.dtype} values; the plan computes {self._dtype}")
        self._native.refill(oa, _native_check(check, "scipy"), out.indptr, out.indices, out.data)
        return out


def galerkin(a, p, r=None, *, backend: str = "auto", precision=None, check=True):
    """C = P.T @ A @ P (or R @ A @ P when ``r`` is given), with the plan
    that recomputes it for new values of A: returns ``(plan, C)``; see
    :class:`GalerkinPlan`. Shapes: A (M, K), P (K, L), R (Q, M), C (L, L)
    or (Q, L). SciPy matrices, the products on ``backend``; or CuPy or
    torch CSR matrices on one CUDA device (C and the plan's work on it, as
    :func:`ptap` on them). Errors as :func:`ptap`."""
    kinds = {_kind(m) for m in ((a, p) if r is None else (r, a, p))}
    if len(kinds) != 1:
        raise ValueError("galerkin takes matrices of one kind: SciPy, CuPy or torch, not a mix")
    kind = kinds.pop()
    if kind != "scipy":
        dtype = _device_galerkin_dtype(kind, a, p, r, precision)
        plan, c = _device.galerkin_plan(kind, a, p, r, backend, dtype, _native_check(check, kind))
        return GalerkinPlan(plan, c.shape, dtype, check, False, kind), c
    ops, dtype, shape = _host_galerkin_operands(a, p, r, precision)
    native, c = _spgemm.galerkin(ops[0], ops[1], ops[2], backend, _native_check(check, "scipy"))
    is_array = isinstance(a, _sp.sparray)
    return GalerkinPlan(native, shape, dtype, check, is_array), _host_result_of(is_array, shape, c)


def _host_galerkin_operands(a, p, r, precision):
    """The native operands ``(r, a, p)`` (``r`` None for P.T) of SciPy
    matrices of shapes that chain, converted to one value type; that type
    and C's shape. ValueError naming the pair that does not chain."""
    if a.shape[1] != p.shape[0]:
        raise ValueError(
            f"dimension mismatch: A is {a.shape[0]}x{a.shape[1]} but P is "
            f"{p.shape[0]}x{p.shape[1]} (A's columns must equal P's rows)"
        )
    if r is not None and r.shape[1] != a.shape[0]:
        raise ValueError(
            f"dimension mismatch: R is {r.shape[0]}x{r.shape[1]} but A is "
            f"{a.shape[0]}x{a.shape[1]} (R's columns must equal A's rows)"
        )
    rows = p.shape[1] if r is None else r.shape[0]
    dtypes = [m.dtype for m in ((a, p) if r is None else (r, a, p))]
    common = np.result_type(*dtypes)
    dtype = _precision(common, common, precision)
    ops = [None if m is None else _host_operand(m, dtype) for m in (r, a, p)]
    return ops, dtype, (rows, p.shape[1])


def ptap(a, p, *, backend: str = "auto", precision=None, check=True):
    """C = P.T @ A @ P, the Galerkin (coarse-grid) product of algebraic
    multigrid, as two sparse products: A @ P, then P.T @ (A @ P), with P's
    transpose formed once and A @ P kept on the backend's device between
    them.

    Parameters
    ----------
    a : SciPy sparse matrix or array, shape (K, K), or a CuPy CSR matrix or
        torch sparse CSR tensor on a CUDA device.
    p : the same kind as ``a``, shape (K, L): the prolongation.
    backend, precision, check : as for ``matmul``.

    Returns
    -------
    C, shape (L, L), a SciPy ``csr_array`` when ``a`` is an array, else
    ``csr_matrix``; rows sorted, explicit zeros from cancellation kept. For
    CuPy and torch inputs, C of their kind on their GPU, complete when the
    call returns: P.T formed on the device, A @ P kept there. No plan is
    kept: use ``galerkin`` for a re-setup with new values of A.

    Raises
    ------
    ValueError: shapes that do not chain, matrices of different kinds,
        unsupported dtypes, malformed CSR; MemoryError, RuntimeError as for
        ``matmul``.
    """
    return _galerkin_product(a, p, None, backend, precision, check)


def _galerkin_product(a, p, r, backend, precision, check):
    """``ptap`` / ``rap``: on the device for CuPy and torch matrices (C
    left there), else from SciPy matrices without a plan."""
    kinds = {_kind(m) for m in ((a, p) if r is None else (r, a, p))}
    kind = kinds.pop()
    if kinds:
        raise ValueError(
            "ptap and rap take matrices of one kind: SciPy, CuPy or torch, not a mix"
        )
    if kind == "scipy":
        ops, _, shape = _host_galerkin_operands(a, p, r, precision)
        c = _spgemm.rap(ops[0], ops[1], ops[2], backend, _native_check(check, "scipy"))
        return _host_result_of(isinstance(a, _sp.sparray), shape, c)
    dtype = _device_galerkin_dtype(kind, a, p, r, precision)
    return _device.galerkin(kind, a, p, r, backend, dtype, _native_check(check, kind))


def _device_galerkin_dtype(kind, a, p, r, precision):
    """The value type of a Galerkin product of device matrices (CuPy or
    torch, all of ``kind``)."""
    _kinds(a, p)
    dtype = _precision(_device.values_dtype(a, kind), _device.values_dtype(p, kind), precision)
    if r is not None:
        dtype = _precision(dtype, _device.values_dtype(r, kind), precision)
    return dtype


def rap(r, a, p, *, backend: str = "auto", precision=None, check=True):
    """C = R @ A @ P, a Galerkin product with a restriction R other than
    P.T: R of shape (Q, M), A (M, K), P (K, L), C (Q, L), all of one kind
    (SciPy, CuPy or torch). As ``ptap`` otherwise."""
    return _galerkin_product(a, p, r, backend, precision, check)


class _HostPlan:
    """A plan over SciPy matrices, run by the Rust library's plan."""

    def __init__(self, a, b, backend: str, dtype: np.dtype, check):
        oa = _host_operand(a, dtype)
        ob = oa if b is a else _host_operand(b, dtype)
        self._native = _spgemm.symbolic(oa, ob, backend, _native_check(check, "scipy"))
        self._shape = (a.shape[0], b.shape[1])
        self._dtype = dtype
        self._check = check
        self._a_is_array = isinstance(a, _sp.sparray)
        self.backend = self._native.backend

    @property
    def nnz(self) -> int:
        return self._native.nnz

    def numeric(self, a, b, check):
        check = self._check if check is None else check
        oa = _host_operand(a, self._dtype)
        ob = oa if b is a else _host_operand(b, self._dtype)
        indptr, indices, data = self._native.numeric(oa, ob, _native_check(check, "scipy"))
        cls = _sp.csr_array if self._a_is_array else _sp.csr_matrix
        return cls((data, indices, indptr), shape=self._shape)


class Plan:
    """The symbolic phase of A @ B (C's structure), to recompute the product
    for matrices with the same structure and new values. Built by
    :func:`symbolic`. For CuPy and PyTorch matrices the plan keeps their
    row offsets and column indices, which must stay unchanged while it
    lives; it runs on their device."""

    def __init__(self, impl, kind: str):
        self._impl = impl
        self._kind = kind

    @property
    def nnz(self) -> int:
        """Number of entries of C."""
        return self._impl.nnz

    @property
    def backend(self) -> str:
        """The backend the plan runs on ("cpu", "cuda" or "hip")."""
        return "cuda" if self._kind != "scipy" else self._impl.backend

    def numeric(self, a, b=None, *, check=None):
        """C = A @ B for ``a`` and ``b`` (``None``: ``a``) of the kind the plan
        was built for, with exactly the structure (shapes, indptr, indices)
        it was built for and any values; returned as :func:`matmul` returns
        it. ``check`` (SciPy matrices) as in :func:`matmul`, by default the
        plan's.

        Raises TypeError for another kind of matrix, ValueError when a
        structure differs, and the errors of :func:`matmul`.
        """
        if b is None:
            b = a
        kind = _kinds(a, b)
        if kind != self._kind:
            raise TypeError(f"the plan was built for {self._kind} matrices, not {kind}")
        if kind == "scipy":
            return self._impl.numeric(a, b, check)
        return self._impl.numeric(a, b)


def bfs_levels(a, source: int, *, backend: str = "auto", check=True):
    """Each vertex's level in a breadth-first search of a graph from
    ``source``: 0 for the source, -1 where no path leads. Each level is the
    masked product ``f'<!v> = f any_pair A`` of the frontier f by the
    adjacency matrix, the visited set v complemented as the mask (Kepner
    and Gilbert, eds., "Graph Algorithms in the Language of Linear
    Algebra", SIAM 2011, ch. 2). On a GPU the whole search is one call: A
    read once, the visited set kept on the device as a bitmap between
    levels; the CPU backend runs one masked product a level.

    Parameters
    ----------
    a : SciPy sparse matrix or array, shape (n, n), or a CuPy CSR matrix or
        torch sparse CSR tensor on a CUDA device: the adjacency matrix, an
        entry in row k and column j an edge from k to j (values not read).
    source : int, the first vertex, 0 <= source < n.
    backend : "auto", "cpu", "cuda" or "hip" for SciPy matrices; device
        matrices are searched on their GPU ("auto" or "cuda").
    check : as for ``matmul``.

    Returns
    -------
    levels : int32 array of length n: a NumPy array for SciPy input, else
        an array of A's kind (CuPy, torch) on its device, complete.

    Raises
    ------
    ValueError: A not square, ``source`` not one of its vertices, malformed
        CSR; TypeError for a matrix of another kind; MemoryError,
        RuntimeError as for ``matmul``.
    """
    kind = _kind(a)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"graph: the adjacency matrix is {a.shape[0]}x{a.shape[1]}, not square")
    if isinstance(source, bool) or not isinstance(source, (int, np.integer)) or not 0 <= source < a.shape[0]:
        raise ValueError(f"graph: source vertex {source!r} is not one of the graph's {a.shape[0]} vertices")
    if kind != "scipy":
        return _device.bfs_levels(kind, a, int(source), backend, _native_check(check, kind))
    dtype = a.dtype if a.dtype in (np.float32, np.float64, np.int32, np.int64) else np.dtype(np.float64)
    oa = _host_operand(a, np.dtype(dtype), values=False)
    return _spgemm.bfs_levels(oa, int(source), backend, _native_check(check, kind))


def symbolic(a, b=None, *, backend: str = "auto", precision=None, check=True) -> Plan:
    """The symbolic phase of A @ B (``b``: ``None`` means ``a``), kept as a
    :class:`Plan` whose ``numeric(a, b)`` recomputes the product for new
    values of the same structure. SciPy, CuPy and PyTorch matrices as in
    :func:`matmul`, parameters and errors as there; GPU backends keep A's
    and B's structure on the device (for CuPy and PyTorch, the caller's own
    arrays, which must not change while the plan lives).
    """
    if b is None:
        b = a
    kind = _kinds(a, b)
    dtype = _precision(_device.values_dtype(a, kind), _device.values_dtype(b, kind), precision)
    if kind != "scipy":
        return Plan(_device.DevicePlan(kind, a, b, backend, dtype, _native_check(check, kind)), kind)
    return Plan(_HostPlan(a, b, backend, dtype, check), kind)
