"""spgemm.matmul on CuPy and PyTorch CSR matrices on a CUDA device: results
of the same type on the same device, equal to SciPy's A @ B, and the same
errors as on the host. Skipped, with the reason shown by ``pytest -rs``,
where CuPy / PyTorch or a GPU is missing; ``SPGEMM_REQUIRE_GPU=1`` makes
that a failure instead."""

import os
import re

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm
from conftest import assert_product, load

REQUIRED = os.environ.get("SPGEMM_REQUIRE_GPU") == "1"


def _need(module: str):
    try:
        mod = __import__(module)
    except ImportError as e:
        if REQUIRED:
            raise
        pytest.skip(f"{module} is not installed ({e})")
    ok = mod.cuda.is_available() if module == "torch" else mod.cuda.runtime.getDeviceCount() > 0
    cuda = dict((n, ok) for n, ok, _ in spgemm.backends())["cuda"]
    if not (ok and cuda):
        if REQUIRED:
            pytest.fail("SPGEMM_REQUIRE_GPU=1 but no CUDA GPU is usable")
        pytest.skip("no CUDA GPU")
    return mod


@pytest.fixture
def cupy():
    return _need("cupy")


@pytest.fixture
def torch():
    return _need("torch")


def random(m, n, density, seed, dtype=np.float64):
    return sp.random_array((m, n), density=density, format="csr", random_state=seed, dtype=dtype)


def to_cupy(a):
    import cupyx.scipy.sparse as csp

    return csp.csr_matrix(sp.csr_matrix(a))


def to_torch(torch, a):
    a = sp.csr_array(a)
    return torch.sparse_csr_tensor(
        torch.as_tensor(a.indptr.astype(np.int64)),
        torch.as_tensor(a.indices.astype(np.int64)),
        torch.as_tensor(a.data),
        size=a.shape,
    ).cuda()


def from_torch(c):
    return sp.csr_array(
        (c.values().cpu().numpy(), c.col_indices().cpu().numpy(), c.crow_indices().cpu().numpy()), shape=tuple(c.shape)
    )


def unsorted_torch(torch):
    """A 2x3 torch CSR tensor whose row 0 is unsorted, and a 3x2 partner."""
    unsorted = torch.sparse_csr_tensor(
        torch.tensor([0, 2, 2]), torch.tensor([2, 0]), torch.tensor([1.0, 2.0], dtype=torch.float64), size=(2, 3)
    ).cuda()
    return unsorted, to_torch(torch, random(3, 2, 0.9, 4))


def test_cupy_real_matrices(cupy, real_names):
    import cupyx.scipy.sparse as csp

    for name in real_names:
        a = load(name)
        b = a if a.shape[0] == a.shape[1] else sp.csr_array(a.T)
        c = spgemm.matmul(to_cupy(a), to_cupy(b))
        assert isinstance(c, csp.csr_matrix), name
        assert c.data.device.id == cupy.cuda.Device().id
        assert_product(sp.csr_array(c.get()), a, b, 1e-12)


@pytest.mark.parametrize("dtype,rtol", [(np.float64, 1e-12), (np.float32, 1e-5)])
def test_cupy_random_rectangular_and_empty(cupy, dtype, rtol):
    for seed, (m, k, n) in enumerate([(300, 300, 300), (517, 129, 1001), (0, 5, 3), (4, 0, 6)]):
        a, b = random(m, k, 0.03, seed, dtype), random(k, n, 0.03, seed + 50, dtype)
        c = spgemm.matmul(to_cupy(a), to_cupy(b))
        assert c.dtype == dtype and c.shape == (m, n)
        assert_product(sp.csr_array(c.get()), a, b, rtol)


def test_torch_real_and_random(torch, real_names):
    for name in real_names[:20]:
        a = load(name)
        b = a if a.shape[0] == a.shape[1] else sp.csr_array(a.T)
        c = spgemm.matmul(to_torch(torch, a), to_torch(torch, b))
        assert c.layout == torch.sparse_csr and c.device.type == "cuda", name
        assert_product(from_torch(c), a, b, 1e-12)
    a, b = random(400, 300, 0.02, 1, np.float32), random(300, 200, 0.02, 2, np.float32)
    c = spgemm.matmul(to_torch(torch, a), to_torch(torch, b))
    assert c.dtype == torch.float32
    # The library narrowed C's row offsets: both index arrays are int32.
    assert c.crow_indices().dtype == c.col_indices().dtype == torch.int32
    assert_product(from_torch(c), a, b, 1e-5)


def test_device_errors_name_the_fault(cupy, torch):
    import cupyx.scipy.sparse as csp

    b = to_cupy(random(3, 2, 0.5, 3))
    with pytest.raises(ValueError, match="dimension mismatch"):
        spgemm.matmul(to_cupy(random(2, 8, 0.5, 2)), b)
    bad = csp.csr_matrix(
        (cupy.array([1.0, 2.0]), cupy.array([0, 7], dtype=cupy.int32), cupy.array([0, 1, 2], dtype=cupy.int32)),
        shape=(2, 3),
    )
    with pytest.raises(ValueError, match="column index 7 in row 1 is out of range for 3 columns"):
        spgemm.matmul(bad, b)
    unsorted, tb = unsorted_torch(torch)
    with pytest.raises(ValueError, match="row 0 is not sorted without duplicates: column 0 follows column 2"):
        spgemm.matmul(unsorted, tb)
    c = spgemm.matmul(unsorted, tb, check=False)
    assert np.allclose(c.to_dense().cpu().numpy(), unsorted.to_dense().cpu().numpy() @ tb.to_dense().cpu().numpy())
    with pytest.raises(TypeError, match="same kind"):
        spgemm.matmul(to_cupy(random(3, 3, 0.5, 5)), tb)
    with pytest.raises(ValueError, match="backend must be 'auto' or 'cuda'"):
        spgemm.matmul(tb.t().to_sparse_csr(), tb, backend="cpu")
    def bf16(t):
        return torch.sparse_csr_tensor(t.crow_indices(), t.col_indices(), t.values().to(torch.bfloat16), size=t.shape)

    with pytest.raises(ValueError, match="unsupported dtype bfloat16"):
        spgemm.matmul(bf16(unsorted), bf16(tb))
    c = spgemm.matmul(bf16(unsorted), bf16(tb), precision="float64", check=False)
    assert c.dtype == torch.float64


def test_cupy_common_case_is_read_natively_and_the_rest_declined(cupy):
    # The native module takes CSR matrices with values of one type (float32
    # or float64), contiguous int32 or int64 indices, one device and
    # matching shapes, and declines everything else (None) for the general
    # path, which converts it or names the fault: each case must give the
    # same product, or the same error, through spgemm.matmul.
    import cupyx.scipy.sparse as csp
    from spgemm import _spgemm

    a, b = random(300, 200, 0.05, 71), random(200, 100, 0.05, 72)
    ga, gb = to_cupy(a), to_cupy(b)
    c, device = _spgemm.matmul_cupy(ga, gb, True)
    assert device == cupy.cuda.Device().id and c.shape == (300, 100) and c.double
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    c, _ = _spgemm.matmul_cupy(to_cupy(a32), to_cupy(b32), True)
    assert not c.double
    wide = csp.csr_matrix((ga.data, ga.indices.astype(cupy.int64), ga.indptr.astype(cupy.int64)), shape=ga.shape)
    assert _spgemm.matmul_cupy(wide, gb, True) is not None
    strided = to_cupy(a)
    strided.indices = cupy.repeat(ga.indices, 2)[::2]
    assert not strided.indices.flags.c_contiguous
    declined = {
        # name: (A, B, SciPy's A and B of the product)
        "float32 values times float64 values": (to_cupy(a32), gb, a32.astype(np.float64), b),
        "a COO operand": (ga.tocoo(), gb, a, b),
        "strided column indices": (strided, gb, a, b),
        "a CSC B": (ga, gb.tocsc(), a, b),
    }
    for name, (x, y, want_a, want_b) in declined.items():
        assert _spgemm.matmul_cupy(x, y, True) is None, name
        c = spgemm.matmul(x, y)
        assert isinstance(c, csp.csr_matrix), name
        assert_product(sp.csr_array(c.get()), want_a, want_b, 1e-12)
    assert _spgemm.matmul_cupy(ga, ga, True) is None
    with pytest.raises(ValueError, match="A's columns must equal B's rows"):
        spgemm.matmul(ga, ga)


def test_torch_common_case_is_read_natively_and_the_rest_declined(torch):
    # As for CuPy: sparse CSR tensors on a CUDA device with values of one
    # type and int32 or int64 indices are read natively; the rest is
    # declined, and spgemm.matmul converts it or names the fault.
    from spgemm import _spgemm

    a, b = random(300, 200, 0.05, 73), random(200, 100, 0.05, 74)
    ta, tb = to_torch(torch, a), to_torch(torch, b)
    c, device = _spgemm.matmul_torch(ta, tb, True)
    assert device == torch.cuda.current_device() and c.shape == (300, 100) and c.double
    a32, b32 = a.astype(np.float32), b.astype(np.float32)

    def narrow(x):
        x = sp.csr_array(x)
        return torch.sparse_csr_tensor(
            torch.as_tensor(x.indptr.astype(np.int32)), torch.as_tensor(x.indices.astype(np.int32)),
            torch.as_tensor(x.data), size=x.shape,
        ).cuda()

    c, _ = _spgemm.matmul_torch(narrow(a32), narrow(b32), True)
    assert not c.double
    assert_product(from_torch(spgemm.matmul(narrow(a32), narrow(b32))), a32, b32, 1e-5)
    mixed = (to_torch(torch, a32), tb)
    assert _spgemm.matmul_torch(*mixed, True) is None
    assert_product(from_torch(spgemm.matmul(*mixed)), a32.astype(np.float64), b, 1e-12)
    assert _spgemm.matmul_torch(ta.cpu(), tb.cpu(), True) is None
    with pytest.raises(ValueError, match="must be on a CUDA device"):
        spgemm.matmul(ta.cpu(), tb.cpu())
    assert _spgemm.matmul_torch(ta, ta, True) is None
    with pytest.raises(ValueError, match="A's columns must equal B's rows"):
        spgemm.matmul(ta, ta)


def test_result_outlives_the_inputs(cupy):
    a = random(500, 500, 0.02, 9)
    ga = to_cupy(a)
    c = spgemm.matmul(ga, ga)
    del ga
    cupy.get_default_memory_pool().free_all_blocks()
    assert_product(sp.csr_array(c.get()), a, a, 1e-12)
    # C is canonical, whichever CuPy constructor built it.
    assert c.has_canonical_format and c.indptr.dtype == c.indices.dtype == cupy.int32


def test_products_in_the_callers_stream_order(cupy, torch):
    """A product of several milliseconds on a non-blocking stream, its
    operand's values written by a kernel still queued on that stream: C is
    read on the stream right after the call returns (the product left
    running in the stream's order), by CuPy and by PyTorch; a missing wait
    would let the reads race the numeric kernels."""
    a = random(40000, 40000, 40 / 40000, 61)
    for lib in ("cupy", "torch"):
        if lib == "cupy":
            stream = cupy.cuda.Stream(non_blocking=True)
            with stream:
                ga = to_cupy(a)
                ga.data *= -2.0  # queued on the stream: the product must wait for it
                c = spgemm.matmul(ga, ga)
                parts = (c.data, c.indices, c.indptr)
                got = sp.csr_array(tuple(x.get(stream=stream) for x in parts), shape=c.shape)
        else:
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                ta = to_torch(torch, a)
                ta.values().mul_(-2.0)
                c = spgemm.matmul(ta, ta)
                got = from_torch(c)
        assert_product(got, -2.0 * a, -2.0 * a, 1e-12)
        stream.synchronize()


def test_torch_without_cupy(torch, monkeypatch):
    # The library checks device operands itself: PyTorch alone gets the
    # same products and the same errors.
    monkeypatch.setitem(__import__("sys").modules, "cupy", None)
    a = random(300, 200, 0.05, 41)
    b = random(200, 100, 0.05, 42)
    assert_product(from_torch(spgemm.matmul(to_torch(torch, a), to_torch(torch, b))), a, b, 1e-12)
    unsorted, tb = unsorted_torch(torch)
    with pytest.raises(ValueError, match="row 0 is not sorted without duplicates: column 0 follows column 2"):
        spgemm.matmul(unsorted, tb)
    bad = torch.sparse_csr_tensor(
        torch.tensor([0, 1, 2]), torch.tensor([0, 7]), torch.tensor([1.0, 2.0], dtype=torch.float64), size=(2, 3),
        check_invariants=False,
    ).cuda()
    with pytest.raises(ValueError, match="column index 7 in row 1 is out of range for 3 columns"):
        spgemm.matmul(bad, tb)


FAULTS = [
    ([-1, 1, 2], [0, 1], "row offset at position 0 is -1, outside 0..=2"),
    ([0, -1, 2], [0, 1], "row offset at position 1 is -1, outside 0..=2"),
    ([1, 1, 2], [0, 1], "row offsets must start at 0, found 1"),
    ([0, 2, 1], [0, 1], "row offsets decrease at row 1: 2 > 1"),
    ([0, 1, 2], [0, 5], "column index 5 in row 1 is out of range for 3 columns"),
    ([0, 1, 2], [0, -1], "column index at position 1 is -1, outside 0..=2"),
    ([0, 2, 2], [1, 1], "row 0 is not sorted without duplicates: column 1 follows column 1"),
    ([0, 1, 1], [0, 1], "last row offset is 1 but there are 2 column indices"),
]


@pytest.mark.parametrize("index_type", ["int32", "int64"])
def test_every_fault_of_the_device_check_is_named(cupy, torch, index_type):
    # Every fault the library's device check finds, with indices of either
    # width (PyTorch's own indices share one type; the Rust engine suite
    # covers mixed widths), named as the host checks name it; valid arrays
    # of both widths multiply correctly.
    indptr_type = indices_type = index_type
    b = to_torch(torch, random(3, 2, 0.9, 4))
    for indptr, indices, message in FAULTS:
        bad = torch.sparse_csr_tensor(
            torch.tensor(indptr, dtype=getattr(torch, indptr_type)),
            torch.tensor(indices, dtype=getattr(torch, indices_type)),
            torch.tensor([1.0, 2.0], dtype=torch.float64),
            size=(2, 3),
            check_invariants=False,
        ).cuda()
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
            spgemm.matmul(bad, b)
    a = random(50, 3, 0.5, 6)
    good = torch.sparse_csr_tensor(
        torch.as_tensor(a.indptr.astype(indptr_type)),
        torch.as_tensor(a.indices.astype(indices_type)),
        torch.as_tensor(a.data),
        size=a.shape,
    ).cuda()
    assert_product(from_torch(spgemm.matmul(good, b)), a, from_torch(b), 1e-12)
    bad_cupy = to_cupy(a)
    bad_cupy.indices[:] = 0  # every row a run of duplicates
    with pytest.raises(ValueError, match="is not sorted without duplicates"):
        spgemm.matmul(bad_cupy, to_cupy(from_torch(b)))


def test_plans_on_device_matrices(cupy, torch):
    a, b = random(400, 300, 0.03, 51), random(300, 200, 0.03, 52)
    ga, gb = to_cupy(a), to_cupy(b)
    plan = spgemm.symbolic(ga, gb)
    assert plan.backend == "cuda" and plan.nnz == spgemm.matmul(ga, gb).nnz
    g2 = ga.copy()
    g2.data *= -2.0  # the same structure in other arrays, new values
    assert_product(sp.csr_array(plan.numeric(g2, gb).get()), -2.0 * a, b, 1e-12)
    with pytest.raises(ValueError, match="structure mismatch: A is not the matrix the plan was built for: it "):
        plan.numeric(to_cupy(random(400, 300, 0.03, 53)), gb)
    moved = ga.copy()
    row = next(i for i in range(400) if a.indptr[i + 1] > a.indptr[i] and a.indices[a.indptr[i + 1] - 1] != 299)
    moved.indices[int(a.indptr[row + 1]) - 1] = 299  # the last entry of one row in another column
    cols = [int(c) for c in a.indices[a.indptr[row] : a.indptr[row + 1]]]
    show = lambda c: "[" + ", ".join(map(str, c[:6])) + (f", … {len(c) - 6} more]" if len(c) > 6 else "]")
    want = f"it differs first in row {row}: columns {show(cols[:-1] + [299])} where the plan's has {show(cols)}"
    with pytest.raises(ValueError, match=re.escape(want)):
        plan.numeric(moved, gb)
    with pytest.raises(ValueError, match=re.escape("B is not the matrix the plan was built for: it is 300x201, not 300x200")):
        plan.numeric(ga, to_cupy(random(300, 201, 0.03, 52)))
    with pytest.raises(TypeError, match="built for cupy matrices"):
        plan.numeric(a, b)
    ta = to_torch(torch, a)
    square = spgemm.symbolic(to_torch(torch, random(300, 300, 0.03, 54)))
    with pytest.raises(ValueError, match="built for A @ A"):
        square.numeric(ta, to_torch(torch, b))
    tplan = spgemm.symbolic(ta, to_torch(torch, b))
    c = tplan.numeric(ta, to_torch(torch, b))
    assert c.layout == torch.sparse_csr
    assert_product(from_torch(c), a, b, 1e-12)
