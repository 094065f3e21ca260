"""Semiring and masked products: spgemm's CPU backend (through the Python
package, SciPy matrices in and out) beside SuiteSparse:GraphBLAS (through
python-graphblas, its matrices converted from SciPy once, before timing),
in one process, on all the host's cores, on the same matrices.

    python python/bench_graphblas.py [--reps 5] [--json out.json] G.mtx [G2.mtx ...]

Each file is read as a graph (its structure made symmetric, values the
magnitudes of the file's, 1 where there were none) and these products
run, each a warm-up then the median of --reps, milliseconds:

- triangles: ``C<L> = L plus_pair L.T`` summed (L the strictly lower
  triangle; ours takes L.T as a CSR matrix formed before timing,
  GraphBLAS its transposed descriptor), the counts compared;
- min_plus: ``C = A min_plus A``;
- masked: ``C<A> = A plus_times A``;
- complement: ``C<!A> = A any_pair A`` (vertices two hops away and not
  adjacent);

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


def products(a):
    lower = sp.csr_array(sp.tril(a, k=-1))
    lower.data[:] = 1.0
    upper = sp.csr_array(lower.T)
    upper.sort_indices()
    ga, gl = gb.io.from_scipy_sparse(a), gb.io.from_scipy_sparse(lower)
    return {
        "triangles": (
            lambda: spgemm.matmul(lower, upper, semiring="plus_pair", mask=lower).sum(),
            lambda: gl.mxm(gl.T, gb.semiring.plus_pair).new(mask=gl.S).reduce_scalar().value,
        ),
        "min_plus": (
            lambda: spgemm.matmul(a, a, semiring="min_plus").nnz,
            lambda: ga.mxm(ga, gb.semiring.min_plus).new().nvals,
        ),
        "masked": (
            lambda: spgemm.matmul(a, a, mask=a).nnz,
            lambda: ga.mxm(ga, gb.semiring.plus_times).new(mask=ga.S).nvals,
        ),
        "complement": (
            lambda: spgemm.matmul(a, a, semiring="any_pair", mask=a, complement=True).nnz,
            lambda: ga.mxm(ga, gb.semiring.any_pair).new(mask=~ga.S).nvals,
        ),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    print(f"spgemm {spgemm.__version__} (cpu), python-graphblas {gb.__version__}, {os.cpu_count()} cores")
    print(f"{'matrix':28} {'product':11} {'ours ms':>9} {'GraphBLAS ms':>13} {'x':>6}")
    for path in args.files:
        a = graph(path)
        name = os.path.basename(path).split(".")[0]
        for product, (ours, theirs) in products(a).items():
            got, want = ours(), theirs()
            if got != want:
                raise SystemExit(f"{name} {product}: ours {got}, GraphBLAS {want}")
            t_ours = median_ms(ours, args.reps)
            t_gb = median_ms(theirs, args.reps)
            rows.append({
                "matrix": name, "rows": a.shape[0], "nnz": int(a.nnz), "product": product,
                "result": float(got), "ours_ms": t_ours, "graphblas_ms": t_gb,
                "speedup": t_gb / t_ours,
            })
            print(f"{name:28} {product:11} {t_ours:9.2f} {t_gb:13.2f} {t_gb / t_ours:6.2f}")
    if args.json:
        meta = {
            "host": platform.node(), "cores": os.cpu_count(), "spgemm": spgemm.__version__,
            "python_graphblas": gb.__version__, "reps": args.reps,
        }
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
