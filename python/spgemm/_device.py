"""CuPy and PyTorch CSR matrices on a CUDA device: multiplied where they
lie, C returned on the same device without a host round trip. The library
reads the arrays in place through their device addresses and checks their
structure on the device first (two kernels of its own program, ahead of
the product on its stream; their answer comes back with the product's
first read, and the product indexes nothing on a fault), widening int32
row offsets and narrowing int64 column indices in the same pass; a fault
is a ValueError naming the row, as for host matrices. The product is left
running in the order of the caller's current stream, as CuPy's and
PyTorch's own operations are: the call returns once it is enqueued, and
work on that stream sees C complete."""

from __future__ import annotations

import bisect

import numpy as np

from . import _spgemm

_I32_MAX = 2**31 - 1


def is_cupy(m) -> bool:
    return type(m).__module__.startswith("cupyx.scipy.sparse")


def is_torch(m) -> bool:
    if not type(m).__module__.startswith("torch"):
        return False
    import torch

    return isinstance(m, torch.Tensor) and m.layout in (torch.sparse_csr, torch.sparse_csc)


def _csr(kind: str, m):
    """A torch CSC tensor as CSR (converted on its device); anything else
    as it is."""
    if kind == "torch":
        import torch

        if m.layout == torch.sparse_csc:
            return m.to_sparse_csr()
    return m


class _Exported:
    """One of C's device arrays, for ``cupy.asarray`` / ``torch.as_tensor``;
    holds the owner of the memory while the array lives."""

    def __init__(self, owner, k: int):
        self._owner = owner
        self.__cuda_array_interface__ = owner.interface(k)


# Whether an index array of each accepted type is int64 (else int32).
_NUMPY_WIDE = {np.dtype(np.int32): False, np.dtype(np.int64): True}


def _torch_wide() -> dict:
    import torch

    return {torch.int32: False, torch.int64: True}


def _index_flags(nrows: int, nnz: int, indptr, indices, wide: dict) -> tuple:
    """Whether the row offsets and the column indices are int64 (else
    int32), after checking their lengths and types (``wide`` maps the
    accepted types to that answer)."""
    if indptr.shape[0] != nrows + 1:
        raise ValueError(f"row offsets have length {indptr.shape[0]}, expected nrows + 1 = {nrows + 1}")
    if indices.shape[0] != nnz:
        raise ValueError(f"{indices.shape[0]} column indices but {nnz} values")
    flags = (wide.get(indptr.dtype), wide.get(indices.dtype))
    if None in flags:
        raise ValueError(f"index arrays must be int32 or int64, not {indptr.dtype} and {indices.dtype}")
    return flags


def _exact(converted, data, dtype, values: bool):
    """``converted`` (``data`` as ``dtype``, on its device) unless a value
    changed on the way to an integer type (2.5, NaN, one past the type's
    range): a ValueError naming the first, as for SciPy matrices. Skipped
    where ``values`` is False (a mask, whose values are not read)."""
    if values and np.dtype(dtype).kind == "i" and str(data.dtype).replace("torch.", "") != np.dtype(dtype).name:
        changed = converted != data
        if bool(changed.any()):
            first = int(changed.nonzero()[0][0])
            raise ValueError(f"data[{first}] = {data[first].item()} is not a value of {np.dtype(dtype)}")
    return converted


def _cupy_operand(a, dtype, check, values=True):
    """The device operand of a CuPy CSR matrix, and the arrays to keep
    alive. Values converted to integers must be integers of the type unless
    ``values`` is False."""
    import cupy

    if a.format != "csr":
        a = a.tocsr()
    nrows, ncols = a.shape
    indptr, indices = cupy.ascontiguousarray(a.indptr), cupy.ascontiguousarray(a.indices)
    wide_indptr, wide_indices = _index_flags(nrows, a.nnz, indptr, indices, _NUMPY_WIDE)
    data = _exact(cupy.ascontiguousarray(a.data.astype(dtype, copy=False)), a.data, dtype, values)
    keep = (indptr, indices, data)
    ptr = lambda x: x.data.ptr if x.size else 0  # noqa: E731
    operand = (nrows, ncols, a.nnz, ptr(indptr), wide_indptr, ptr(indices), wide_indices, ptr(data), check)
    return operand, keep, a.data.device.id


def _torch_dtype(dtype):
    """The torch type of NumPy value type ``dtype``."""
    import torch

    return {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32, "int64": torch.int64}[np.dtype(dtype).name]


def _torch_operand(a, dtype, check, values=True):
    """The device operand of a torch sparse CSR tensor (a CSC one converted
    to CSR on its device, or a ``_TorchTransposed``), and the tensors to
    keep alive; values as in ``_cupy_operand``."""
    a = _csr("torch", a)
    if a.dim() != 2:
        raise ValueError(f"torch CSR tensors must be two-dimensional (no batches), not {a.dim()}-dimensional")
    if a.device.type != "cuda":
        raise ValueError(f"torch CSR tensors must be on a CUDA device, not {a.device}")
    nrows, ncols = a.shape
    crow, col = a.crow_indices().contiguous(), a.col_indices().contiguous()
    val = a.values()
    wide_crow, wide_col = _index_flags(nrows, val.shape[0], crow, col, _torch_wide())
    data = _exact(val.to(_torch_dtype(dtype)).contiguous(), val, dtype, values)
    keep = (crow, col, data)
    ptr = lambda x: x.data_ptr() if x.numel() else 0  # noqa: E731
    operand = (nrows, ncols, data.shape[0], ptr(crow), wide_crow, ptr(col), wide_col, ptr(data), check)
    return operand, keep, a.device.index


def values_dtype(m, kind: str):
    """The NumPy type of the values of a matrix of ``kind`` ("scipy",
    "cupy" or "torch")."""
    if kind != "torch":
        return m.dtype
    name = str(m.dtype).replace("torch.", "")
    try:
        return np.dtype(name)
    except TypeError:
        # A torch type this NumPy lacks (bfloat16 without ml_dtypes): the
        # same error as for other types, not NumPy's TypeError.
        raise ValueError(f"unsupported dtype {name}: spgemm multiplies float32, float64, int32 and int64") from None


def _operands(kind: str, a, b, backend: str, dtype, check: bool):
    """Both device operands checked and prepared with values of ``dtype``,
    and the caller's current stream on their device: ``(device, oa, ob,
    keep, stream)``."""
    if backend not in ("auto", "cuda"):
        raise ValueError(f"{kind} matrices are multiplied on their CUDA device: backend must be 'auto' or 'cuda', not {backend!r}")
    for name, m in (("A", a), ("B", b)):
        # The kernels read int32 column indices: wider columns would wrap.
        if m.shape[1] > _I32_MAX:
            raise ValueError(f"{name} has {m.shape[1]} columns, more than the int32 column indices of device products hold")
    operand = _cupy_operand if kind == "cupy" else _torch_operand
    oa, keep_a, dev_a = operand(a, dtype, check)
    same = b is a or (kind == "cupy" and _shares_arrays(a, b))
    ob, keep_b, dev_b = (oa, keep_a, dev_a) if same else operand(b, dtype, check)
    if dev_a != dev_b:
        raise ValueError(f"A is on GPU {dev_a} but B on GPU {dev_b}")
    return dev_a, oa, ob, (keep_a, keep_b), _stream(kind, dev_a)


class _TorchTransposed:
    """A torch CSC tensor read as its transpose's CSR tensors (the same
    tensors: CSC's column offsets and row indices are Bᵀ's row offsets and
    column indices), without converting it."""

    layout = None

    def __init__(self, b):
        self.shape = (b.shape[1], b.shape[0])
        self.device = b.device
        self._b = b

    def dim(self):
        return self._b.dim()

    def crow_indices(self):
        return self._b.ccol_indices()

    def col_indices(self):
        return self._b.row_indices()

    def values(self):
        return self._b.values()


class _Transposed:
    """A CuPy CSC matrix read as its transpose's CSR arrays (the same
    arrays), without building a CuPy matrix for it."""

    format = "csr"

    def __init__(self, b):
        self.shape = (b.shape[1], b.shape[0])
        self.nnz = b.nnz
        self.indptr, self.indices, self.data = b.indptr, b.indices, b.data


def _shares_arrays(a, b) -> bool:
    """Whether CuPy CSR matrix ``a`` and CSR operand ``b`` (a CuPy matrix
    or a ``_Transposed``) are the same matrix: same shape, same arrays
    (``L.T`` read as its transpose is L). Then one operand serves both."""
    if a.format != "csr" or b.format != "csr" or a.shape != b.shape or a.nnz != b.nnz:
        return False
    return all(
        x.data.ptr == y.data.ptr and x.dtype == y.dtype and x.shape == y.shape
        for x, y in ((a.indptr, b.indptr), (a.indices, b.indices), (a.data, b.data))
    )


def _stream(kind: str, device: int) -> int:
    """The caller's current stream on ``device`` (its ``CUstream`` address,
    0 for the legacy default stream). The library waits for it before
    reading the operands (which it may still be writing, or our copies of
    them), and makes it wait for the product: C is complete in its order,
    as the result of CuPy's or PyTorch's own operations is."""
    if kind == "cupy":
        import cupy

        return cupy.cuda.get_current_stream(device).ptr
    import torch

    return torch.cuda.current_stream(device).cuda_stream


def _result(kind: str, c, device: int):
    nrows, ncols = c.shape
    if kind == "cupy":
        return _cupy_result(c, nrows, ncols, device)
    return _torch_result(c, nrows, ncols, device)


def matmul_common(a, b, backend: str, check: bool):
    """C = A @ B for two CuPy matrices or two PyTorch CSR tensors in the
    common case, read by the native module in one call: CSR on a CUDA
    device, values of one type (float32 or float64), contiguous int32 or
    int64 indices, one device, matching shapes. None for anything else
    (other inputs too), which ``matmul`` then converts or names."""
    if backend not in ("auto", "cuda"):
        return None
    if is_cupy(a):
        kind, native = "cupy", _spgemm.matmul_cupy
    elif is_torch(a):
        kind, native = "torch", _spgemm.matmul_torch
    else:
        return None
    if b is not a and type(b) is not type(a):
        return None
    fast = native(a, b, check)
    return None if fast is None else _result(kind, *fast)


def matmul(kind: str, a, b, backend: str, dtype, check: bool):
    """C = A @ B for two CuPy or two torch CSR matrices on one CUDA device,
    values of ``dtype`` (float32, float64, int32 or int64)."""
    device, oa, ob, keep, stream = _operands(kind, a, b, backend, dtype, check)
    c = _spgemm.matmul_device(oa, ob, np.dtype(dtype).name, device, stream)
    # The product is left running in the stream's order: memory the caller
    # frees now is reused only by work ordered after it.
    del keep
    return _result(kind, c, device)


def matmul_spec(
    kind: str, a, b, mask, complement: bool, backend: str, dtype, check: bool, semiring: str, prune, keep, columns
):
    """C<M> = A (+).(x) B (C<!M> when ``complement``) for CuPy or torch CSR
    matrices on one CUDA device (``mask`` of the same kind, or None),
    values of ``dtype``: unmasked by the product's kernels compiled with
    the semiring; masked (or complemented) where C's grid is small by the
    products pushed into a bitmap of C past the mask's, elsewhere masked
    by a dot product per entry of the mask and complemented by the product
    and the mask's entries dropped (or, for a small grid with many
    products, by dot products over the explicit complement); pruned on
    the device (``prune`` a threshold or None, ``keep`` at most this many
    entries a row, or a column when ``columns``, or None). Returns once C
    is complete."""
    device, oa, ob, om, b_transposed, hold, stream = _spec_operands(kind, a, b, mask, complement, backend, dtype, check)
    name = np.dtype(dtype).name
    c = _spgemm.matmul_spec_device(
        oa,
        ob,
        om,
        bool(complement),
        name,
        device,
        str(semiring),
        stream,
        None if prune is None else float(prune),
        None if keep is None else int(keep),
        bool(columns),
        b_transposed,
    )
    del hold
    return _result(kind, c, device)


def matmul_reduce(kind: str, a, b, mask, backend: str, dtype, check: bool, semiring: str):
    """(+) over the entries of C<M> = A (+).(x) B for CuPy or torch CSR
    matrices on one CUDA device under the structural mask ``mask`` (of the
    same kind), reduced on the device without forming C: a float, or an
    int for integer values."""
    device, oa, ob, om, b_transposed, hold, stream = _spec_operands(kind, a, b, mask, False, backend, dtype, check)
    name = np.dtype(dtype).name
    total = _spgemm.matmul_reduce_device(oa, ob, om, name, device, str(semiring), stream, b_transposed)
    del hold
    return total


def _spec_operands(kind: str, a, b, mask, complement: bool, backend: str, dtype, check: bool):
    """A, B and the mask as device operands on one device: ``(device, oa,
    ob, om, b_transposed, hold, stream)``, ``om`` A's or B's operand when
    the mask is A or B, None without a mask."""
    # A CSC matrix B (``x.T`` of a CSR x: CuPy's CSC matrix, torch's CSC
    # tensor) under a structural mask is read as Bᵀ's CSR arrays: nothing
    # converted or transposed.
    b_transposed = b is not a and mask is not None and not complement and _is_csc(kind, b)
    bt = (_Transposed if kind == "cupy" else _TorchTransposed)(b) if b_transposed else b
    device, oa, ob, hold, stream = _operands(kind, a, bt, backend, dtype, check)
    if mask is None or mask is a or (mask is b and not b_transposed):
        om = None if mask is None else oa if mask is a else ob
        hold_m = None
    else:
        operand = _cupy_operand if kind == "cupy" else _torch_operand
        om, hold_m, dev_m = operand(mask, dtype, check, values=False)
        if dev_m != device:
            raise ValueError(f"the mask is on GPU {dev_m} but A on GPU {device}")
    return device, oa, ob, om, b_transposed, (hold, hold_m), stream


def bfs_levels(kind: str, a, source: int, backend: str, check: bool):
    """Each vertex's level (int32, -1 where no path leads) in a
    breadth-first search from ``source`` of the graph of a CuPy or torch
    CSR adjacency matrix, the whole search on its CUDA device; the levels
    returned as an array of A's kind on that device, complete."""
    dtype = values_dtype(a, kind)
    if dtype not in (np.float32, np.float64, np.int32, np.int64):
        dtype = np.dtype(np.float64)
    device, oa, _, hold, stream = _operands(kind, a, a, backend, dtype, check)
    found = _spgemm.bfs_levels_device(oa, int(source), np.dtype(dtype).name, device, stream)
    del hold
    n = a.shape[0]
    if kind == "cupy":
        import cupy

        with cupy.cuda.Device(device):
            return _cupy_array(found, found.pointer, n, np.int32, device)
    import torch

    return torch.as_tensor(_Exported(found, 0), device=torch.device("cuda", device))


def galerkin(kind: str, a, p, r, backend: str, dtype, check: bool):
    """C = R @ A @ P (R None: P.T, formed on the device) for CuPy or torch
    CSR matrices on one CUDA device, A @ P kept there; returns once C is
    complete."""
    device, oa, op, orr, keep, stream = _chain(kind, a, p, r, backend, dtype, check)
    c = _spgemm.galerkin_device(oa, op, orr, dtype == np.float64, device, stream)
    del keep
    return _result(kind, c, device)


def _chain(kind: str, a, p, r, backend: str, dtype, check: bool):
    """A, P and R (or None) as device operands on one device: ``(device,
    oa, op, orr, keep, stream)``."""
    device, oa, op, keep, stream = _operands(kind, a, p, backend, dtype, check)
    orr = keep_r = None
    if r is not None:
        orr, keep_r, dev_r = (_cupy_operand if kind == "cupy" else _torch_operand)(r, dtype, check)
        if dev_r != device:
            raise ValueError(f"R is on GPU {dev_r} but A on GPU {device}")
    return device, oa, op, orr, (keep, keep_r), stream


def _is_csc(kind: str, m) -> bool:
    """Whether a device matrix is CSC (CuPy's CSC matrix, torch's CSC
    tensor)."""
    if kind == "cupy":
        return m.format == "csc"
    import torch

    return m.layout == torch.sparse_csc


def _structure(kind: str, m):
    """The row offsets and column indices of a device matrix (a CSC one's
    as CSR, converted)."""
    if kind == "cupy":
        m = m.tocsr()
        return m.indptr, m.indices
    m = _csr(kind, m)
    return m.crow_indices(), m.col_indices()


def _difference(kind: str, shape, got, want_shape, want) -> str | None:
    """None when ``got`` (row offsets, column indices on the device) is the
    structure ``want`` of a ``want_shape`` matrix; otherwise what differs,
    in the library's words: the shape, the number of entries, or the first
    row whose columns differ. Only called to check a plan's operands; its
    device reads happen only on a mismatch."""
    if tuple(shape) != tuple(want_shape):
        return f"is {shape[0]}x{shape[1]}, not {want_shape[0]}x{want_shape[1]}"
    if got[1].shape[0] != want[1].shape[0]:
        return f"has {got[1].shape[0]} entries, not {want[1].shape[0]}"
    if _same(kind, got[0], want[0]) and _same(kind, got[1], want[1]):
        return None
    if kind == "cupy":
        import cupy

        wide = lambda x: x.astype(cupy.int64)
        first = lambda mask: int(cupy.flatnonzero(mask)[0])
        host = lambda x: [int(v) for v in x.get()]
    else:
        wide = lambda x: x.long()
        first = lambda mask: int(mask.nonzero()[0, 0])
        host = lambda x: [int(v) for v in x.cpu()]
    offsets, want_offsets = wide(got[0]), wide(want[0])
    if not _same(kind, offsets, want_offsets):
        row = first(offsets != want_offsets) - 1
    else:
        entry = first(wide(got[1]) != wide(want[1]))
        row = bisect.bisect_right(host(want_offsets), entry) - 1
    o, w = host(offsets[row : row + 2]), host(want_offsets[row : row + 2])
    shown = lambda c: "[" + ", ".join(map(str, c[:6])) + (f", … {len(c) - 6} more]" if len(c) > 6 else "]")
    return (
        f"differs first in row {row}: columns {shown(host(got[1][o[0] : o[1]]))} "
        f"where the plan's has {shown(host(want[1][w[0] : w[1]]))}"
    )


def _same(kind: str, x, y) -> bool:
    """Whether two device index arrays hold the same values: the same
    memory (by address and length), or equal entries."""
    if x.shape != y.shape:
        return False
    if kind == "cupy":
        import cupy

        return x.data.ptr == y.data.ptr or bool(cupy.array_equal(x, y))
    import torch

    return x.data_ptr() == y.data_ptr() or bool(torch.equal(x, y))


class DevicePlan:
    """The symbolic phase of A @ B for CuPy or PyTorch matrices on a CUDA
    device: keeps the operands' structure arrays (which must not change
    while the plan lives) and reruns only the numeric phase."""

    def __init__(self, kind: str, a, b, backend: str, dtype, check: bool):
        device, oa, ob, keep, stream = _operands(kind, a, b, backend, dtype, check)
        self._native = _spgemm.symbolic_device(oa, ob, dtype == np.float64, device, stream)
        self._keep = keep
        self._kind, self._dtype, self._device = kind, dtype, device
        self._square = b is a
        self._structures = (_structure(kind, a), None if b is a else _structure(kind, b))
        self._shapes = (tuple(a.shape), tuple(b.shape))
        self._nnz = (oa[2], ob[2])

    @property
    def nnz(self) -> int:
        return self._native.nnz

    def numeric(self, a, b):
        if (b is a) != self._square:
            raise ValueError("structure mismatch: the plan was built for " + ("A @ A" if self._square else "A @ B"))
        operands = (("A", a, self._structures[0], self._shapes[0]), ("B", b, self._structures[1], self._shapes[1]))
        for name, m, want, want_shape in operands:
            if want is None:
                continue
            what = _difference(self._kind, tuple(m.shape), _structure(self._kind, m), want_shape, want)
            if what is not None:
                raise ValueError(f"structure mismatch: {name} is not the matrix the plan was built for: it {what}")
        values = [_values(self._kind, m, self._dtype) for m in ((a,) if self._square else (a, b))]
        for v, n in zip(values, self._nnz):
            if v.shape[0] != n:
                raise ValueError(f"structure mismatch: {v.shape[0]} values where the plan has {n}")
        ptr = lambda x: _address(self._kind, x)  # noqa: E731
        c = self._native.numeric(ptr(values[0]), ptr(values[-1]), _stream(self._kind, self._device))
        del values
        return _result(self._kind, c, self._device)



def _values(kind: str, m, dtype):
    """A device matrix's values, in its CSR order, as a contiguous array of
    ``dtype``."""
    if kind == "cupy":
        import cupy

        return cupy.ascontiguousarray(m.tocsr().data.astype(dtype, copy=False))
    return _csr(kind, m).values().to(_torch_dtype(dtype)).contiguous()


def _address(kind: str, x) -> int:
    """The device address of an array's first element (0 when empty)."""
    if kind == "cupy":
        return x.data.ptr if x.size else 0
    return x.data_ptr() if x.numel() else 0


def galerkin_plan(kind: str, a, p, r, backend: str, dtype, check: bool):
    """``(DeviceGalerkinPlan, C)`` for C = R @ A @ P (R None: P.T, formed
    on the device) of CuPy or torch CSR matrices on one CUDA device; C
    complete."""
    device, oa, op, orr, keep, stream = _chain(kind, a, p, r, backend, dtype, check)
    native, c = _spgemm.galerkin_plan_device(oa, op, orr, dtype == np.float64, device, stream)
    return DeviceGalerkinPlan(native, keep, kind, dtype, device, a, oa[2]), _result(kind, c, device)


class DeviceGalerkinPlan:
    """Both symbolic phases of R @ A @ P for CuPy or PyTorch matrices on
    one CUDA device (built by ``galerkin_plan``). Keeps A's structure
    arrays, P and R, which must not change while the plan lives;
    ``numeric(a)`` reruns only the two numeric phases for new values of
    A."""

    def __init__(self, native, keep, kind: str, dtype, device: int, a, nnz: int):
        self._native, self._keep = native, keep
        self._kind, self._dtype, self._device = kind, dtype, device
        self._structure, self._shape, self._nnz = _structure(kind, a), tuple(a.shape), nnz

    @property
    def nnz(self) -> int:
        return self._native.nnz

    def numeric(self, a):
        what = _difference(self._kind, tuple(a.shape), _structure(self._kind, a), self._shape, self._structure)
        if what is not None:
            raise ValueError(f"structure mismatch: A is not the matrix the Galerkin plan was built for: it {what}")
        values = _values(self._kind, a, self._dtype)
        if values.shape[0] != self._nnz:
            raise ValueError(f"structure mismatch: {values.shape[0]} values where the plan has {self._nnz}")
        c = self._native.numeric(_address(self._kind, values), _stream(self._kind, self._device))
        del values
        return _result(self._kind, c, self._device)


def _cupy_array(c, ptr: int, n: int, dtype, device: int):
    """One of C's device arrays as a CuPy array of ``n`` elements at
    ``ptr``, owned by ``c``. The memory is wrapped directly, on the known
    device: ``cupy.asarray`` of an interface would also ask the driver
    which device holds the pointer."""
    import cupy

    if n == 0:
        return cupy.empty(0, dtype)
    mem = cupy.cuda.UnownedMemory(ptr, n * np.dtype(dtype).itemsize, c, device)
    return cupy.ndarray((n,), dtype, cupy.cuda.MemoryPointer(mem, 0))


def _cupy_result(c, nrows, ncols, device):
    import cupy
    import cupyx.scipy.sparse as csp

    if c.nnz > _I32_MAX:
        raise ValueError(f"C has {c.nnz} entries, more than cupyx.scipy.sparse's int32 indices hold")
    rpt, col, val = c.pointers
    value_type = np.dtype(c.typestr)
    with cupy.cuda.Device(device):
        # The library narrowed the row offsets to int32 (nnz(C) fits).
        indptr = _cupy_array(c, rpt, nrows + 1, np.int32, device)
        indices = _cupy_array(c, col, c.nnz, np.int32, device)
        data = _cupy_array(c, val, c.nnz, value_type, device)
        # C is canonical (sorted rows, no duplicates) with int32 indices in
        # range: CuPy's constructor for pre-validated arrays, where this
        # CuPy has it, skips the index-type reductions (and their
        # synchronisation) of the public one, about 0.1 ms; the public one
        # otherwise.
        build = getattr(csp.csr_matrix, "_from_parts", None)
        if build is not None:
            try:
                return build(data, indices, indptr, (nrows, ncols), has_canonical_format=True)
            except TypeError:
                pass
        return csp.csr_matrix((data, indices, indptr), shape=(nrows, ncols))


def _torch_result(c, nrows, ncols, device):
    import torch

    dev = torch.device("cuda", device)
    indptr = torch.as_tensor(_Exported(c, 0), device=dev)
    indices = torch.as_tensor(_Exported(c, 1), device=dev)
    data = torch.as_tensor(_Exported(c, 2), device=dev)
    if not c.offsets_int32:
        # int64 row offsets (nnz(C) beyond int32): torch wants both index
        # arrays of one type.
        indices = indices.to(torch.int64)
    return torch.sparse_csr_tensor(indptr, indices, data, size=(nrows, ncols), check_invariants=False)
