"""Benchmark of spgemm's Python binding on device arrays, in one run:
spgemm.matmul against CuPy's A @ B (cuSPARSE) and torch.sparse on the
same CSR arrays of one GPU, and against SciPy's A @ B on the host; with
--cli, also the same product through ``spgemm bench`` (device-resident, no
binding) to show what the binding adds.

    python python/bench.py [--reps 21] [--json out.json] [--cli target/release/spgemm] A.mtx [B.mtx ...]

Each file is squared (A @ A when square, one matrix passed twice; A @ A.T
otherwise). Times are
medians of --reps runs after a warm-up, wall clock around a device
synchronization, milliseconds; GFLOPS = 2 * products / time. "library" is
the wall clock of the Rust call inside the binding on the same operands
(in loops of its own before and after spgemm.matmul's, each call's C freed
before the next: alternated with spgemm.matmul while its C lived, it ran
0.2-0.4 ms slower in some runs on an H100, either build), "binding"
spgemm.matmul's time over it (checks, index conversions and wrapping C
included); "cli" the device time of the same product in ``spgemm bench``
and "cli x cuSPARSE" its lead there.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy
import scipy.io
import scipy.sparse as sp

# The package's sources beside this script are not the installed package
# (which holds the compiled module): import the installed one.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
import spgemm  # noqa: E402
from spgemm import _device, _spgemm  # noqa: E402


def timed(f, reps, sync):
    f()
    sync()
    out = []
    for _ in range(reps):
        sync()
        t = time.perf_counter()
        r = f()
        sync()
        out.append((time.perf_counter() - t) * 1e3)
    return statistics.median(out), r


def cli(command, path, reps):
    """The product through ``spgemm bench --compare cusparse`` (device-resident
    operands, no binding): its median milliseconds and its lead over cuSPARSE."""
    with tempfile.NamedTemporaryFile(suffix=".json") as j:
        subprocess.run(
            [command, "bench", "--backend", "cuda", "--compare", "cusparse", "--reps", str(reps), "--json", j.name, path],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        row = json.load(open(j.name))[0]
    compared = row.get("compared") or {}
    return row["median_ms"], compared.get("speedup")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--reps", type=int, default=21)
    p.add_argument("--json")
    p.add_argument("--cli", help="the spgemm command, to time the same products without the binding")
    args = p.parse_args()

    import cupy
    import cupyx.scipy.sparse as csp
    import torch

    dev = cupy.cuda.Device()
    sync = dev.synchronize
    print(f"device: {cupy.cuda.runtime.getDeviceProperties(dev.id)['name'].decode()}; "
          f"spgemm {spgemm.__version__}, CuPy {cupy.__version__}, PyTorch {torch.__version__}, "
          f"SciPy {scipy.__version__}")
    results = []
    header = ("matrix", "nnz(C)", "spgemm", "cupy", "torch", "scipy", "x cupy", "x torch", "x scipy", "GFLOPS",
              "library", "binding", "cli", "cli x cuSPARSE")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for path in args.files:
        a = sp.csr_array(scipy.io.mmread(path)).astype(np.float64)
        b = a if a.shape[0] == a.shape[1] else sp.csr_array(a.T)
        nprod = int(np.diff(b.indptr)[a.indices].sum())
        # A square is A @ A with one object, as spgemm.matmul(A) computes it
        # (two objects with the same arrays are both checked).
        ga = csp.csr_matrix(sp.csr_matrix(a))
        gb = ga if b is a else csp.csr_matrix(sp.csr_matrix(b))
        ta = torch.sparse_csr_tensor(
            torch.as_tensor(a.indptr.astype(np.int64)), torch.as_tensor(a.indices.astype(np.int64)),
            torch.as_tensor(a.data), size=a.shape).cuda()
        tb = ta if b is a else torch.sparse_csr_tensor(
            torch.as_tensor(b.indptr.astype(np.int64)), torch.as_tensor(b.indices.astype(np.int64)),
            torch.as_tensor(b.data), size=b.shape).cuda()
        row = {"matrix": path, "nprod": nprod}
        # spgemm.matmul and the library's own call on the same operands
        # (without the binding's checks, index conversions and wrapping of
        # C: its wall clock and the device's time, as measured inside
        # Rust), the library's in a loop before and one after
        # spgemm.matmul's, each C freed before the next call.
        oa, keep_a, dev = _device._cupy_operand(ga, np.float64, True)
        ob, keep_b, _ = (oa, keep_a, dev) if b is a else _device._cupy_operand(gb, np.float64, True)
        nnz_c = int(spgemm.matmul(ga, gb).nnz)
        _spgemm.matmul_device(oa, ob, "float64", dev)
        inner = [_spgemm.matmul_device(oa, ob, "float64", dev).times for _ in range(args.reps)]
        full = []
        for _ in range(args.reps):
            sync()
            t = time.perf_counter()
            c = spgemm.matmul(ga, gb)
            sync()
            full.append((time.perf_counter() - t) * 1e3)
            del c
        inner += [_spgemm.matmul_device(oa, ob, "float64", dev).times for _ in range(args.reps)]
        row["spgemm_ms"] = statistics.median(full)
        row["nnz_c"] = nnz_c
        row["library_wall_ms"] = statistics.median(t[0] for t in inner)
        row["library_device_ms"] = statistics.median(t[1] for t in inner)
        del keep_a, keep_b
        for name, f in (("cupy", lambda: ga @ gb), ("torch", lambda: ta @ tb)):
            try:
                row[f"{name}_ms"] = timed(f, args.reps, sync)[0]
            except Exception as e:  # a vendor library that fails (out of memory) is reported, not fatal
                row[f"{name}_ms"] = None
                row[f"{name}_error"] = str(e).splitlines()[0][:120]
        row["scipy_ms"] = timed(lambda: a @ b, min(3, args.reps), lambda: None)[0]
        if args.cli:
            row["cli_ms"], row["cli_x_cusparse"] = cli(args.cli, path, args.reps)
        results.append(row)
        ratio = lambda k: f"{row[k] / row['spgemm_ms']:.2f}x" if row.get(k) else "fails"  # noqa: E731
        fmt = lambda k: f"{row[k]:.2f}" if row.get(k) else "-"  # noqa: E731
        binding = f"{row['spgemm_ms'] / row['library_wall_ms']:.2f}"
        lead = f"{row['cli_x_cusparse']:.2f}x" if row.get("cli_x_cusparse") else "-"
        print(f"| {path.split('/')[-1]} | {row['nnz_c']} | {fmt('spgemm_ms')} | {fmt('cupy_ms')} | {fmt('torch_ms')} | "
              f"{fmt('scipy_ms')} | {ratio('cupy_ms')} | {ratio('torch_ms')} | {ratio('scipy_ms')} | "
              f"{2 * nprod / row['spgemm_ms'] / 1e6:.1f} | {fmt('library_wall_ms')} | {binding} | {fmt('cli_ms')} | {lead} |")
        sys.stdout.flush()
        del ga, gb, ta, tb
        cupy.get_default_memory_pool().free_all_blocks()
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
