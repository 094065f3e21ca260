"""Semiring and masked products: spgemm's backends (through the Python
package, SciPy matrices in and out) beside SuiteSparse:GraphBLAS (through
python-graphblas, its matrices converted from SciPy once, before timing),
in one process, on all the host's cores, on the same matrices.

    python python/bench_graphblas.py [--reps 5] [--backends cpu,cuda] [--cupy]
        [--products triangles,reduced,min_plus,masked,complement,bfs,search] [--json out.json] G.mtx [G2.mtx ...]

Each of ``--backends`` (default ``cpu``) runs every product it runs (a GPU
backend skips those it refuses: see ``spgemm.matmul``); the backend name
``cupy`` runs spgemm on CuPy matrices already on the GPU (the CUDA
backend; C left there, the count or nnz read back); with ``--cupy``,
triangles are also counted as a CuPy user writes it today,
``(L @ L.T).multiply(L).sum()``, on L already on the GPU (the time from
the call to the count on the host).

Each file is read as a graph (its structure made symmetric, values the
magnitudes of the file's, 1 where there were none) and these products
run, each a warm-up then the median of --reps, milliseconds:

- triangles: ``C<L> = L plus_pair L.T`` summed (L the strictly lower
  triangle; ours takes ``L.T``, SciPy's or CuPy's CSC view of L, read
  as L's rows, as GraphBLAS takes L with its transposing descriptor; C's
  values summed, ``C.data.sum()``, which on CuPy costs 0.2-0.4 ms less
  than CuPy's sparse ``sum()``), the counts compared;
- reduced: the same count as one value, ``spgemm.matmul_reduce(L, L.T,
  semiring="plus_pair", mask=L)`` (on a GPU the dot products reduced on
  the device, C never formed), beside the same GraphBLAS and CuPy counts;
- min_plus: ``C = A min_plus A``;
- masked: ``C<A> = A plus_times A``;
- complement: ``C<!A> = A any_pair A`` (vertices two hops away and not
  adjacent);
- bfs: one step of a breadth-first search from vertex 0, ``f'<!v> = f
  any_pair A`` for the level with the most vertices (f its vertices, v
  those visited up to it, both 1 x n rows; GraphBLAS's ``vxm`` on
  vectors), the next level's vertices;
- search: a whole breadth-first search from vertex 0 (``spgemm.bfs_levels``:
  on a GPU one call; GraphBLAS: LAGraph's loop of masked ``vxm``, a level's
  vertices assigned their level), every vertex's level + 1 summed;

the number of entries of both results compared.
"""

import argparse
import json
import os
import platform
import statistics
import time

import graphblas as gb
import numpy as np
import scipy.io
import scipy.sparse as sp
import scipy.sparse.csgraph  # noqa: F401 (sp.csgraph)

import spgemm


def median_ms(f, reps):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def graph(path):
    m = sp.load_npz(path) if path.endswith(".npz") else scipy.io.mmread(path)
    m = sp.csr_array(m, dtype=np.float64)
    m.data = np.abs(m.data)
    m.data[m.data == 0] = 1.0
    m = sp.csr_array(m + m.T)
    m.sum_duplicates()
    m.sort_indices()
    return m


def products(a, cupy, on_device):
    """Per product: ours (a function of the backend), GraphBLAS's, and
    CuPy's (or None). With ``on_device``, A, L and L.T are also copied to
    the GPU as CuPy matrices (before timing) for the ``cupy`` backend."""
    lower = sp.csr_array(sp.tril(a, k=-1))
    lower.data[:] = 1.0
    upper = sp.csr_array(lower.T)
    upper.sort_indices()
    ga, gl = gb.io.from_scipy_sparse(a), gb.io.from_scipy_sparse(lower)
    # The BFS level with the most vertices, and the vertices up to it.
    n = a.shape[0]
    depth = sp.csgraph.shortest_path(a, unweighted=True, indices=0)
    levels = np.where(np.isfinite(depth), depth, -1).astype(np.int64)
    widest = int(np.argmax(np.bincount(levels[levels >= 0])))
    front, seen = np.flatnonzero(levels == widest), np.flatnonzero((levels >= 0) & (levels <= widest))

    def row(cols):
        return sp.csr_array((np.ones(len(cols)), cols, [0, len(cols)]), shape=(1, n))

    gf = gb.Vector.from_coo(front, np.ones(len(front)), size=n)
    gs = gb.Vector.from_coo(seen, np.ones(len(seen)), size=n)
    host = {"a": a, "lower": lower, "upper": upper, "front": row(front), "seen": row(seen)}
    device = {}
    if cupy or on_device:
        import cupyx.scipy.sparse as cps

        device = {k: cps.csr_matrix(m) for k, m in host.items()}
    cupy_triangles = None
    if cupy:
        dl, dlt = device["lower"], device["upper"]

        def cupy_triangles():
            return float((dl @ dlt).multiply(dl).sum().get())

    def ours(be):
        """spgemm's products on backend ``be`` (``cupy``: the CUDA backend
        on the CuPy matrices)."""
        m = device if be == "cupy" else host
        be = "cuda" if be == "cupy" else be
        a, lower, front, seen = (m[k] for k in ("a", "lower", "front", "seen"))
        return {
            "triangles": lambda: float(
                spgemm.matmul(lower, lower.T, semiring="plus_pair", mask=lower, backend=be).data.sum()
            ),
            "reduced": lambda: float(
                spgemm.matmul_reduce(lower, lower.T, semiring="plus_pair", mask=lower, backend=be)
            ),
            "min_plus": lambda: spgemm.matmul(a, a, semiring="min_plus", backend=be).nnz,
            "masked": lambda: spgemm.matmul(a, a, mask=a, backend=be).nnz,
            "complement": lambda: spgemm.matmul(
                a, a, semiring="any_pair", mask=a, complement=True, backend=be
            ).nnz,
            "bfs": lambda: spgemm.matmul(
                front, a, semiring="any_pair", mask=seen, complement=True, backend=be
            ).nnz,
            # Σ (level + 1) over every vertex: unreached ones (-1) add 0.
            "search": lambda: int((spgemm.bfs_levels(a, 0, backend=be).astype(np.int64) + 1).sum()),
        }

    def search():
        # Levels from vertex 0 as LAGraph's BFS computes them: the frontier
        # times A over any_pair, masked by the complement of the levels'
        # structure, the new level assigned under the frontier's.
        levels = gb.Vector(gb.dtypes.INT32, n)
        f = gb.Vector(bool, n)
        f[0] = True
        levels[0] = 0
        depth = 0
        while f.nvals:
            depth += 1
            f = f.vxm(ga, gb.semiring.any_pair).new(dtype=bool, mask=~levels.S)
            levels(f.S) << depth
        return int(levels.reduce(gb.monoid.plus).value) + levels.nvals

    theirs = {
        "triangles": lambda: gl.mxm(gl.T, gb.semiring.plus_pair).new(mask=gl.S).reduce_scalar().value,
        "reduced": lambda: gl.mxm(gl.T, gb.semiring.plus_pair).new(mask=gl.S).reduce_scalar().value,
        "min_plus": lambda: ga.mxm(ga, gb.semiring.min_plus).new().nvals,
        "masked": lambda: ga.mxm(ga, gb.semiring.plus_times).new(mask=ga.S).nvals,
        "complement": lambda: ga.mxm(ga, gb.semiring.any_pair).new(mask=~ga.S).nvals,
        "bfs": lambda: gf.vxm(ga, gb.semiring.any_pair).new(mask=~gs.S).nvals,
        "search": search,
    }
    return {
        name: ((lambda be, name=name: ours(be)[name]()), f,
               cupy_triangles if name in ("triangles", "reduced") else None)
        for name, f in theirs.items()
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--backends", default="cpu")
    ap.add_argument("--cupy", action="store_true")
    ap.add_argument("--products", default="triangles,reduced,min_plus,masked,complement,bfs,search")
    ap.add_argument("--json")
    args = ap.parse_args()
    backends = args.backends.split(",")
    rows = []
    print(f"spgemm {spgemm.__version__} ({', '.join(backends)}), python-graphblas {gb.__version__}, "
          f"{os.cpu_count()} cores")
    print(f"{'matrix':22} {'product':11} {'GraphBLAS ms':>13}"
          + "".join(f" {be + ' ms':>10} {'x':>6}" for be in backends)
          + (f" {'CuPy ms':>9}" if args.cupy else ""))
    for path in args.files:
        a = graph(path)
        name = os.path.basename(path).split(".")[0]
        chosen = args.products.split(",")
        for product, (ours, theirs, cupy) in products(a, args.cupy, "cupy" in backends).items():
            if product not in chosen:
                continue
            want = theirs()
            t_gb = median_ms(theirs, args.reps)
            row = {"matrix": name, "rows": a.shape[0], "nnz": int(a.nnz), "product": product,
                   "result": float(want), "graphblas_ms": t_gb}
            line = f"{name:22} {product:11} {t_gb:13.2f}"
            for be in backends:
                try:
                    got = ours(be)
                except (RuntimeError, ValueError):
                    # What the backend refuses (a complemented mask on a GPU).
                    line += f" {'-':>10} {'-':>6}"
                    continue
                if got != want:
                    raise SystemExit(f"{name} {product} on {be}: ours {got}, GraphBLAS {want}")
                t = median_ms(lambda: ours(be), args.reps)
                row[f"{be}_ms"] = t
                row[f"{be}_speedup"] = t_gb / t
                line += f" {t:10.2f} {t_gb / t:6.2f}"
            if args.cupy and cupy is not None:
                # A wrong count is reported, not timed.
                try:
                    got = cupy()
                except Exception as e:  # noqa: BLE001 - CuPy's failure is the result
                    got = f"{type(e).__name__}"
                if got != want:
                    row["cupy_user_wrong"] = str(got)
                    line += f" {'wrong: ' + str(got):>9}"
                else:
                    row["cupy_user_ms"] = median_ms(cupy, args.reps)
                    line += f" {row['cupy_user_ms']:9.2f}"
            rows.append(row)
            print(line)
    if args.json:
        meta = {
            "host": platform.node(), "cores": os.cpu_count(), "spgemm": spgemm.__version__,
            "python_graphblas": gb.__version__, "reps": args.reps, "backends": backends,
        }
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
