"""The CSR structure check of device operands as two CUDA kernels (compiled
by CuPy's NVRTC once per process): a thread per row checks the row
offsets (widening int32 ones to the int64 the product reads in the same
pass), a thread per entry the bounds of the column indices and, when
asked, their order; each keeps the first faulty row with an atomic
minimum. One 16-byte read tells the host whether anything is wrong; only
then is the faulty row read to name the fault, with the messages of the
host checks."""

from __future__ import annotations

_SOURCE = r"""
// Row offsets, a thread per row (and one for the end): the first fault's
// row * 8 + kind into first[0]; int32 offsets widened into `wide`.
template <typename P>
__device__ void check_offsets(const P* indptr, long long nrows, long long nnz, long long* wide,
                              unsigned long long* first) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i > nrows) return;
    long long start = (long long)indptr[i];
    if (wide) wide[i] = start;
    unsigned long long row = (unsigned long long)i << 3;
    if (i == 0 && start != 0) atomicMin(first, row | 0);
    if (i == nrows) {
        if (start != nnz) atomicMin(first, row | 4);
        return;
    }
    long long end = (long long)indptr[i + 1];
    if (end < start || start < 0 || end > nnz) atomicMin(first, row | 1);
}

// Column indices, a thread per entry (so that long rows cost no more than
// short ones): its row found by binary search in the offsets (meaningful
// only when they passed, which the host checks first), its bounds, and
// its order after the previous entry of the row, into first[1].
template <typename P, typename I>
__device__ void check_entries(const P* indptr, const I* indices, long long nrows, long long ncols,
                              long long nnz, int sorted, unsigned long long* first) {
    long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= nnz) return;
    long long lo = 0, hi = nrows;
    while (hi - lo > 1) {
        long long mid = lo + (hi - lo) / 2;
        if ((long long)indptr[mid] <= p) lo = mid; else hi = mid;
    }
    unsigned long long row = (unsigned long long)lo << 3;
    long long c = (long long)indices[p];
    if (c < 0 || c >= ncols) { atomicMin(first + 1, row | 2); return; }
    if (sorted && p > (long long)indptr[lo] && (long long)indices[p - 1] >= c)
        atomicMin(first + 1, row | 3);
}

#define ENTRIES(NAME, P, I)                                                                \
    extern "C" __global__ void NAME(const P* indptr, const I* indices, long long nrows,     \
                                    long long ncols, long long nnz, int sorted,            \
                                    unsigned long long* first) {                           \
        check_entries<P, I>(indptr, indices, nrows, ncols, nnz, sorted, first);            \
    }
#define OFFSETS(NAME, P)                                                                   \
    extern "C" __global__ void NAME(const P* indptr, long long nrows, long long nnz,        \
                                    long long* wide, unsigned long long* first) {          \
        check_offsets<P>(indptr, nrows, nnz, wide, first);                                 \
    }
OFFSETS(offsets_i32, int)
OFFSETS(offsets_i64, long long)
ENTRIES(entries_i32_i32, int, int)
ENTRIES(entries_i32_i64, int, long long)
ENTRIES(entries_i64_i32, long long, int)
ENTRIES(entries_i64_i64, long long, long long)
"""

_MODULE = None


def _kernels(cupy, indptr, indices):
    """The offsets and entries kernels for these index types."""
    global _MODULE
    if _MODULE is None:
        _MODULE = cupy.RawModule(code=_SOURCE, options=("-std=c++14",))
    width = {cupy.dtype(cupy.int32): "i32", cupy.dtype(cupy.int64): "i64"}
    try:
        p, i = width[indptr.dtype], width[indices.dtype]
    except KeyError:
        raise ValueError(f"index arrays must be int32 or int64, not {indptr.dtype} and {indices.dtype}") from None
    return _MODULE.get_function(f"offsets_{p}"), _MODULE.get_function(f"entries_{p}_{i}")


def check(nrows: int, ncols: int, indptr, indices, nnz: int, sorted_rows: bool):
    """Checks a device CSR structure given as CuPy arrays (``indptr`` of
    ``nrows + 1``, ``indices`` of ``nnz``, int32 or int64) and returns its
    row offsets as int64 (``indptr`` itself when it already is). Raises
    ValueError naming the first faulty row."""
    import cupy

    if indptr.shape[0] != nrows + 1:
        raise ValueError(f"row offsets have length {indptr.shape[0]}, expected nrows + 1 = {nrows + 1}")
    if indices.shape[0] != nnz:
        raise ValueError(f"{indices.shape[0]} column indices but {nnz} values")
    indptr = cupy.ascontiguousarray(indptr)
    indices = cupy.ascontiguousarray(indices)
    wide = indptr if indptr.dtype == cupy.int64 else cupy.empty(nrows + 1, dtype=cupy.int64)
    none = 2**64 - 1
    first = cupy.full(2, none, dtype=cupy.uint64)
    offsets, entries = _kernels(cupy, indptr, indices)
    threads = 256
    n = cupy.int64
    offsets(
        ((nrows + threads) // threads,),
        (threads,),
        (indptr, n(nrows), n(nnz), wide if wide is not indptr else cupy.uint64(0), first),
    )
    if nnz:
        entries(
            ((nnz + threads - 1) // threads,),
            (threads,),
            (indptr, indices, n(nrows), n(ncols), n(nnz), cupy.int32(bool(sorted_rows)), first),
        )
    codes = first.get().tolist()
    for code in codes:  # the offsets' fault first: the entries' rows rely on them
        if code != none:
            _raise(code >> 3, code & 7, ncols, nnz, indptr, indices)
    return wide


def _raise(row: int, kind: int, ncols: int, nnz: int, indptr, indices):
    """The ValueError for fault ``kind`` in ``row``, read from the device."""
    if kind == 0:
        raise ValueError(f"row offsets must start at 0, found {int(indptr[0])}")
    if kind == 4:
        raise ValueError(f"last row offset is {int(indptr[row])} but there are {nnz} column indices")
    start, end = int(indptr[row]), int(indptr[row + 1])
    if kind == 1:
        if end < start:
            raise ValueError(f"row offsets decrease at row {row}: {start} > {end}")
        raise ValueError(f"row {row} spans entries {start}..{end}, outside the {nnz} column indices")
    cols = indices[start:end].get().tolist()
    if kind == 2:
        bad = next(c for c in cols if c < 0 or c >= ncols)
        raise ValueError(f"column index {bad} in row {row} is out of range for {ncols} columns")
    p = next(k for k in range(len(cols) - 1) if cols[k + 1] <= cols[k])
    raise ValueError(
        f"row {row} is not sorted without duplicates: column {cols[p + 1]} follows column {cols[p]}"
    )
