"""Galerkin products C = P.T @ A @ P (algebraic multigrid's coarse
operator): ``spgemm.ptap`` beside our own two separate products (P.T
formed by SciPy, then ``spgemm.matmul`` twice), the plan's setup
(``spgemm.galerkin``) and numeric-only re-setup (returning a new C, and
refilling the C it returned: ``out=``), and what a CuPy user
writes, ``P.T @ (A @ P)``, in one process.

    python python/bench_galerkin.py [--reps 5] [--backend auto] [--cupy] [--json out.json] A.npz P.npz

Ours take SciPy matrices and return SciPy matrices (uploads, downloads
and C's assembly included); with --cupy, CuPy's and ours on the same CuPy
matrices (``spgemm.ptap`` on device matrices: P.T formed there) start
from A and P already on the GPU and end when C is complete there, and
the plan's re-setup there (``spgemm.galerkin`` on CuPy matrices, then
``numeric`` with new values of A sharing its structure arrays on the GPU).
Each a warm-up then the median of
--reps, milliseconds; C compared between all of them (relative 1e-10).
"""

import argparse
import json
import os
import platform
import statistics
import time

import numpy as np
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


def close(x, y):
    x, y = sp.csr_array(x), sp.csr_array(y)
    d = abs(x - y)
    scale = max(abs(y).max(), 1e-300)
    return x.shape == y.shape and (d.max() if d.nnz else 0.0) <= 1e-10 * scale


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("p")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--cupy", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    a, p = sp.csr_array(sp.load_npz(args.a)), sp.csr_array(sp.load_npz(args.p))
    be = args.backend
    c = spgemm.ptap(a, p, backend=be)
    plan, c_plan = spgemm.galerkin(a, p, backend=be)
    a2 = a.copy()
    a2.data = a2.data * 2.0

    def separate():
        return spgemm.matmul(sp.csr_array(p.T), spgemm.matmul(a, p, backend=be), backend=be)

    assert close(separate(), c) and close(c_plan, c) and close(plan.numeric(a2), 2.0 * c)
    row = {
        "a": os.path.basename(args.a), "p": os.path.basename(args.p), "rows": a.shape[0],
        "nnz_a": int(a.nnz), "coarse": p.shape[1], "nnz_p": int(p.nnz), "nnz_c": int(c.nnz),
        "backend": plan.backend,
        "ptap_ms": median_ms(lambda: spgemm.ptap(a, p, backend=be), args.reps),
        "setup_ms": median_ms(lambda: spgemm.galerkin(a, p, backend=be), args.reps),
        "separate_ms": median_ms(separate, args.reps),
        "resetup_ms": median_ms(lambda: plan.numeric(a2), args.reps),
        "resetup_out_ms": median_ms(lambda: plan.numeric(a2, out=c_plan), args.reps),
    }
    assert close(c_plan, 2.0 * c)
    if args.cupy:
        import cupy
        import cupyx.scipy.sparse as cps

        da, dp = cps.csr_matrix(a), cps.csr_matrix(p)

        def cupy_ptap():
            c = dp.T @ (da @ dp)
            cupy.cuda.get_current_stream().synchronize()
            return c

        assert close(cupy_ptap().get(), c)
        row["cupy_ms"] = median_ms(cupy_ptap, args.reps)
        # Ours on the same CuPy matrices: P.T formed on the device, C left there.
        assert close(spgemm.ptap(da, dp).get(), c)
        row["device_ptap_ms"] = median_ms(lambda: spgemm.ptap(da, dp), args.reps)
        # The plan on the device, and a re-setup with A's new values there
        # (a matrix sharing A's structure arrays, as a re-setup keeps them).
        dplan, dc = spgemm.galerkin(da, dp)
        assert close(dc.get(), c)
        row["device_setup_ms"] = median_ms(lambda: spgemm.galerkin(da, dp), args.reps)
        da2 = cps.csr_matrix((da.data * 2.0, da.indices, da.indptr), shape=da.shape)
        assert close(dplan.numeric(da2).get(), 2.0 * c)
        row["device_resetup_ms"] = median_ms(lambda: dplan.numeric(da2), args.reps)
    print(f"A {a.shape[0]} rows, {a.nnz} entries; P {p.shape[1]} columns, {p.nnz} entries; "
          f"C {c.nnz} entries on {row['backend']}, {os.cpu_count()} cores")
    keys = ("ptap_ms", "setup_ms", "separate_ms", "resetup_ms", "resetup_out_ms", "cupy_ms",
            "device_ptap_ms", "device_setup_ms", "device_resetup_ms")
    for k in keys:
        if k in row:
            print(f"  {k:12} {row[k]:10.2f}  ptap x {row[k] / row['ptap_ms']:.2f}")
    if args.json:
        meta = {"host": platform.node(), "cores": os.cpu_count(), "spgemm": spgemm.__version__,
                "reps": args.reps}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": [row]}, f, indent=1)


if __name__ == "__main__":
    main()
