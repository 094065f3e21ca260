"""Every GPU SpGEMM peer beside ours in one run, one JSON: spgemm's CUDA
backend and cuSPARSE (``spgemm bench --compare cusparse``, same process),
OpSparse and spECK (built here from their sources, each timing itself).

    python python/bench_peers.py --spgemm target/release/spgemm \\
        --opsparse PATH/TO/OpSparse-repository [--reps 10] [--json peers.json] A.mtx[.gz][+B.mtx[.gz]] ...

``--opsparse`` is a checkout of github.com/lorentzbf/OpSparse (commit
0134b0c was measured), which holds OpSparse and a copy of spECK (Parger
et al., PPoPP 2020). Nothing of theirs is kept here: the script copies
them to a work folder (``--work``, default /tmp/spgemm-peers), makes the
changes CUDA 13 needs, builds them once for the GPU present (nvcc, make;
about three minutes on 16 cores), then runs them on each matrix:

- both: their ``rdtsc`` timer replaced by ``std::chrono::steady_clock``
  (``fast_clock_time`` in their ``cuda_common.h``);
- spECK: the removed CUB iterator header no longer included,
  ``cub::Min()``/``cub::Max()`` replaced by ``cuda::minimum<>()`` /
  ``cuda::maximum<>()``, ``__shfl`` by ``__shfl_sync``, its own
  ``uint64_t`` typedef by ``<cstdint>``, and its unused ``uint64_t``
  instantiation of the product dropped.

Each peer reports GFLOPS = 2·nprod / (mean of 10 products after a
warm-up, C's allocation included); ours and cuSPARSE's are the median of
``--reps`` after one warm-up, device events around the whole product.
A product is ``A`` (C = A·A, A square) or ``A+B`` (C = A·B, such as an
AMG pair A+P). The JSON names the device, the
date, and per matrix every library's GFLOPS and ours over the best peer.
"""

import argparse
import datetime
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

CLOCK = (
    "#include <chrono>\ninline double fast_clock_time(){\n    return std::chrono::duration<double>"
    "(std::chrono::steady_clock::now().time_since_epoch()).count();\n}"
)


def steady_clock(header: pathlib.Path):
    """Replaces the rdtsc-based ``fast_clock_time`` of a peer's header."""
    s = header.read_text()
    a = s.index("inline double fast_clock_time(){")
    b = s.index("}", s.index("return double(counter)")) + 1
    header.write_text(s[:a] + CLOCK + s[b:])


def edit(path: pathlib.Path, old: str, new: str, count_at_least: int = 1):
    s = path.read_text()
    if s.count(old) < count_at_least:
        raise SystemExit(f"{path}: expected {old!r} (another OpSparse commit?)")
    path.write_text(s.replace(old, new))


def compute_capability() -> str:
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True, text=True, check=True
    )
    return out.stdout.split()[0].replace(".", "")


def build(source: pathlib.Path, work: pathlib.Path) -> dict:
    """Copies, patches and builds OpSparse and spECK once; their binaries."""
    cc = compute_capability()
    gencode = f"GENCODE=-gencode arch=compute_{cc},code=sm_{cc}"
    jobs = f"-j{os.cpu_count() or 8}"
    binaries = {"opsparse": work / "OpSparse" / "reg_opsparse", "speck": work / "spECK" / "reg_speck"}
    if all(b.exists() for b in binaries.values()):
        return binaries
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for name in ("OpSparse", "spECK"):
        shutil.copytree(source / name, work / name)
    steady_clock(work / "OpSparse" / "inc" / "cuda_common.h")
    speck = work / "spECK"
    steady_clock(speck / "include" / "cuda_common.h")
    helper = speck / "include" / "GPU" / "HelperFunctions.cuh"
    helper.write_text("".join(l for l in helper.read_text().splitlines(True) if "transform_input_iterator.cuh" not in l))
    for f in speck.rglob("*"):
        if f.is_file() and f.suffix in (".h", ".cuh", ".cu", ".cpp"):
            s = f.read_text(errors="replace")
            t = s
            if re.search(r"cub::(Min|Max)\(\)", t):
                t = "#include <cuda/functional>\n" + t.replace("cub::Min()", "cuda::minimum<>()").replace(
                    "cub::Max()", "cuda::maximum<>()"
                )
            t = re.sub(r"(?m)^typedef unsigned long long int uint64_t;", "#include <cstdint>", t)
            if t != s:
                f.write_text(t)
    multiply = speck / "source" / "GPU" / "Multiply.cu"
    multiply.write_text("".join(l for l in multiply.read_text().splitlines(True) if not l.startswith("template void MultiplyspECK<uint64_t,")))
    edit(
        speck / "include" / "common.cuh",
        "__shfl(data[j*VecSize + i], shfl_offset)",
        "__shfl_sync(0xffffffffu, data[j*VecSize + i], shfl_offset)",
    )
    for name, target in (("OpSparse", "reg_opsparse"), ("spECK", "reg_speck")):
        log = work / f"{name}.log"
        with open(log, "w") as out:
            r = subprocess.run(["make", "-C", str(work / name), jobs, gencode, target], stdout=out, stderr=subprocess.STDOUT)
        if r.returncode != 0:
            raise SystemExit(f"building {name} failed: see {log}")
    return binaries


def place(work: pathlib.Path, matrix: str) -> str:
    """The peers read matrix/suite_sparse/NAME/NAME.mtx beside their own
    folders: ``matrix`` placed there (unpacked when gzipped); its NAME."""
    name = pathlib.Path(matrix).name.removesuffix(".gz").removesuffix(".mtx")
    folder = work / "matrix" / "suite_sparse" / name
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.mtx"
    if not target.exists():
        if matrix.endswith(".gz"):
            with open(target, "wb") as out:
                subprocess.run(["zcat", matrix], stdout=out, check=True)
        else:
            target.symlink_to(os.path.abspath(matrix))
    return name


def peer_gflops(binary: pathlib.Path, work: pathlib.Path, product: str) -> float | None:
    """A peer's GFLOPS for ``product`` (``A`` for C = A·A, ``A+B`` for
    C = A·B): the last number it prints."""
    names = [place(work, m) for m in product.split("+")]
    a, b = names[0], names[-1]
    r = subprocess.run([f"./{binary.name}", a, b], cwd=binary.parent, capture_output=True, text=True, timeout=600)
    last = (r.stdout.strip().splitlines() or [""])[-1]
    numbers = re.findall(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", last)
    return float(numbers[-1]) if r.returncode == 0 and numbers else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("matrices", nargs="+", help="A.mtx[.gz] (C = A·A) or A.mtx[.gz]+B.mtx[.gz] (C = A·B)")
    ap.add_argument("--spgemm", required=True, help="the spgemm command (built with --features cuda)")
    ap.add_argument("--opsparse", required=True, type=pathlib.Path, help="a checkout of lorentzbf/OpSparse")
    ap.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/spgemm-peers"))
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--json")
    args = ap.parse_args()
    binaries = build(args.opsparse.resolve(), args.work)
    with tempfile.TemporaryDirectory() as tmp:
        ours_json = os.path.join(tmp, "ours.json")
        subprocess.run(
            [args.spgemm, "bench", "--backend", "cuda", "--compare", "cusparse", "--reps", str(args.reps),
             "--check-rows", "1000", "--json", ours_json, *args.matrices],
            check=True,
        )
        with open(ours_json) as f:
            ours = json.load(f)
    rows = []
    for matrix, record in zip(args.matrices, ours):
        peers = {
            "cusparse": record["compared"]["gflops"],
            "opsparse": peer_gflops(binaries["opsparse"], args.work, matrix),
            "speck": peer_gflops(binaries["speck"], args.work, matrix),
        }
        best = max(v for v in peers.values() if v is not None)
        rows.append({
            "matrix": record["matrix"], "nprod": record["nprod"], "compression_ratio": record["compression_ratio"],
            "ours_ms": record["median_ms"], "ours_gflops": record["gflops"], "check": record["check"],
            **{f"{k}_gflops": v for k, v in peers.items()},
            "ours_over_best_peer": record["gflops"] / best,
        })
        print(f"{record['matrix']:32} ours {record['gflops']:8.1f}  "
              + "  ".join(f"{k} {v if v is not None else float('nan'):8.1f}" for k, v in peers.items())
              + f"  x best {record['gflops'] / best:5.2f}")
    device = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True).stdout.strip()
    out = {"device": device, "date": datetime.date.today().isoformat(), "cores": os.cpu_count(),
           "opsparse_source": str(args.opsparse), "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
