"""Semirings and structural masks on CuPy and PyTorch CSR matrices, C left
on the GPU, against the CPU backend on the same matrices as SciPy arrays
(whose own semiring products test_semirings.py checks against GraphBLAS);
the errors of what device matrices do not take. Skipped where CuPy /
PyTorch or a GPU is missing, as test_device.py is."""

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from conftest import random_values as random
from test_device import cupy, from_torch, to_cupy, to_torch, torch  # noqa: F401 (fixtures)

RINGS = ["plus_times", "min_plus", "max_plus", "max_times", "lor_land", "plus_pair", "any_pair"]


def assert_same(got, want, ring):
    got, want = sp.csr_array(got), sp.csr_array(want)
    assert got.shape == want.shape
    assert np.array_equal(got.indptr, want.indptr), "structure differs"
    assert np.array_equal(got.indices, want.indices), "columns differ"
    if ring == "plus_times":
        # Sums in another order: equal up to rounding.
        np.testing.assert_allclose(got.data, want.data, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(got.data, want.data)


@pytest.mark.parametrize("ring", RINGS)
@pytest.mark.parametrize("masked", [None, False, True])
def test_cupy_semirings_match_the_cpu(cupy, ring, masked):
    # Rows longer than a warp, rectangular, negative values; a mask of
    # its own (on the device too), or its complement.
    a, b = random(230, 150, 0.2, 1), random(150, 310, 0.3, 2)
    mask = None if masked is None else random(230, 310, 0.2, 3)
    complement = bool(masked)
    got = spgemm.matmul(
        to_cupy(a),
        to_cupy(b),
        semiring=ring,
        mask=None if mask is None else to_cupy(mask),
        complement=complement,
    )
    assert isinstance(got, type(to_cupy(a)))
    want = spgemm.matmul(a, b, semiring=ring, mask=mask, complement=complement, backend="cpu")
    assert_same(got.get(), want, ring)


def test_cupy_triangles_with_the_mask_as_a(cupy):
    # C<L> = L plus.pair L.T summed: the count of triangles; the mask is
    # the very matrix A (its arrays read once).
    g = random(600, 600, 0.03, 4, lo=0.0)
    g = sp.lil_array(((g + g.T) != 0).astype(np.float64))
    g.setdiag(0)
    low = sp.csr_array(sp.tril(sp.csr_array(g), k=-1))
    lc, uc = to_cupy(low), to_cupy(sp.csr_array(low.T))
    count = float(spgemm.matmul(lc, uc, mask=lc, semiring="plus_pair").data.sum())
    want = spgemm.matmul(low, sp.csr_array(low.T), mask=low, semiring="plus_pair", backend="cpu")
    assert count == want.sum() > 0
    # L.T on the device is CSC: read as L's rows, nothing transposed.
    assert float(spgemm.matmul(lc, lc.T, mask=lc, semiring="plus_pair").data.sum()) == count
    # C<A> = A min.plus A, B the same matrix as A.
    ac = to_cupy(low)
    assert_same(
        spgemm.matmul(ac, ac, mask=ac, semiring="min_plus").get(),
        spgemm.matmul(low, low, mask=low, semiring="min_plus", backend="cpu"),
        "min_plus",
    )


@pytest.mark.parametrize("ring", RINGS)
def test_cupy_csc_b_is_read_as_its_transpose(cupy, ring):
    # B given as x.T of a CuPy CSR x (CSC: Bᵀ's arrays) under a structural
    # mask of its own, and one row (a small grid, B formed on the device);
    # unmasked and complemented products convert B as before.
    a, x = random(230, 150, 0.2, 11), random(310, 150, 0.3, 12)
    for rows, mask in ((a, random(230, 310, 0.05, 13)), (a[:1], random(1, 310, 0.5, 14))):
        for m, complement in ((mask, False), (mask, True), (None, False)):
            got = spgemm.matmul(
                to_cupy(rows),
                to_cupy(x).T,
                semiring=ring,
                mask=None if m is None else to_cupy(m),
                complement=complement,
            )
            want = spgemm.matmul(
                rows, sp.csr_array(x.T), semiring=ring, mask=m, complement=complement, backend="cpu"
            )
            assert_same(got.get(), want, ring)


@pytest.mark.parametrize("ring", RINGS)
def test_torch_csc_b_is_read_as_its_transpose(torch, ring):
    # B given as x.t() of a torch CSR x (a CSC tensor: Bᵀ's tensors) under
    # a structural mask, and one row; unmasked and complemented products
    # convert B to CSR on the device.
    a, x = random(230, 150, 0.2, 31), random(310, 150, 0.3, 32)
    tx = to_torch(torch, x).t()
    assert tx.layout == torch.sparse_csc
    for rows, mask in ((a, random(230, 310, 0.05, 33)), (a[:1], random(1, 310, 0.5, 34))):
        for m, complement in ((mask, False), (mask, True), (None, False)):
            got = spgemm.matmul(
                to_torch(torch, rows),
                tx,
                semiring=ring,
                mask=None if m is None else to_torch(torch, m),
                complement=complement,
            )
            assert got.layout == torch.sparse_csr
            want = spgemm.matmul(
                rows, sp.csr_array(x.T), semiring=ring, mask=m, complement=complement, backend="cpu"
            )
            assert_same(from_torch(got), want, ring)


def test_torch_csc_operands_elsewhere(torch):
    # CSC tensors where no transpose is read in place: converted to CSR on
    # the device, in the plain product, a plan (its structure and values
    # compared and read in CSR order), a Galerkin product and a search.
    a, b = random(200, 120, 0.05, 41), random(120, 90, 0.05, 42)
    ta, tbt = to_torch(torch, a), to_torch(torch, sp.csr_array(b.T)).t()
    want = spgemm.matmul(a, b, backend="cpu")
    assert_same(from_torch(spgemm.matmul(ta, tbt)), want, "plus_times")
    plan = spgemm.symbolic(ta, tbt)
    b2 = b.copy()
    b2.data = 3.0 * b2.data
    tb2t = to_torch(torch, sp.csr_array(b2.T)).t()
    assert_same(from_torch(plan.numeric(ta, tb2t)), spgemm.matmul(a, b2, backend="cpu"), "plus_times")
    sq = sp.csr_array(a[:, :120] @ a[:, :120].T + sp.eye_array(200))
    p = random(200, 30, 0.1, 43)
    c = spgemm.ptap(to_torch(torch, sq).t(), to_torch(torch, p))
    np.testing.assert_allclose(from_torch(c).toarray(), (p.T @ sq.T @ p).toarray(), atol=1e-10)
    levels = spgemm.bfs_levels(to_torch(torch, sq).t(), 0)
    want = spgemm.bfs_levels(sp.csr_array(sq.T), 0, backend="cpu")
    np.testing.assert_array_equal(levels.cpu().numpy(), want)


@pytest.mark.parametrize("ring", RINGS)
def test_cupy_a_times_its_own_transpose(cupy, ring):
    # A·Aᵀ with B given as A.T, A's own arrays (one operand serves both),
    # rectangular, under a mask of its own.
    a, mask = random(230, 150, 0.2, 21), random(230, 230, 0.1, 22)
    ca = to_cupy(a)
    got = spgemm.matmul(ca, ca.T, semiring=ring, mask=to_cupy(mask))
    want = spgemm.matmul(a, sp.csr_array(a.T), semiring=ring, mask=mask, backend="cpu")
    assert_same(got.get(), want, ring)


def test_torch_semirings_match_the_cpu(torch):
    a, b = random(120, 90, 0.2, 5), random(90, 140, 0.2, 6)
    mask = random(120, 140, 0.3, 7)
    for ring, m in (("max_times", mask), ("min_plus", None), ("any_pair", mask)):
        got = spgemm.matmul(
            to_torch(torch, a), to_torch(torch, b), semiring=ring, mask=None if m is None else to_torch(torch, m)
        )
        assert got.layout == torch.sparse_csr and got.device.type == "cuda"
        assert_same(from_torch(got), spgemm.matmul(a, b, semiring=ring, mask=m, backend="cpu"), ring)


def small_integers(m, n, density, seed):
    """A random matrix of nonzero integers in [-3, 3] as float64: exact sums,
    many ties of magnitude."""
    rng = np.random.default_rng(seed)
    x = sp.random_array((m, n), density=density, format="csr", rng=rng)
    x.data = rng.choice([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0], size=x.nnz)
    return sp.csr_array(x)


@pytest.mark.parametrize("columns", [False, True])
@pytest.mark.parametrize("masked", [None, False, True])
def test_pruning_on_the_device_matches_the_cpu(cupy, masked, columns):
    # Ties of magnitude everywhere (small integers): the kept entries of a
    # row (column) must be the CPU's, ties to the lower column (row); rows
    # longer than a warp and shorter than keep.
    a, b = small_integers(200, 120, 0.15, 21), small_integers(120, 260, 0.2, 22)
    mask = None if masked is None else small_integers(200, 260, 0.3, 23)
    for prune, keep in ((2.5, None), (None, 7), (3.0, 5), (None, 0), (0.0, 1000)):
        for ring in ("plus_times", "min_plus"):
            args = dict(semiring=ring, mask=mask, complement=bool(masked), prune=prune, keep=keep)
            args["prune_columns"] = columns
            want = spgemm.matmul(a, b, backend="cpu", **args)
            args["mask"] = None if mask is None else to_cupy(mask)
            got = spgemm.matmul(to_cupy(a), to_cupy(b), **args)
            assert isinstance(got, type(to_cupy(a)))
            assert_same(got.get(), want, "exact")


def test_pruning_torch_integers_on_the_device(torch):
    a = small_integers(150, 150, 0.1, 24).astype(np.int64)
    for keep, columns in ((3, False), (4, True)):
        got = spgemm.matmul(to_torch(torch, a), prune=2, keep=keep, prune_columns=columns)
        want = spgemm.matmul(a, prune=2, keep=keep, prune_columns=columns, backend="cpu")
        assert got.dtype == torch.int64
        assert_same(from_torch(got), want, "exact")


def test_float32_on_the_device(cupy):
    a = random(80, 80, 0.1, 8).astype(np.float32)
    got = spgemm.matmul(to_cupy(a), semiring="max_plus", mask=to_cupy(a))
    assert got.dtype == np.float32
    assert_same(got.get(), spgemm.matmul(a, a, semiring="max_plus", mask=a, backend="cpu"), "max_plus")


def test_what_device_matrices_do_not_take(cupy, torch):
    a = random(30, 30, 0.2, 9)
    ac = to_cupy(a)
    with pytest.raises(ValueError, match="threshold must be a number at least 0, not -0.1"):
        spgemm.matmul(ac, ac, semiring="min_plus", prune=-0.1)
    with pytest.raises(TypeError, match="the mask must be of A's kind"):
        spgemm.matmul(ac, ac, mask=a, semiring="plus_pair")
    with pytest.raises(ValueError, match="the mask is 30x31 but the product is 30x30"):
        spgemm.matmul(ac, ac, mask=to_cupy(random(30, 31, 0.2, 10)), semiring="plus_pair")
    with pytest.raises(ValueError, match='unknown semiring "min_times"'):
        spgemm.matmul(ac, ac, semiring="min_times")
    # Unsorted rows, unchecked: refused under a mask rather than searched.
    unsorted = torch.sparse_csr_tensor(
        torch.tensor([0, 2, 2]), torch.tensor([1, 0]), torch.tensor([1.0, 2.0], dtype=torch.float64), size=(2, 2)
    ).cuda()
    with pytest.raises(ValueError, match="needs A's rows sorted"):
        spgemm.matmul(unsorted, unsorted, mask=unsorted, semiring="plus_pair", check=False)
    # A complemented mask with unsorted rows: taken on a small grid (pushed
    # into a bitmap), refused where its complement is searched.
    c = spgemm.matmul(unsorted, unsorted, mask=unsorted, complement=True, check=False)
    assert c.to_dense().cpu().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    n = 40
    rows = [[(r + 1) % n, r] for r in range(n)]
    wide = torch.sparse_csr_tensor(
        torch.arange(0, 2 * n + 1, 2),
        torch.tensor(sum(rows, [])),
        torch.ones(2 * n, dtype=torch.float64),
        size=(n, n),
    ).cuda()
    with pytest.raises(ValueError, match="complemented mask on the device needs its rows sorted"):
        spgemm.matmul(wide, wide, mask=wide, complement=True, check=False)


def test_galerkin_products_of_device_matrices(cupy, torch):
    # P.T @ A @ P with P.T formed on the device, R @ A @ P, on CuPy and
    # torch matrices; C of their kind, on the GPU.
    a = random(500, 500, 0.02, 11)
    a = sp.csr_array(a + a.T + sp.eye_array(500))
    p, r = random(500, 60, 0.05, 12), random(45, 500, 0.05, 13)
    c = spgemm.ptap(to_cupy(a), to_cupy(p))
    assert isinstance(c, type(to_cupy(a))) and c.shape == (60, 60)
    np.testing.assert_allclose(c.get().toarray(), (p.T @ a @ p).toarray(), atol=1e-12)
    c = spgemm.rap(to_torch(torch, r), to_torch(torch, a), to_torch(torch, p))
    assert c.layout == torch.sparse_csr and c.device.type == "cuda"
    np.testing.assert_allclose(from_torch(c).toarray(), (r @ a @ p).toarray(), atol=1e-12)
    with pytest.raises(ValueError, match="R is 45x500 but A is 499x499"):
        spgemm.rap(to_cupy(r), to_cupy(sp.csr_array(a[:499, :499])), to_cupy(sp.csr_array(p[:499])))
    with pytest.raises(ValueError, match="of one kind"):
        spgemm.ptap(to_cupy(a), p)


def test_galerkin_plans_of_device_matrices(cupy, torch):
    # The plan on CuPy and torch matrices: C, then a re-setup with new
    # values of A (numeric phases only) on the device; another structure,
    # another kind and a mix are errors.
    a = random(500, 500, 0.02, 21)
    a = sp.csr_array(a + a.T + sp.eye_array(500))
    p, r = random(500, 60, 0.05, 22), random(45, 500, 0.05, 23)
    a2 = a.copy()
    a2.data = 0.5 * a2.data - 2.0
    plan, c = spgemm.galerkin(to_cupy(a), to_cupy(p))
    assert isinstance(c, type(to_cupy(a))) and plan.backend == "cuda" and plan.nnz == c.nnz
    np.testing.assert_allclose(c.get().toarray(), (p.T @ a @ p).toarray(), atol=1e-12)
    again = plan.numeric(to_cupy(a2))
    np.testing.assert_allclose(again.get().toarray(), (p.T @ a2 @ p).toarray(), atol=1e-12)
    with pytest.raises(ValueError, match="A is not the matrix the Galerkin plan was built for"):
        plan.numeric(to_cupy(sp.csr_array(a + sp.eye_array(500, k=7))))
    with pytest.raises(TypeError, match="built for cupy matrices, not scipy"):
        plan.numeric(a2)
    with pytest.raises(TypeError, match="out= refills a SciPy C"):
        plan.numeric(to_cupy(a2), out=c)
    with pytest.raises(ValueError, match="of one kind"):
        spgemm.galerkin(to_cupy(a), p)
    plan, c = spgemm.galerkin(to_torch(torch, a), to_torch(torch, p), to_torch(torch, r))
    assert c.layout == torch.sparse_csr and c.device.type == "cuda"
    np.testing.assert_allclose(from_torch(c).toarray(), (r @ a @ p).toarray(), atol=1e-12)
    again = plan.numeric(to_torch(torch, a2))
    np.testing.assert_allclose(from_torch(again).toarray(), (r @ a2 @ p).toarray(), atol=1e-12)
    # float32 values, converted on the device for the re-setup.
    plan, c = spgemm.galerkin(to_cupy(a.astype(np.float32)), to_cupy(p.astype(np.float32)))
    assert c.dtype == np.float32
    again = plan.numeric(to_cupy(a2))
    assert again.dtype == np.float32
    np.testing.assert_allclose(again.get().toarray(), (p.T @ a2 @ p).toarray(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ring", RINGS)
def test_cupy_reduced_products_match_the_cpu(cupy, ring):
    # Reduced on the device without forming C under a structural mask
    # (B as x.T read as Bᵀ, and as B), against the CPU's reduction; under
    # the complement C is formed and reduced.
    a, x = random(230, 150, 0.2, 41), random(310, 150, 0.3, 42)
    mask = random(230, 310, 0.2, 43)
    ac, xc, mc = to_cupy(a), to_cupy(x), to_cupy(mask)
    for complement in (False, True):
        want = spgemm.matmul_reduce(a, x.T, semiring=ring, mask=mask, complement=complement, backend="cpu")
        for b in (xc.T, to_cupy(sp.csr_array(x.T))):
            got = spgemm.matmul_reduce(ac, b, semiring=ring, mask=mc, complement=complement)
            assert got == pytest.approx(want, rel=1e-12), (ring, complement)


def test_cupy_reduced_triangles(cupy):
    g = random(600, 600, 0.03, 4, lo=0.0)
    g = sp.lil_array(((g + g.T) != 0).astype(np.float64))
    g.setdiag(0)
    low = sp.csr_array(sp.tril(sp.csr_array(g), k=-1))
    lc = to_cupy(low)
    want = spgemm.matmul(low, low.T, mask=low, semiring="plus_pair", backend="cpu").sum()
    assert spgemm.matmul_reduce(lc, lc.T, mask=lc, semiring="plus_pair") == want > 0
    empty = to_cupy(sp.csr_array((600, 600)))
    assert spgemm.matmul_reduce(lc, lc.T, mask=empty, semiring="min_plus") == np.inf


def test_torch_reduced_triangles(torch):
    g = random(300, 300, 0.05, 5, lo=0.0)
    g = sp.lil_array(((g + g.T) != 0).astype(np.float64))
    g.setdiag(0)
    low = sp.csr_array(sp.tril(sp.csr_array(g), k=-1)).astype(np.int64)
    lt = to_torch(torch, low)
    want = spgemm.matmul(low, low.T, mask=low, semiring="plus_pair", backend="cpu").sum()
    got = spgemm.matmul_reduce(lt, to_torch(torch, sp.csr_array(low.T)), mask=lt, semiring="plus_pair")
    assert isinstance(got, int) and got == want > 0


def test_torch_bool_products(torch):
    # Bool tensors give a bool C on the device, as the CPU's bool product.
    a = sp.csr_array(random(200, 150, 0.05, 61) > 0.5)
    b = sp.csr_array(random(150, 170, 0.05, 62) > 0.5)
    got = spgemm.matmul(to_torch(torch, a), to_torch(torch, b))
    assert got.dtype == torch.bool
    want = spgemm.matmul(a, b, backend="cpu")
    assert np.array_equal(got.crow_indices().cpu().numpy(), want.indptr)
    assert np.array_equal(got.col_indices().cpu().numpy(), want.indices)
    assert np.array_equal(got.values().cpu().numpy(), want.data)
    # Stored false values, min_plus (and-or on booleans) on the device.
    af = sp.csr_array((a.data.copy(), a.indices, a.indptr), shape=a.shape)
    bf = sp.csr_array((b.data.copy(), b.indices, b.indptr), shape=b.shape)
    af.data[::3], bf.data[::4] = False, False
    got = spgemm.matmul(to_torch(torch, af), to_torch(torch, bf), semiring="min_plus")
    want = spgemm.matmul(af, bf, semiring="min_plus", backend="cpu")
    assert want.data.any() and not want.data.all()
    assert got.dtype == torch.bool
    assert np.array_equal(got.col_indices().cpu().numpy(), want.indices)
    assert np.array_equal(got.values().cpu().numpy(), want.data)
