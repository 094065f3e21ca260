"""Shared fixtures: the real matrices of the repository's data/matrices (or
$SPGEMM_MATRICES) and helpers that compare a product with SciPy's."""

import os
import pathlib
import warnings

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

ROOT = pathlib.Path(__file__).resolve().parents[2]


def matrices_dir() -> pathlib.Path:
    d = pathlib.Path(os.environ.get("SPGEMM_MATRICES", ROOT / "data" / "matrices"))
    assert (d / "MANIFEST.tsv").is_file(), f"real matrices not found in {d} (set SPGEMM_MATRICES)"
    return d


def real_matrix_names() -> list:
    lines = (matrices_dir() / "MANIFEST.tsv").read_text().splitlines()[1:]
    rows = [l.split("\t") for l in lines if l.strip()]
    return [r[0] for r in rows if r[5] != "complex"]


def load(name: str) -> sp.csr_array:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # mmread's return type is changing
        m = scipy.io.mmread(str(matrices_dir() / f"{name}.mtx.gz"))
    return sp.csr_array(m).astype(np.float64)


def assert_product(c, a, b, rtol):
    """C equals SciPy's A @ B: the same shape and kind, entries equal to
    rounding relative to |A| @ |B| (explicit zeros aside: SciPy drops
    entries that cancel, spgemm keeps them)."""
    want = a @ b
    assert c.shape == want.shape
    assert c.dtype == want.dtype, (c.dtype, want.dtype)
    scale = abs(a) @ abs(b)
    diff = abs(sp.csr_array(c) - sp.csr_array(want))
    if diff.nnz:
        excess = diff - rtol * scale
        assert excess.max() <= 1e-300, f"largest error {diff.max()} against scale {scale.max()}"
    got = sp.csr_array(c)
    assert got.has_sorted_indices
    # Every entry SciPy keeps is in C's structure (C also keeps those that
    # cancel, which SciPy drops).
    pattern = sp.csr_array((np.ones(got.nnz), got.indices, got.indptr), shape=got.shape)
    want = sp.csr_array(want)
    want.eliminate_zeros()
    kept = abs(want).multiply(pattern)
    assert kept.nnz == want.nnz, f"{want.nnz - kept.nnz} entries of SciPy's product missing"


@pytest.fixture(scope="session")
def real_names():
    names = real_matrix_names()
    assert len(names) >= 50
    return names


def random_values(m, n, density, seed, lo=-1.0):
    """A seeded random CSR array, its values uniform in [lo, 1)."""
    rng = np.random.default_rng(seed)
    a = sp.random_array((m, n), density=density, format="csr", rng=rng, dtype=np.float64)
    a.data = lo + (1.0 - lo) * a.data
    return a


def graphblas_mxm(a, b, ring, mask=None, complement=False, dtype=np.float64):
    """SuiteSparse:GraphBLAS's C<M> = A (+).(x) B (python-graphblas; the
    caller skips without it) as a sorted SciPy CSR array of ``dtype``:
    lor_land on A and B cast to booleans, its result as 1 / 0."""
    import graphblas as gb

    ga, gb_ = gb.io.from_scipy_sparse(a), gb.io.from_scipy_sparse(b)
    if ring == "lor_land":
        ga, gb_ = ga.dup(dtype=bool), gb_.dup(dtype=bool)
    expr = ga.mxm(gb_, getattr(gb.semiring, ring))
    if mask is None:
        c = expr.new()
    else:
        m = gb.io.from_scipy_sparse(mask).S
        c = expr.new(mask=~m if complement else m)
    out = sp.csr_array(gb.io.to_scipy_sparse(c, format="csr")).astype(dtype)
    out.sort_indices()
    return out

