"""spgemm.matmul and plans on SciPy matrices against SciPy's own A @ B, on
the CPU backend (or the best one present): real matrices, random ones of
every index and value type, rectangular and empty shapes."""

import threading

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from conftest import assert_product, load

BACKEND = "cpu"


def random(m, n, density, seed, dtype=np.float64, index=np.int32, cls=sp.csr_array):
    a = sp.random_array((m, n), density=density, format="csr", random_state=seed, dtype=dtype)
    a.indices = a.indices.astype(index)
    a.indptr = a.indptr.astype(index)
    return cls(a)


def test_every_real_matrix(real_names):
    for name in real_names:
        a = load(name)
        b = a if a.shape[0] == a.shape[1] else a.T.tocsr()
        c = spgemm.matmul(a, b, backend=BACKEND)
        assert isinstance(c, sp.csr_array), name
        assert_product(c, a, b, rtol=1e-12)


@pytest.mark.parametrize("index", [np.int32, np.int64])
@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_random_square_and_rectangular(index, dtype, rtol):
    for seed, (m, k, n) in enumerate([(300, 300, 300), (517, 129, 1001), (64, 2000, 33)]):
        a = random(m, k, 0.03, seed, dtype, index)
        b = random(k, n, 0.03, seed + 100, dtype, index)
        c = spgemm.matmul(a, b, backend=BACKEND)
        assert c.dtype == dtype
        assert_product(c, a, b, rtol)


def test_b_defaults_to_a_and_matrices_stay_matrices():
    a = random(200, 200, 0.05, 7, cls=sp.csr_matrix)
    c = spgemm.matmul(a, backend=BACKEND)
    assert isinstance(c, sp.csr_matrix)
    assert_product(c, a, a, 1e-12)


def test_other_formats_are_converted():
    a = random(150, 90, 0.05, 3)
    b = random(90, 120, 0.05, 4)
    c = spgemm.matmul(a.tocoo(), b.tocsc(), backend=BACKEND)
    assert isinstance(c, sp.csr_array)
    assert_product(c, a, b, 1e-12)


def test_empty_rows_and_empty_matrices():
    a = random(400, 300, 0.02, 11)
    a = sp.csr_array(a.multiply(np.arange(400)[:, None] % 3 == 0))  # two rows in three empty
    b = random(300, 200, 0.02, 12)
    assert_product(spgemm.matmul(a, b, backend=BACKEND), a, b, 1e-12)
    for m, k, n in [(0, 0, 0), (0, 5, 3), (4, 0, 6), (3, 4, 0), (5, 5, 5)]:
        a, b = sp.csr_array((m, k)), sp.csr_array((k, n))
        c = spgemm.matmul(a, b, backend=BACKEND)
        assert c.shape == (m, n) and c.nnz == 0


def test_precision_converts_and_mixed_types_follow_numpy():
    a = random(100, 100, 0.05, 1, np.float32)
    b = random(100, 100, 0.05, 2, np.float64)
    assert spgemm.matmul(a, b, backend=BACKEND).dtype == np.float64
    assert spgemm.matmul(a, a, backend=BACKEND, precision="float64").dtype == np.float64
    ints = sp.csr_array(a.astype(np.int64))
    c = spgemm.matmul(ints, ints, backend=BACKEND, precision="float64")
    assert_product(c, ints.astype(np.float64), ints.astype(np.float64), 1e-12)


def non_canonical():
    """A 2x3 CSR array whose row 0 is unsorted and row 1 repeats column 1
    (not in SciPy's canonical format), and a 3x4 partner."""
    a = sp.csr_array((np.array([1.0, 2.0, 3.0, 4.0]), np.array([2, 0, 1, 1]), np.array([0, 2, 4])), shape=(2, 3))
    assert not a.has_canonical_format
    return a, random(3, 4, 0.9, 5)


def test_non_canonical_scipy_csr_is_multiplied_as_scipy_does_unless_check_canonical():
    a, b = non_canonical()
    want = (a @ b).toarray()
    for check in (True, False):
        c = spgemm.matmul(a, b, backend=BACKEND, check=check)
        assert np.allclose(c.toarray(), want)
        assert c.has_canonical_format
        plan = spgemm.symbolic(a, b, backend=BACKEND, check=check)
        assert np.allclose(plan.numeric(a, b).toarray(), want)
    # As B, and the caller's arrays untouched.
    left = random(5, 2, 0.8, 6)
    indices = a.indices.copy()
    c = spgemm.matmul(left, a, backend=BACKEND)
    assert np.allclose(c.toarray(), (left @ a).toarray())
    assert np.array_equal(a.indices, indices) and not a.has_canonical_format
    with pytest.raises(ValueError, match="row 0 is not sorted without duplicates: column 0 follows column 2"):
        spgemm.matmul(a, b, backend=BACKEND, check="canonical")
    with pytest.raises(ValueError, match="check must be True, False or 'canonical', not 'yes'"):
        spgemm.matmul(a, b, backend=BACKEND, check="yes")


def test_plans_rerun_the_numeric_phase():
    a = random(300, 200, 0.05, 21)
    b = random(200, 100, 0.05, 22)
    plan = spgemm.symbolic(a, b, backend=BACKEND)
    assert plan.backend == "cpu" and plan.nnz == spgemm.matmul(a, b, backend=BACKEND).nnz
    a2 = a.copy()
    a2.data = np.linspace(-1, 1, a2.nnz)
    assert_product(plan.numeric(a2, b), a2, b, 1e-12)


def test_the_gil_is_released_and_threads_agree():
    a = random(2000, 2000, 0.01, 31)
    want = spgemm.matmul(a, a, backend=BACKEND)
    out = []
    threads = [threading.Thread(target=lambda: out.append(spgemm.matmul(a, a, backend=BACKEND))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 4
    for c in out:
        assert (c != want).nnz == 0


def test_backends_and_version():
    names = [b[0] for b in spgemm.backends()]
    assert names == ["cpu", "cuda", "hip"]
    assert dict((n, ok) for n, ok, _ in spgemm.backends())["cpu"]
    assert spgemm.__version__.count(".") == 2
    for f in (spgemm.matmul, spgemm.symbolic, spgemm.backends, spgemm.Plan.numeric):
        assert f.__doc__ and len(f.__doc__) > 80, f
