"""spgemm.bfs_levels against SciPy's own breadth-first distances
(scipy.sparse.csgraph), on SciPy matrices through the CPU backend and, where
a GPU is present, the CUDA backend and CuPy and PyTorch matrices on the
device; the errors of bad sources and shapes."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import spgemm
from conftest import load
from test_device import cupy, to_cupy, to_torch, torch  # noqa: F401 (fixtures)

GRAPHS = ["email-Eu-core", "ca-GrQc", "luxembourg_osm", "ego-Facebook", "bcsstk16"]


def ones(a):
    """A's structure with every stored entry 1: an edge for both sides."""
    a = sp.csr_array(a, copy=True)
    a.data = np.ones_like(a.data, dtype=np.float64)
    return a


def oracle(a, source):
    d = csgraph.shortest_path(ones(a), unweighted=True, indices=source, directed=True)
    return np.where(np.isinf(d), -1, d).astype(np.int32)


def cases():
    """Real graphs from their first, middle and last vertex; a directed
    random graph of 3,000 vertices (some unreached)."""
    for name in GRAPHS:
        a = ones(load(name))
        n = a.shape[0]
        for source in (0, n // 2, n - 1):
            yield f"{name} from {source}", a, source
    g = ones(sp.random_array((3000, 3000), density=0.0008, format="csr", random_state=7))
    yield "random from 0", g, 0


def test_levels_on_the_cpu():
    deepest = 0
    for what, a, source in cases():
        got = spgemm.bfs_levels(a, source, backend="cpu")
        assert got.dtype == np.int32 and got.shape == (a.shape[0],)
        want = oracle(a, source)
        np.testing.assert_array_equal(got, want, err_msg=what)
        deepest = max(deepest, int(want.max()))
    assert deepest > 100


def test_levels_on_the_gpu_from_scipy(cupy):
    for what, a, source in cases():
        np.testing.assert_array_equal(spgemm.bfs_levels(a, source, backend="cuda"), oracle(a, source), err_msg=what)


def test_levels_of_cupy_and_torch_matrices_stay_on_the_device(cupy, torch):
    for what, a, source in cases():
        want = oracle(a, source)
        got = spgemm.bfs_levels(to_cupy(a), source)
        assert isinstance(got, cupy.ndarray) and got.dtype == np.int32
        np.testing.assert_array_equal(got.get(), want, err_msg=what)
        got = spgemm.bfs_levels(to_torch(torch, a).cuda(), source)
        assert got.is_cuda and got.dtype == torch.int32
        np.testing.assert_array_equal(got.cpu().numpy(), want, err_msg=what)


def unsorted_graph():
    """Rows unsorted and repeating a column, self loops, 33 vertices (no
    whole bitmap word): 0 -> {5, 2}, 3 -> 0, a chain 5 -> 6 -> ... -> 32."""
    rows = [[] for _ in range(33)]
    rows[0] = [5, 2, 5]
    rows[3] = [0]
    for v in range(5, 32):
        rows[v] = [v + 1, v]
    indptr = np.cumsum([0] + [len(r) for r in rows])
    indices = np.array([c for r in rows for c in r], dtype=np.int32)
    return sp.csr_array((np.ones(len(indices)), indices, indptr), shape=(33, 33))


def test_unsorted_rows_and_unreached_vertices():
    g = unsorted_graph()
    want = oracle(g, 0)
    assert want[32] == 28 and want[1] == -1
    for source in (0, 3, 1, 32):
        np.testing.assert_array_equal(spgemm.bfs_levels(g, source, backend="cpu"), oracle(g, source))


def test_unsorted_rows_on_the_gpu(cupy):
    g = unsorted_graph()
    for source in (0, 3, 1, 32):
        want = oracle(g, source)
        np.testing.assert_array_equal(spgemm.bfs_levels(g, source, backend="cuda"), want)
        # The rows read as given, not checked as sorted.
        np.testing.assert_array_equal(spgemm.bfs_levels(to_cupy(g), source, check=False).get(), want)


@pytest.mark.parametrize("source", [33, -1, 2.0, True])
def test_a_source_outside_the_graph_is_a_value_error(source):
    with pytest.raises(ValueError, match=r"^graph: source vertex .* is not one of the graph's 33 vertices$"):
        spgemm.bfs_levels(unsorted_graph(), source)


def test_a_rectangular_matrix_is_a_value_error():
    with pytest.raises(ValueError, match=r"^graph: the adjacency matrix is 3x4, not square$"):
        spgemm.bfs_levels(sp.csr_array((3, 4)), 0)


def test_a_graph_without_edges():
    got = spgemm.bfs_levels(sp.csr_array((40, 40)), 39, backend="cpu")
    np.testing.assert_array_equal(got, np.r_[np.full(39, -1), 0])
