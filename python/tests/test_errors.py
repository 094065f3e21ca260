"""Every documented error of the Python package, and no crash: wrong
types, shapes, dtypes, malformed CSR, plans given another structure,
backends that cannot run."""

import numpy as np
import pytest
import scipy.sparse as sp

import spgemm


def csr(data, indices, indptr, shape, index=np.int32):
    return sp.csr_array(
        (np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=index), np.asarray(indptr, dtype=index)),
        shape=shape,
    )


A = csr([1.0, 2.0, 3.0], [0, 2, 1], [0, 2, 3], (2, 3))


def test_shape_mismatch():
    with pytest.raises(ValueError, match="dimension mismatch: A is 2x3 but B is 2x3"):
        spgemm.matmul(A, A, backend="cpu")


def test_unsupported_dtypes():
    with pytest.raises(ValueError, match="unsupported dtype int8"):
        spgemm.matmul(sp.csr_array(np.eye(3, dtype=np.int8)), backend="cpu")
    with pytest.raises(ValueError, match="complex"):
        spgemm.matmul(sp.csr_array(np.eye(3, dtype=np.complex128)), backend="cpu", precision="float64")
    with pytest.raises(ValueError, match="precision must be float32, float64, int32 or int64"):
        spgemm.matmul(A, A.T, backend="cpu", precision="float16")


def test_not_sparse_or_mixed_kinds():
    with pytest.raises(TypeError, match="expected a scipy.sparse matrix"):
        spgemm.matmul(np.eye(3), backend="cpu")
    with pytest.raises(TypeError):
        spgemm.matmul(A, [[1.0]], backend="cpu")


@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_out_of_range_and_negative_indices_name_their_row(index):
    bad = csr([1.0, 2.0], [0, 7], [0, 1, 2], (2, 3), index)
    with pytest.raises(ValueError, match="column index 7 in row 1 is out of range for 3 columns"):
        spgemm.matmul(bad, csr([1.0], [0], [0, 1, 1, 1], (3, 1)), backend="cpu")
    neg = csr([1.0, 2.0], [0, -2], [0, 1, 2], (2, 3), index)
    with pytest.raises(ValueError, match="column index at position 1 is -2"):
        spgemm.matmul(neg, csr([1.0], [0], [0, 1, 1, 1], (3, 1)), backend="cpu", check=False)


def test_malformed_row_offsets():
    b = csr([1.0], [0], [0, 1, 1, 1], (3, 1))
    dec = sp.csr_array((2, 3))
    dec.indptr = np.array([0, 2, 1], dtype=np.int32)
    dec.indices = np.array([0, 1], dtype=np.int32)
    dec.data = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="row offsets decrease at row 1"):
        spgemm.matmul(dec, b, backend="cpu")
    neg = sp.csr_array((2, 3))
    neg.indptr = np.array([0, -1, 2], dtype=np.int64)
    neg.indices = np.array([0, 1], dtype=np.int64)
    neg.data = np.array([1.0, 2.0])
    with pytest.raises(ValueError, match="row offset at position 1 is -1"):
        spgemm.matmul(neg, b, backend="cpu")


def test_unsorted_rows_are_refused_only_with_check_canonical():
    unsorted = csr([1.0, 2.0], [2, 0], [0, 2, 2], (2, 3))
    b = csr([1.0, 1.0, 1.0], [0, 0, 0], [0, 1, 2, 3], (3, 1))
    with pytest.raises(ValueError, match="row 0 is not sorted without duplicates: column 0 follows column 2"):
        spgemm.matmul(unsorted, b, backend="cpu", check="canonical")
    for check in (True, False):
        assert spgemm.matmul(unsorted, b, backend="cpu", check=check).toarray().tolist() == [[3.0], [0.0]]


def test_plans_refuse_another_structure():
    b = csr([1.0, 1.0, 1.0], [0, 0, 0], [0, 1, 2, 3], (3, 1))
    plan = spgemm.symbolic(A, b, backend="cpu")
    other = csr([1.0, 2.0, 3.0], [1, 2, 1], [0, 2, 3], (2, 3))
    with pytest.raises(ValueError, match="structure mismatch: A is not the matrix the plan was built for: it "):
        plan.numeric(other, b)
    with pytest.raises(TypeError, match="expected a scipy.sparse matrix"):
        plan.numeric(np.eye(2), b)


def test_backends_that_cannot_run():
    available = {n: ok for n, ok, _ in spgemm.backends()}
    if not available["cuda"]:
        with pytest.raises(RuntimeError, match="backend 'cuda' is not available"):
            spgemm.matmul(A, A.T.tocsr(), backend="cuda")
    with pytest.raises(RuntimeError, match="backend 'hip' is not available"):
        spgemm.matmul(A, A.T.tocsr(), backend="hip")
    with pytest.raises(ValueError, match="unknown backend 'gpu'"):
        spgemm.matmul(A, A.T.tocsr(), backend="gpu")
