"""Semirings and masks against SuiteSparse:GraphBLAS (python-graphblas),
the independent oracle, on seeded random matrices and the repository's
real matrices; pruning against SciPy; the errors of bad arguments."""

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm

from conftest import graphblas_mxm, load, random_values as random

gb = pytest.importorskip("graphblas")

RINGS = ["plus_times", "min_plus", "max_plus", "max_times", "lor_land", "plus_pair", "any_pair"]


def graphblas(a, b, ring, mask=None, complement=False):
    """GraphBLAS's C<M> = A (+).(x) B in float64."""
    return graphblas_mxm(a, b, ring, mask, complement)


def assert_same(got, want, ring):
    got = sp.csr_array(got)
    assert got.shape == want.shape
    assert np.array_equal(got.indptr, want.indptr), "structure differs"
    assert np.array_equal(got.indices, want.indices), "columns differ"
    if ring in ("plus_times", "max_times"):
        np.testing.assert_allclose(got.data, want.data, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(got.data, want.data)


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("masked", [None, False, True])
def test_random_products_match_graphblas(ring, masked):
    a = random(230, 150, 0.06, 1)
    b = random(150, 310, 0.08, 2)
    mask = None if masked is None else random(230, 310, 0.2, 3)
    got = spgemm.matmul(a, b, semiring=ring, mask=mask, complement=bool(masked))
    assert_same(got, graphblas(a, b, ring, mask, bool(masked)), ring)


@pytest.mark.parametrize("ring", ["min_plus", "plus_pair", "any_pair", "max_times"])
def test_real_matrices_match_graphblas(real_names, ring):
    for name in real_names:
        a = load(name)
        b = a if a.shape[0] == a.shape[1] else sp.csr_array(a.T)
        mask = a if a.shape[0] == a.shape[1] else None
        got = spgemm.matmul(a, b, semiring=ring, mask=mask)
        assert_same(got, graphblas(a, b, ring, mask), ring)


def test_triangle_count_matches_graphblas():
    # Triangles of a random undirected graph: sum of C<L> = L plus.pair Lᵀ
    # over the strictly lower triangle L (the Sandia "LUT" method).
    g = random(400, 400, 0.03, 7, lo=0.0)
    g = sp.lil_array(((g + g.T) != 0).astype(np.float64))
    g.setdiag(0)
    g = sp.csr_array(g)
    g.eliminate_zeros()
    low = sp.csr_array(sp.tril(g, k=-1))
    c = spgemm.matmul(low, sp.csr_array(low.T), semiring="plus_pair", mask=low)
    want = graphblas(low, sp.csr_array(low.T), "plus_pair", low)
    assert c.sum() == want.sum()
    dense = g.toarray()
    assert c.sum() == round(np.trace(dense @ dense @ dense) / 6)
    # L.T is CSC: read as L's rows, not converted.
    assert spgemm.matmul(low, low.T, semiring="plus_pair", mask=low, backend="cpu").sum() == c.sum()


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("masked", [None, False, True])
def test_csc_b_is_read_as_its_transpose(ring, masked):
    # B given as x.T of a CSR x (a CSC matrix, Bᵀ's arrays), against
    # GraphBLAS on B converted; a mask of 2 entries a row takes dot
    # products of A's rows and x's on the CPU.
    a = random(230, 150, 0.06, 11)
    x = random(310, 150, 0.08, 12)
    mask = None if masked is None else random(230, 310, 0.01, 13)
    want = graphblas(a, sp.csr_array(x.T), ring, mask, bool(masked))
    for backend in ("cpu", "auto"):
        got = spgemm.matmul(a, x.T, semiring=ring, mask=mask, complement=bool(masked), backend=backend)
        assert_same(got, want, ring)


def prune_rows(c, below, keep):
    """SciPy's C with |c| < below dropped, then the keep largest per row."""
    c = sp.csr_array(c)
    rows = []
    for i in range(c.shape[0]):
        s, e = c.indptr[i], c.indptr[i + 1]
        cols, vals = c.indices[s:e], c.data[s:e]
        order = np.argsort(cols, kind="stable")
        cols, vals = cols[order], vals[order]
        if below is not None:
            ok = np.abs(vals) >= below
            cols, vals = cols[ok], vals[ok]
        if keep is not None and len(vals) > keep:
            top = np.lexsort((cols, -np.abs(vals)))[:keep]
            top.sort()
            cols, vals = cols[top], vals[top]
        rows.append((cols, vals))
    indptr = np.concatenate([[0], np.cumsum([len(r[0]) for r in rows])])
    cols = np.concatenate([r[0] for r in rows]) if rows else np.array([], int)
    vals = np.concatenate([r[1] for r in rows]) if rows else np.array([])
    return sp.csr_array((vals, cols, indptr), shape=c.shape)


@pytest.mark.parametrize("below,keep", [(0.05, None), (None, 4), (0.02, 3), (None, 0)])
def test_pruning_matches_scipy(below, keep):
    a = random(300, 300, 0.04, 5)
    # One backend for both: a GPU's sums may round otherwise than the CPU's.
    want = prune_rows(spgemm.matmul(a, a, backend="cpu"), below, keep)
    got = sp.csr_array(spgemm.matmul(a, a, prune=below, keep=keep, backend="cpu"))
    assert np.array_equal(got.indptr, want.indptr)
    assert np.array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)


def test_float32_and_matrix_kinds():
    a = sp.csr_matrix(random(50, 50, 0.1, 6).astype(np.float32))
    c = spgemm.matmul(a, a, semiring="min_plus", mask=a)
    assert isinstance(c, sp.csr_matrix) and c.dtype == np.float32
    want = graphblas(sp.csr_array(a).astype(np.float64), sp.csr_array(a).astype(np.float64), "min_plus", a)
    np.testing.assert_allclose(sp.csr_array(c).toarray(), want.toarray(), rtol=1e-6)


def test_bad_arguments_are_value_errors():
    a = random(20, 20, 0.2, 8)
    with pytest.raises(ValueError, match="unknown semiring \"min_times\""):
        spgemm.matmul(a, a, semiring="min_times")
    with pytest.raises(ValueError, match="the mask is 20x21 but the product is 20x20"):
        spgemm.matmul(a, a, mask=random(20, 21, 0.1, 9))
    with pytest.raises(ValueError, match="at least 0"):
        spgemm.matmul(a, a, prune=-1.0)
    with pytest.raises(ValueError, match="keep must be an integer at least 0"):
        spgemm.matmul(a, a, keep=-2)
    with pytest.raises(TypeError):
        spgemm.matmul(a, a, mask=np.ones((20, 20)))



def test_pruning_columns_matches_scipy():
    a = random(200, 150, 0.05, 12)
    b = random(150, 260, 0.05, 13)
    whole = spgemm.matmul(a, b, backend="cpu")
    want = sp.csr_array(prune_rows(sp.csr_array(whole.T), 0.01, 3).T)
    got = sp.csr_array(spgemm.matmul(a, b, prune=0.01, keep=3, prune_columns=True, backend="cpu"))
    got.sort_indices()
    want.sort_indices()
    assert np.array_equal(got.indptr, want.indptr)
    assert np.array_equal(got.indices, want.indices)
    np.testing.assert_array_equal(got.data, want.data)


MONOIDS = {
    "plus_times": "plus", "plus_pair": "plus", "min_plus": "min", "max_plus": "max",
    "max_times": "max", "lor_land": "lor", "any_pair": "any",
}


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("masked", [None, False, True])
def test_reduced_products_match_graphblas(ring, masked):
    # The product reduced to one value by its monoid, against GraphBLAS's
    # C.reduce_scalar on the same C; B given as x.T (CSC) too.
    a = random(230, 150, 0.06, 21)
    x = random(310, 150, 0.08, 22)
    mask = None if masked is None else random(230, 310, 0.2, 23)
    c = graphblas(a, sp.csr_array(x.T), ring, mask, bool(masked))
    monoid = getattr(gb.monoid, MONOIDS[ring])
    want = float(gb.io.from_scipy_sparse(c).reduce_scalar(monoid).new().value)
    for b in (sp.csr_array(x.T), x.T):
        got = spgemm.matmul_reduce(a, b, semiring=ring, mask=mask, complement=bool(masked))
        assert isinstance(got, float)
        assert got == pytest.approx(want, rel=1e-12), ring


def test_reduced_triangle_counts_and_identities():
    g = random(400, 400, 0.03, 7, lo=0.0)
    g = sp.lil_array(((g + g.T) != 0).astype(np.float64))
    g.setdiag(0)
    low = sp.csr_array(sp.tril(sp.csr_array(g), k=-1))
    dense = sp.csr_array(g).toarray()
    triangles = round(np.trace(dense @ dense @ dense) / 6)
    assert spgemm.matmul_reduce(low, low.T, semiring="plus_pair", mask=low) == triangles > 0
    # Integer values give an int.
    li = low.astype(np.int64)
    got = spgemm.matmul_reduce(li, li.T, semiring="plus_pair", mask=li)
    assert isinstance(got, int) and got == triangles
    # Nothing met: the monoid's identity.
    empty = sp.csr_array((400, 400))
    assert spgemm.matmul_reduce(low, low, semiring="min_plus", mask=empty) == np.inf
    assert spgemm.matmul_reduce(low, low, semiring="max_times", mask=empty) == -np.inf
    assert spgemm.matmul_reduce(li, li, semiring="min_plus", mask=empty) == np.iinfo(np.int64).max
    assert spgemm.matmul_reduce(low, low, semiring="plus_pair", mask=empty) == 0.0
    # Pruned: C formed, pruned, reduced.
    a = random(120, 80, 0.1, 31)
    full = spgemm.matmul(a, a.T, prune=0.3)
    assert spgemm.matmul_reduce(a, a.T, prune=0.3) == pytest.approx(full.sum(), rel=1e-12)


def test_bool_matrices_give_bool_products():
    # Bool A and B: C is bool, as SciPy's own product of bool matrices and
    # GraphBLAS's LOR_LAND on BOOL give it; plus_pair on bool is any_pair.
    a = random(120, 90, 0.05, 51) > 0.5
    b = random(90, 140, 0.05, 52) > 0.5
    a, b = sp.csr_array(a), sp.csr_array(b)
    assert a.dtype == np.bool_
    want = sp.csr_array(a @ b)
    want.sort_indices()
    got = spgemm.matmul(a, b)
    assert got.dtype == np.bool_
    assert_same(got.astype(np.float64), graphblas(a, b, "lor_land"), "lor_land")
    assert np.array_equal(got.toarray(), want.toarray())
    pairs = spgemm.matmul(a, b, semiring="plus_pair")
    assert pairs.dtype == np.bool_ and np.array_equal(pairs.toarray(), (a.astype(int) @ b.astype(int)).toarray() > 0)
    mask = sp.csr_array(random(120, 140, 0.1, 53))
    masked = spgemm.matmul(a, b, mask=mask, semiring="lor_land")
    assert np.array_equal(masked.toarray(), got.toarray() & (mask.toarray() != 0))
    assert spgemm.matmul_reduce(a, b, mask=mask) is bool(masked.toarray().any())
    assert spgemm.matmul_reduce(a, b, mask=sp.csr_array((120, 140))) is False
    # Stored false values: min_plus is and-or, max_plus or-or, as
    # GraphBLAS's MIN_PLUS and MAX_PLUS on BOOL; computed densely here.
    x, y = random(120, 90, 0.05, 54), random(90, 140, 0.05, 55)
    af = sp.csr_array((x.data > 0.5, x.indices, x.indptr), shape=x.shape)
    bf = sp.csr_array((y.data > 0.5, y.indices, y.indptr), shape=y.shape)
    assert not af.data.all() and af.data.any()
    sa, sb = (x != 0).toarray(), (y != 0).toarray()
    va, vb = af.toarray(), bf.toarray()
    meets = sa[:, :, None] & sb[None, :, :]
    ors = (va[:, :, None] | vb[None, :, :]) | ~meets
    ands = (va[:, :, None] & vb[None, :, :]) & meets
    either = (va[:, :, None] | vb[None, :, :]) & meets
    for ring, want in [("min_plus", ors.all(axis=1)), ("max_plus", either.any(axis=1)), ("lor_land", ands.any(axis=1))]:
        got = spgemm.matmul(af, bf, semiring=ring)
        assert got.dtype == np.bool_, ring
        assert np.array_equal(got.toarray() != 0, want & meets.any(axis=1)), ring
        stored = sp.csr_array(got.copy())
        assert stored.nnz == meets.any(axis=1).sum(), ring
        assert spgemm.matmul_reduce(af, bf, semiring=ring) is bool(
            want[meets.any(axis=1)].all() if ring == "min_plus" else want[meets.any(axis=1)].any()
        ), ring
    # SuiteSparse:GraphBLAS on BOOL names them land_lor and lor_lor.
    for ring, theirs in [("min_plus", "land_lor"), ("max_plus", "lor_lor"), ("lor_land", "lor_land")]:
        assert_same(spgemm.matmul(af, bf, semiring=ring), graphblas_mxm(af, bf, theirs, dtype=np.bool_), ring)
    # prune: a threshold in (0, 1] drops the false entries; keep prefers
    # true ones (then the lower column).
    full = spgemm.matmul(af, bf)
    dropped = spgemm.matmul(af, bf, prune=0.5)
    assert dropped.nnz == int(full.data.sum()) and dropped.data.all()
    kept = spgemm.matmul(af, bf, keep=1)
    for i in range(full.shape[0]):
        row = full.data[full.indptr[i]:full.indptr[i + 1]]
        if len(row):
            assert kept.indptr[i + 1] - kept.indptr[i] == 1
            assert kept.data[kept.indptr[i]] == row.any()
    with pytest.raises(ValueError, match="min_plus on bool values"):
        spgemm.matmul(af, bf, semiring="min_plus", prune=0.5)
    with pytest.raises(ValueError, match="at least 0"):
        spgemm.matmul(af, bf, prune=-1.0)
    # Mixed with float64: the values as numbers, as before.
    assert spgemm.matmul(a, b.astype(np.float64)).dtype == np.float64
