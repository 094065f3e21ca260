"""Pruned products on the GPU, as Markov clustering's expansion step runs
them: C = A @ A of a column-stochastic Erdős–Rényi matrix with C's rows
(or columns) pruned on the device — a threshold, the 32 largest per row or
column, or both — beside the unpruned product, on CuPy matrices (A on the
GPU, C left there, complete when timed), then from SciPy matrices
(transfers and C's assembly included) unpruned and the 32 largest per row
and per column on the CUDA backend, the 32 largest per row on the CPU
backend.

    python python/bench_prune.py [--reps 5] [--products 17:16,20:8] [--device-only] out.json

--products: Erdős–Rényi matrices as log2(rows):entries a row (the
default: 2^17 x 16 and 2^20 x 8, rows of a binomial length, whose
products have a symbolic phase); a third field `u` (`20:8:u`) gives
every row that many entries (columns drawn at random, repeats merged),
so that a product of short rows runs in one pass. --device-only: the
CuPy rows alone. Medians of
--reps after a warm-up (3 for the SciPy rows), milliseconds, and C's
entries after each pruning.
"""

import argparse
import json
import time

import cupy
import cupyx.scipy.sparse as csp
import numpy as np
import scipy.sparse as sp

import spgemm


def timed(f, reps):
    f()
    cupy.cuda.Device().synchronize()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        cupy.cuda.Device().synchronize()
        ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--products", default="17:16,20:8")
    p.add_argument("--device-only", action="store_true")
    p.add_argument("json")
    args = p.parse_args()
    rows = []
    for spec in args.products.split(","):
        fields = spec.split(":")
        log_n, per_row, uniform = int(fields[0]), int(fields[1]), fields[2:] == ["u"]
        n = 1 << log_n
        rng = np.random.default_rng(1)
        if uniform:
            cols = rng.integers(0, n, size=n * per_row)
            row_ids = np.repeat(np.arange(n), per_row)
            a = sp.csr_array((rng.random(n * per_row), (row_ids, cols)), shape=(n, n))
            a.sum_duplicates()
        else:
            a = sp.random_array((n, n), density=per_row / n, format="csr", rng=rng)
        sums = np.asarray(a.sum(axis=0)).ravel()
        a = sp.csr_array(a @ sp.diags_array(1.0 / np.where(sums > 0, sums, 1.0)))
        a.sort_indices()
        ac = csp.csr_matrix(sp.csr_matrix(a))
        name = f"ER {n}x{per_row}" + (" uniform" if uniform else "")
        r = {"product": name, "nnz_c": int(spgemm.matmul(ac, ac).nnz)}
        r["device_unpruned_ms"] = timed(lambda: spgemm.matmul(ac, ac), args.reps)
        for label, kw in (
            ("keep32_rows", dict(keep=32)),
            ("below1e-4", dict(prune=1e-4)),
            ("keep32_columns", dict(keep=32, prune_columns=True)),
            ("below1e-4_keep32", dict(prune=1e-4, keep=32)),
        ):
            r[f"device_{label}_ms"] = timed(lambda: spgemm.matmul(ac, ac, **kw), args.reps)
            r[f"nnz_{label}"] = int(spgemm.matmul(ac, ac, **kw).nnz)
        if not args.device_only:
            r["host_cuda_unpruned_ms"] = timed(lambda: spgemm.matmul(a, a, backend="cuda"), 3)
            r["host_cuda_keep32_rows_ms"] = timed(lambda: spgemm.matmul(a, a, backend="cuda", keep=32), 3)
            r["host_cuda_keep32_columns_ms"] = timed(
                lambda: spgemm.matmul(a, a, backend="cuda", keep=32, prune_columns=True), 3
            )
            r["host_cpu_keep32_rows_ms"] = timed(lambda: spgemm.matmul(a, a, backend="cpu", keep=32), 3)
        rows.append(r)
        print(json.dumps(r), flush=True)
    with open(args.json, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
