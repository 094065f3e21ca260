"""Integer values (int64, int32) in matmul on SciPy matrices and PyTorch
tensors: every semiring, unmasked, masked and complemented, against
SuiteSparse:GraphBLAS on the same integers (INT64, INT32); the plain
product against SciPy's; sums that float64 would round; values that are
not integers refused. The PyTorch cases are skipped without a CUDA GPU
(failed under ``SPGEMM_REQUIRE_GPU=1``); CuPy's sparse matrices hold no
integers, which is said."""

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm

from conftest import graphblas_mxm, random_values
from test_device import cupy, from_torch, to_cupy, to_torch, torch  # noqa: F401 (fixtures)

gb = pytest.importorskip("graphblas")

RINGS = ["plus_times", "min_plus", "max_plus", "max_times", "lor_land", "plus_pair", "any_pair"]


def integers(m, n, density, seed, dtype=np.int64):
    """A random CSR array of small integers, zeros and negatives included."""
    a = random_values(m, n, density, seed)
    return sp.csr_array((np.floor(a.data * 9) - 4, a.indices, a.indptr), shape=a.shape).astype(dtype)


def graphblas(a, b, ring, mask=None, complement=False):
    """GraphBLAS's C<M> = A (+).(x) B on the operands' own integer type
    (INT64, INT32; lor_land on booleans, its result in that type)."""
    return graphblas_mxm(a, b, ring, mask, complement, a.dtype)


def assert_equal(got, want):
    got = sp.csr_array(got)
    assert got.dtype == want.dtype
    assert np.array_equal(got.indptr, want.indptr), "structure differs"
    assert np.array_equal(got.indices, want.indices), "columns differ"
    np.testing.assert_array_equal(got.data, want.data)


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("masked", [None, False, True])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_every_semiring_matches_graphblas(ring, masked, dtype):
    a = integers(230, 150, 0.06, 11, dtype)
    b = integers(150, 310, 0.08, 12, dtype)
    mask = None if masked is None else random_values(230, 310, 0.2, 13)
    got = spgemm.matmul(a, b, semiring=ring, mask=mask, complement=bool(masked), backend="cpu")
    assert_equal(got, graphblas(a, b, ring, mask, bool(masked)))
    if spgemm.backends()[1][1]:
        gpu = spgemm.matmul(a, b, semiring=ring, mask=mask, complement=bool(masked), backend="cuda")
        assert_equal(gpu, graphblas(a, b, ring, mask, bool(masked)))


def test_plain_product_matches_scipy_and_sums_past_float64():
    a = integers(300, 300, 0.05, 14)
    want = sp.csr_array(a @ a)
    want.sort_indices()
    got = sp.csr_array(spgemm.matmul(a, a))
    assert got.dtype == np.int64
    got.eliminate_zeros()  # SciPy drops the sums that cancel; we keep them
    assert np.array_equal(got.indptr, want.indptr) and np.array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)
    # 2^52 + 2^52 + 1 is 2^53 + 1 in int64; float64 rounds it to 2^53.
    row = sp.csr_array(np.array([[2**52, 2**52, 1]], dtype=np.int64))
    col = sp.csr_array(np.ones((3, 1), dtype=np.int64))
    c = spgemm.matmul(row, col)
    assert c.dtype == np.int64 and int(c.data[0]) == 2**53 + 1


def test_precision_converts_only_integral_values():
    a = random_values(40, 40, 0.2, 15)
    whole = sp.csr_array((np.round(a.data * 10), a.indices, a.indptr), shape=a.shape)
    c = spgemm.matmul(whole, whole, precision="int32", semiring="min_plus")
    assert c.dtype == np.int32
    assert_equal(c, graphblas(whole.astype(np.int32), whole.astype(np.int32), "min_plus"))
    with pytest.raises(ValueError, match=r"data\[0\] = .* is not a value of int64"):
        spgemm.matmul(a, a, precision="int64")
    # Integer inputs of other widths name the types taken.
    small = a.astype(np.int8)
    with pytest.raises(ValueError, match="int32 or int64"):
        spgemm.matmul(small, small)
    # Galerkin products take floats.
    ints = integers(40, 40, 0.2, 16)
    with pytest.raises(ValueError, match="float32 or float64"):
        spgemm.ptap(ints, ints)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_torch_integers_match_graphblas(torch, dtype):
    a = integers(230, 150, 0.06, 21, dtype)
    b = integers(150, 310, 0.08, 22, dtype)
    mask = random_values(230, 310, 0.2, 23)
    ta, tb, tm = to_torch(torch, a), to_torch(torch, b), to_torch(torch, mask)
    c = spgemm.matmul(ta, tb)
    assert c.dtype == getattr(torch, np.dtype(dtype).name) and c.device == ta.device
    assert_equal(from_torch(c), graphblas(a, b, "plus_times"))
    for ring, masked in (("min_plus", None), ("plus_pair", False), ("max_times", True), ("lor_land", None)):
        m = None if masked is None else tm
        got = spgemm.matmul(ta, tb, semiring=ring, mask=m, complement=bool(masked))
        want = graphblas(a, b, ring, None if masked is None else mask, bool(masked))
        assert_equal(from_torch(got), want)


def test_torch_precision_converts_only_integral_values(torch):
    a = random_values(40, 40, 0.2, 24)
    whole = sp.csr_array((np.round(a.data * 10), a.indices, a.indptr), shape=a.shape)
    tw = to_torch(torch, whole)
    c = spgemm.matmul(tw, tw, precision="int32", semiring="min_plus")
    assert c.dtype == torch.int32
    assert_equal(from_torch(c), graphblas(whole.astype(np.int32), whole.astype(np.int32), "min_plus"))
    ta = to_torch(torch, a)
    with pytest.raises(ValueError, match=r"data\[0\] = .* is not a value of int64"):
        spgemm.matmul(ta, ta, precision="int64")
    # One past int32's range, in an int64 tensor narrowed to int32.
    big = sp.csr_array(np.array([[1, 2**31]], dtype=np.int64))
    with pytest.raises(ValueError, match=r"data\[1\] = 2147483648 is not a value of int32"):
        spgemm.matmul(to_torch(torch, big), to_torch(torch, big.T), precision="int32")


def test_cupy_matrices_hold_no_integers(cupy):
    ga = to_cupy(random_values(40, 40, 0.2, 25))
    with pytest.raises(ValueError, match="CuPy's sparse matrices hold none"):
        spgemm.matmul(ga, ga, precision="int64")
