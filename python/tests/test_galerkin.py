"""Galerkin products (ptap, rap) against SciPy's own products, and their
errors."""

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm


def random(m, n, density, seed):
    rng = np.random.default_rng(seed)
    return sp.random_array((m, n), density=density, format="csr", rng=rng, dtype=np.float64)


def test_ptap_and_rap_match_scipy():
    n = 12
    a = sp.csr_array(sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n * n, n * n)))
    agg = np.arange(n * n) // 4
    p = sp.csr_array((np.ones(n * n), (np.arange(n * n), agg)), shape=(n * n, n * n // 4))
    c = spgemm.ptap(a, p)
    assert isinstance(c, sp.csr_array) and c.shape == (n * n // 4, n * n // 4)
    np.testing.assert_allclose(c.toarray(), (p.T @ a @ p).toarray(), atol=1e-12)
    r = random(30, n * n, 0.05, 11)
    c = spgemm.rap(r, a, p, backend="cpu")
    np.testing.assert_allclose(c.toarray(), (r @ a @ p).toarray(), atol=1e-12)
    with pytest.raises(ValueError, match="R is 30x144 but A is 143x143"):
        spgemm.rap(r, sp.csr_array(a[:143, :143]), sp.csr_array(p[:143]))
    with pytest.raises(ValueError, match="A is 144x144 but P is 143x36"):
        spgemm.ptap(a, sp.csr_array(p[:143]))


def reversed_rows(m):
    """``m`` with each row's entries stored in reverse order."""
    indices, data = m.indices.copy(), m.data.copy()
    for i in range(m.shape[0]):
        lo, hi = m.indptr[i], m.indptr[i + 1]
        indices[lo:hi], data[lo:hi] = indices[lo:hi][::-1], data[lo:hi][::-1]
    return sp.csr_array((data, indices, m.indptr.copy()), shape=m.shape)


@pytest.mark.parametrize("backend", ["cpu", "auto"])
def test_ptap_without_a_plan_matches_the_plan(backend):
    a = random(300, 300, 0.03, 31)
    a = sp.csr_array(a + a.T + sp.eye_array(300))
    p = random(300, 50, 0.04, 32)
    plan, c = spgemm.galerkin(a, p, backend=backend)
    want = (p.T @ a @ p).toarray()
    np.testing.assert_allclose(c.toarray(), want, atol=1e-12)
    for dtype, tol in ((np.float64, 1e-12), (np.float32, 1e-4)):
        x = spgemm.ptap(a.astype(dtype), p.astype(dtype), backend=backend)
        assert x.dtype == dtype and x.shape == (50, 50) and x.has_sorted_indices
        np.testing.assert_allclose(x.toarray(), want, rtol=tol, atol=tol)
    # Rows stored unsorted are multiplied as they are.
    x = spgemm.ptap(reversed_rows(a), reversed_rows(p), backend=backend)
    np.testing.assert_allclose(x.toarray(), want, atol=1e-12)
    r = random(70, 300, 0.05, 33)
    x = spgemm.rap(reversed_rows(r), a, p, backend=backend)
    np.testing.assert_allclose(x.toarray(), (r @ a @ p).toarray(), atol=1e-12)


def test_galerkin_plan_recomputes_for_new_values():
    a = random(200, 200, 0.05, 21)
    a = sp.csr_array(a + a.T + sp.eye_array(200))
    p = random(200, 40, 0.05, 22)
    plan, c = spgemm.galerkin(a, p)
    assert isinstance(plan, spgemm.GalerkinPlan) and plan.nnz == c.nnz
    np.testing.assert_allclose(c.toarray(), (p.T @ a @ p).toarray(), atol=1e-12)
    a2 = a.copy()
    a2.data = 3.0 * a2.data - 1.0
    np.testing.assert_allclose(plan.numeric(a2).toarray(), (p.T @ a2 @ p).toarray(), atol=1e-11)
    other = random(200, 200, 0.05, 23)
    with pytest.raises(ValueError, match="Galerkin plan was built for"):
        plan.numeric(other)
    r = random(30, 200, 0.1, 24)
    plan, c = spgemm.galerkin(a, p, r, backend="cpu")
    assert plan.backend == "cpu" and c.shape == (30, 40)
    np.testing.assert_allclose(plan.numeric(a2).toarray(), (r @ a2 @ p).toarray(), atol=1e-11)


@pytest.mark.parametrize("backend", ["cpu", "auto"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_galerkin_plan_refills_the_c_it_returned(backend, dtype):
    # A re-setup with out=: C's values written into the C the setup
    # returned (its arrays kept), for A with the plan's int32 offsets and
    # with int64 ones; a C of another structure, dtype, shape or kind, or
    # read-only values, is refused and left as it was.
    tol = 1e-11 if dtype == np.float64 else 1e-4
    a = random(400, 400, 0.03, 51)
    a = sp.csr_array(a + a.T + sp.eye_array(400)).astype(dtype)
    p = random(400, 70, 0.04, 52).astype(dtype)
    plan, c = spgemm.galerkin(a, p, backend=backend)
    indptr, indices, data = c.indptr, c.indices, c.data
    for scale in (3.0, -0.5):
        a2 = a.copy()
        a2.data = (scale * a2.data - 1.0).astype(dtype)
        if scale < 0:
            a2.indptr = a2.indptr.astype(np.int64)
        out = plan.numeric(a2, out=c)
        assert out is c and c.data is data and c.indptr is indptr and c.indices is indices
        assert c.dtype == dtype
        want = (p.T @ a2 @ p).toarray()
        np.testing.assert_allclose(c.toarray(), want, rtol=tol, atol=tol)
    before = c.data.copy()
    with pytest.raises(ValueError, match="Galerkin plan was built for"):
        plan.numeric(sp.csr_array(a + sp.eye_array(400, k=9).astype(dtype)), out=c)
    lo = c.indptr[int(np.argmax(np.diff(c.indptr) >= 2))]
    moved = c.copy()
    moved.indices[[lo, lo + 1]] = moved.indices[[lo + 1, lo]]
    with pytest.raises(ValueError, match="its indices differ"):
        plan.numeric(a, out=moved)
    fewer = sp.csr_array((c.data[1:], c.indices[1:], np.maximum(c.indptr - 1, 0)), shape=c.shape)
    with pytest.raises(ValueError, match="differ from C's"):
        plan.numeric(a, out=fewer)
    other = np.float32 if dtype == np.float64 else np.float64
    with pytest.raises(ValueError, match=f"out holds {np.dtype(other)} values"):
        plan.numeric(a, out=c.astype(other))
    with pytest.raises(ValueError, match="out must be the 70x70 SciPy CSR C"):
        plan.numeric(a, out=c.toarray())
    with pytest.raises(ValueError, match="out must be the 70x70 SciPy CSR C"):
        plan.numeric(a, out=sp.csr_array(c[:69]))
    frozen = c.copy()
    frozen.data.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        plan.numeric(a, out=frozen)
    np.testing.assert_array_equal(c.data, before)
