"""spgemm.distributed.matmul under mpirun -n 1..4 (mpi4py), against SciPy.

Skipped unless the package was built with the mpi feature and mpi4py and
mpirun are present; each run has a timeout, so a hang fails.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from spgemm import distributed

try:
    import mpi4py  # noqa: F401

    HAVE_MPI4PY = True
except ImportError:
    HAVE_MPI4PY = False

pytestmark = [
    pytest.mark.skipif(not distributed.available(), reason="spgemm built without the mpi feature"),
    pytest.mark.skipif(not HAVE_MPI4PY, reason="mpi4py is not installed"),
    pytest.mark.skipif(shutil.which("mpirun") is None, reason="mpirun is not on PATH"),
]

SCRIPT = textwrap.dedent(
    """
    import os
    import sys
    import numpy as np
    import scipy.io, scipy.sparse as sp
    from mpi4py import MPI
    from spgemm import distributed

    comm = MPI.COMM_WORLD
    p, r = comm.Get_size(), comm.Get_rank()
    a = sp.csr_matrix(scipy.io.mmread(sys.argv[1]))
    b = sp.random(a.shape[1], 37, density=0.05, format="csr", random_state=3)
    def block(m):
        cuts = np.linspace(0, m.shape[0], p + 1).astype(int)
        return m[cuts[r]:cuts[r + 1]]
    runs = [("1d", "messages"), ("1d", "shared"), ("auto", "messages"), ("auto", "shared")]
    runs += [("1d", "auto"), ("auto", "auto")]
    runs += [("2d", "messages")] if int(p ** 0.5) ** 2 == p else []
    for algorithm, fetch in runs:
        c, run = distributed.matmul(comm, block(a), block(b), algorithm=algorithm, fetch=fetch,
                                    backend="cpu")
        whole = comm.gather(c, root=0)
        if r == 0:
            got = sp.vstack(whole).tocsr()
            want = (a @ b).tocsr()
            assert got.shape == want.shape, (got.shape, want.shape)
            assert abs(got - want).max() <= 1e-9 * max(1.0, abs(want).max()), (algorithm, fetch)
    try:
        distributed.matmul(comm, block(a), block(b), fetch="carrier pigeon", backend="cpu")
        raise SystemExit("no error")
    except ValueError as e:
        assert "unknown fetch 'carrier pigeon'" in str(e), str(e)
    # Values of other types: C of the blocks' type, exact for integers.
    for dtype in (np.float32, np.int64, np.int32):
        ai = (a != 0).astype(dtype)
        bi = sp.csr_matrix(b.copy())
        bi.data = np.arange(1, bi.nnz + 1) % 7 + 1
        bi = bi.astype(dtype)
        c, _ = distributed.matmul(comm, block(ai), block(bi), backend="cpu")
        assert c.dtype == dtype, (c.dtype, dtype)
        whole = comm.gather(c, root=0)
        if r == 0:
            got = sp.vstack(whole).tocsr()
            want = (ai.astype(np.float64) @ bi.astype(np.float64)).tocsr()
            assert abs(got.astype(np.float64) - want).max() <= 1e-4 * abs(want).max(), dtype
    # Blocks of another type on one rank: an error on every rank.
    mixed = block(a).astype(np.float32) if r == p - 1 else block(a)
    try:
        distributed.matmul(comm, mixed, block(b).astype(mixed.dtype), backend="cpu")
        if p > 1:
            raise SystemExit("no error for mixed types")
    except ValueError as e:
        assert p > 1 and f"rank {p - 1}'s blocks hold float32" in str(e), str(e)
    # CuPy blocks in, CuPy C out, where CuPy and a GPU are present.
    try:
        import cupy, cupyx.scipy.sparse as csp
        have_gpu = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        have_gpu = False
    if os.environ.get("SPGEMM_REQUIRE_GPU") == "1" and not have_gpu:
        raise SystemExit("SPGEMM_REQUIRE_GPU=1 and no CuPy GPU is present")
    if have_gpu:
        # Left on the GPUs (a rank's on GPU rank % GPUs): through pinned
        # host memory, and through NCCL where every rank has a GPU of its
        # own and the build has it; float32 blocks give a float32 C.
        ngpu = cupy.cuda.runtime.getDeviceCount()
        with cupy.cuda.Device(r % ngpu):
            for x, dtype in [("host", np.float64), ("host", np.float32), ("nccl", np.float64)]:
                if x == "nccl" and ngpu < p:
                    continue
                ca = csp.csr_matrix(block(a).astype(dtype))
                cb = csp.csr_matrix(block(b).astype(dtype))
                try:
                    c, run = distributed.matmul(comm, ca, cb, exchange=x)
                except ValueError as e:
                    if "nccl feature" in str(e):
                        continue
                    raise
                assert run == "1d" and type(c).__module__.startswith("cupyx"), (run, type(c))
                assert c.dtype == dtype and c.data.device.id == r % ngpu, (c.dtype, c.data.device)
                whole = comm.gather(c.get(), root=0)
                if r == 0:
                    got = sp.vstack(whole).tocsr()
                    want = (a @ b).tocsr()
                    tol = 1e-9 if dtype == np.float64 else 1e-4
                    assert abs(got - want).max() <= tol * max(1.0, abs(want).max()), (x, dtype)
                    print("on the GPUs checked", x, np.dtype(dtype).name)
            # 2D on device blocks: the same one-line error on every rank.
            try:
                distributed.matmul(comm, ca, cb, algorithm="2d")
                raise SystemExit("no error for 2d on device blocks")
            except ValueError as e:
                assert "1D rows" in str(e), str(e)
        c, run = distributed.matmul(comm, csp.csr_matrix(block(a)), csp.csr_matrix(block(b)), backend="cpu")
        assert type(c).__module__.startswith("cupyx"), type(c)
        whole = comm.gather(c.get(), root=0)
        if r == 0:
            got = sp.vstack(whole).tocsr()
            want = (a @ b).tocsr()
            assert abs(got - want).max() <= 1e-9 * max(1.0, abs(want).max()), "cupy"
            print("cupy checked")
    # An error on one rank is an error on every rank.
    bad = block(b)
    if r == p - 1:
        bad = sp.csr_matrix((bad.data, bad.indices, bad.indptr), shape=(bad.shape[0], 36))
    try:
        distributed.matmul(comm, block(a), bad, backend="cpu")
        raise SystemExit("no error")
    except ValueError as e:
        assert f"rank {p - 1} of {p}" in str(e) or "disagree" in str(e), str(e)
    # A block whose arrays are bad on one rank only: an error on every rank.
    a_blk = block(a)
    indices = a_blk.indices.astype(np.int64)
    if r == p - 1 and len(indices):
        indices[0] = -1
    class Bad:
        shape, format, dtype = a_blk.shape, "csr", a_blk.dtype
        def tocsr(self):
            return self
    bad_a = Bad()
    bad_a.indptr, bad_a.indices, bad_a.data = a_blk.indptr, indices, a_blk.data
    import spgemm.distributed as dist
    try:
        dist._spgemm.distributed_matmul(
            MPI._handleof(comm), *dist._arrays(bad_a, "a"), *dist._arrays(block(b), "b"),
            "auto", "messages", "cpu", 0)
        raise SystemExit("no error for a negative column")
    except ValueError as e:
        assert f"rank {p - 1} of {p}" in str(e) and "negative" in str(e), str(e)
    print("ok", r)
    """
)


@pytest.mark.parametrize("ranks", [1, 2, 3, 4])
def test_distributed_matmul_matches_scipy(tmp_path, ranks):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    mtx = tmp_path / "a.mtx"
    import scipy.io

    from conftest import matrices_dir

    scipy.io.mmwrite(str(mtx), scipy.io.mmread(str(matrices_dir() / "bcsstk08.mtx.gz")))
    run = subprocess.run(
        ["mpirun", "--oversubscribe", "-n", str(ranks), sys.executable, str(script), str(mtx)],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count("ok") == ranks, run.stdout + run.stderr
