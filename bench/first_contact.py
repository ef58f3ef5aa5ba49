#!/usr/bin/env python3
"""First contact: every package of the package index known to ship Intel GPU device code, and
the Triton and Inductor caches, read as a new user would (`zeinspect inspect WHEEL`,
`zeinspect triton --from-cache DIR`), on one target.

Goal: 0 internal errors and 0 whole-input aborts.  Per input: how it ended (exit code), the
inputs read, the members skipped and why (each named in a note), the kernels, the incidents.

The packages: every package on the index found to ship Intel GPU device code (SYCL images,
SPIR-V, zebins, ocloc fat binaries), each downloaded with pip at the release in its line (the
system's pip settings apply; nothing is vendored).  The list was made on 2026-12-04 by grepping
the index's package list (the env entry's packages/pypi.tsv) for names and summaries that say
XPU, SYCL, oneAPI, DPC++, ESIMD, OpenCL, oneMKL/oneDAL/oneCCL/oneDNN, bigdl, and searching for
what names do not say; each candidate's wheel was then opened (its offload sections and zstd
frames read), and only those holding device code are here.  Each line says how it was found.
Candidates that held none (OpenVINO's OpenCL C source, CPU builds, meta-packages, pure
Python) are listed in docs/benchmarks.md, not run.  A release with `--offload-compress`
(zstd images) is marked: oneMKL's from 2025.2.0, bitsandbytes from 0.48.0, torchcodec-xpu.

The caches: the Triton cache Triton wrote while zeinspect screened Triton's own tutorials (as
tests/integration/triton/test_from_cache.py makes it), and ../shared/realworld/inductor-gpt2/
(the Inductor cache `torch.compile` wrote for a GPT-2 training step on a CUDA GPU: Inductor
writes Triton kernels for GPUs only, so a CPU-built torch writes none).

Usage: .venv/bin/python bench/first_contact.py [-t bmg-g21] [--only open3d-xpu,dpnp] [--packages-only]
Writes bench/results/first_contact.json (the docs' benchmarks page shows it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402
import wheels  # noqa: E402

ZEINSPECT = [str(ROOT / ".venv" / "bin" / "zeinspect")]
CANDIDATES: tuple[tuple[str, str | None, str], ...] = (
    # (package, release: None for the newest, how it was found; `compressed` where its images are zstd)
    ("onemkl-sycl-blas", None, "the Intel GPU stack's own packages; compressed"),
    ("onemkl-sycl-lapack", None, "the Intel GPU stack's own packages; compressed"),
    ("onemkl-sycl-sparse", None, "the Intel GPU stack's own packages; compressed"),
    ("onemkl-sycl-dft", None, "the Intel GPU stack's own packages; compressed"),
    ("onemkl-sycl-rng", None, "the Intel GPU stack's own packages; compressed"),
    ("onemkl-sycl-stats", None, "the Intel GPU stack's own packages; compressed"),
    ("onemkl-sycl-vm", None, "the Intel GPU stack's own packages; compressed"),
    ("onemkl-sycl-datafitting", None, "the Intel GPU stack's own packages; compressed"),
    ("onemkl-sycl-distributed-dft", None, "package list: `onemkl`; compressed"),
    ("onemkl-sycl-blas", "2025.1.0", "the last uncompressed oneMKL release, beside the compressed one"),
    ("mkl-dpcpp", "2023.2.0", "package list: `dpcpp` (oneMKL's single SYCL library before the split)"),
    ("intel-sycl-rt", "2025.3.0", "the Intel GPU stack's own packages (its last release with SPIR-V device libraries)"),
    ("dpcpp-cpp-rt", "2024.0.2", "package list: `dpcpp`"),
    ("intel-cmplr-lib-rt", "2024.1.2", "package list: `oneapi`"),
    ("dpctl", None, "the Intel GPU stack's own packages"),
    ("dpctl", "0.21.1", "the Intel GPU stack's own packages (its last release with dpctl.tensor)"),
    ("dpnp", None, "the Intel GPU stack's own packages"),
    ("oneccl", None, "package list: `oneccl`"),
    ("impi-rt", None, "package list: `impi`"),
    ("onednn", None, "the Intel GPU stack's own packages"),
    ("onednn-cpu-dpcpp-gpu-dpcpp", None, "package list: `onednn`"),
    ("daal-gpu", None, "package list: `daal`"),
    ("daal", "2025.11.0", "package list: `daal` (its last release with the GPU library)"),
    ("scikit-learn-intelex-gpu", None, "package list: `intelex`"),
    ("daal4py", "2024.7.0", "package list: `daal`"),
    ("vllm-xpu-kernels", "0.1.16.2", "kernels for Intel GPUs (known)"),
    ("xpu-kernels", "0.3.0", "kernels for Intel GPUs (known)"),
    ("open3d-xpu", "0.20.0", "kernels for Intel GPUs (known)"),
    ("bitsandbytes", None, "search: the issue trackers' XPU builds; compressed"),
    ("torchcodec-xpu", None, "package list: `xpu`; compressed"),
    ("auto-round-lib", None, "package list: `auto-round`"),
    ("auto-round-kernel", None, "package list: `auto-round`"),
    ("intel-extension-for-openxla", None, "package list: `intel-extension`"),
    ("jax-oneapi-pjrt", None, "package list: `oneapi`"),
    ("jax-oneapi-plugin", None, "package list: `oneapi`"),
    ("intel-extension-for-tensorflow-lib", None, "package list: `intel-extension`"),
    ("bigdl-core-xe", None, "package list: `bigdl` (ipex-llm's kernels)"),
    ("bigdl-core-xe-21", None, "package list: `bigdl`"),
    ("bigdl-core-xe-23", None, "package list: `bigdl`"),
    ("bigdl-core-xe-addons-21", None, "package list: `bigdl`"),
    ("bigdl-core-xe-addons-23", None, "package list: `bigdl`"),
    ("bigdl-core-xe-addons-27", None, "package list: `bigdl`"),
    ("bigdl-core-xe-batch-21", None, "package list: `bigdl`"),
    ("bigdl-core-xe-batch-23", None, "package list: `bigdl`"),
    ("bigdl-core-xe-all", None, "package list: `bigdl`"),
    ("bigdl-core-xe-esimd", None, "package list: `esimd`"),
    ("bigdl-core-xe-esimd-21", None, "package list: `esimd`"),
    ("bigdl-core-cpp", None, "package list: `bigdl` (llama.cpp's SYCL build)"),
    ("bigdl-core-llm", None, "package list: `bigdl`"),
    ("bigdl-core-llm-27", None, "package list: `bigdl`"),
    ("cyllama-sycl", None, "package list: `sycl` (llama.cpp's SYCL build)"),
    ("inferna-sycl", None, "package list: `sycl` (llama.cpp's SYCL build)"),
)
"""Every package on the index known to ship Intel GPU device code (see above)."""


def _run(argv: list[str], env: dict) -> tuple[int, dict | None, str, float]:
    start = time.perf_counter()
    proc = subprocess.run(ZEINSPECT + argv, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        doc = None
    return proc.returncode, doc, proc.stderr.strip(), seconds


def _row(name: str, version: str, code: int, doc: dict | None, err: str, seconds: float) -> dict:
    """What one input did: how it ended, what it read and skipped, its kernels and incidents."""
    if doc is None:
        return {"input": name, "version": version, "exit": code, "read": "-", "skipped": "-", "kernels": 0,
                "incidents": 0, "internal errors": int("internal error" in err),
                "aborted": f"yes: {err.splitlines()[-1][:160] if err else 'no output'}", "seconds": round(seconds, 1)}
    reports = doc.get("reports", [])
    notes = doc.get("notes", [])
    skipped = [n for n in notes if "not audited, holding no compute kernel" in n]
    counted = sum(int(m[1]) for n in skipped if (m := re.search(r": (\d+) members? not audited", n)))
    whys = sorted({w.split(" (")[0] for n in skipped for w in re.findall(r": ([a-zA-Z][^;]*?)(?:;|$)",
                                                                          n.split("compute kernel: ", 1)[-1])})
    files = {(r.get("origin") or {}).get("file") or r["input"] for r in reports}
    incidents = doc.get("incidents", [])
    total = (doc.get("coverage") or {}).get("total") or {}
    ledger = {"declared": total.get("declared"), "reported": total.get("reported"),
              "excluded": sum((total.get("excluded") or {}).values()),
              "unread": (total.get("unread") or 0) + (total.get("unread_parts") or 0)} if total else \
        {"declared": "-", "reported": "-", "excluded": "-", "unread": "-"}
    return {"input": name, "version": version, "exit": code, **ledger, "read": len(files),
            "skipped": f"{counted}: {'; '.join(whys)[:200]}" if counted else "0",
            "kernels": len({(r["input"], r["kernel"]) for r in reports}), "incidents": len(incidents),
            "internal errors": sum(1 for i in incidents if "internal error" in i), "aborted": "no",
            "seconds": round(seconds, 1)}


def packages(target: str, only: set[str] | None, env: dict) -> list[dict]:
    rows = []
    for package, release, found in CANDIDATES:
        if only and package not in only:
            continue
        try:
            whl = wheels.wheel(package, release, binary=True)
        except (SystemExit, subprocess.CalledProcessError) as exc:
            rows.append({"input": package, "version": release or "-", "found": found, "exit": "-",
                         "aborted": f"no wheel: {exc}"[:120]})
            continue
        version = whl.name.split("-")[1]
        code, doc, err, seconds = _run(["inspect", str(whl), "-t", target, "-q", "--json"], env)
        row = {**_row(package, version, code, doc, err, seconds), "found": found}
        if code == 2 and "holds no kernels" in err:
            row["aborted"] = "no: holds no device code"  # a candidate that ships none: checked, listed
        rows.append(row)
        print(json.dumps(row), flush=True)
        if not release:
            wheels.forget(whl)  # a newest release is fetched again next time; large wheels are not kept
    return rows


def caches(target: str, env: dict, tmp: Path) -> list[dict]:
    rows = []
    realworld = next((Path(p) for p in (os.environ.get("ZEINSPECT_REALWORLD"), ROOT.parent / "shared" / "realworld",
                                        "/work/shared/realworld") if p and Path(p).is_dir()), None)
    if realworld is None:
        return rows
    tutorials = realworld / "triton-tutorials"
    written = tmp / "tutorials-cache"
    for spec, pointer in (("01-vector-add.py:add_kernel", "*fp32"), ("02-fused-softmax.py:softmax_kernel", "*fp32"),
                          ("05-layer-norm.py:_layer_norm_fwd_fused", "*fp16")):
        # zeinspect's process keeps its Triton cache (what Triton wrote compiling them) in `written`.
        keep = ("import sys\nfrom zeinspect.triton.build import context\n"
                f"context._process_triton_cache = lambda: {str(written / 'triton')!r}\n"
                "from zeinspect.cli import main\nmain(sys.argv[1:])\n")
        subprocess.run([sys.executable, "-c", keep, "triton", str(tutorials / spec), "--signature", pointer, "-t",
                        target, "-q"], capture_output=True, env={**env, "ZEINSPECT_CACHE_DIR": str(written)})
    code, doc, err, seconds = _run(["triton", "--from-cache", str(written / "triton"), "-t", target, "-q", "--json"],
                                   env)
    rows.append(_row("Triton cache of the tutorials", "triton-xpu", code, doc, err, seconds))
    inductor = realworld / "inductor-gpt2" / "gpt2-step.tar.xz"
    if inductor.is_file():
        subprocess.run(["tar", "xJf", str(inductor), "-C", str(tmp)], check=True)
        code, doc, err, seconds = _run(["triton", "--from-cache", str(tmp / "ind_gpt2"), "-t", target, "-q",
                                        "--json"], env)
        rows.append(_row("Inductor cache, GPT-2 training step (CUDA)", "torch 2.11", code, doc, err, seconds))
    for row in rows:
        print(json.dumps(row), flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-t", "--target", default="bmg-g21")
    ap.add_argument("--only", help="comma-separated packages")
    ap.add_argument("--packages-only", action="store_true")
    ap.add_argument("--caches-only", action="store_true", help="only the caches (keeps the packages' last rows)")
    args = ap.parse_args()
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="zeinspect-first-contact-") as tmp:
        if args.caches_only:
            rows = record.earlier_rows("first_contact", lambda r: r["input"] in {c[0] for c in CANDIDATES})
        else:
            rows = packages(args.target, set(args.only.split(",")) if args.only else None, env)
            if args.only:  # the other packages keep their last rows, in the list's order
                rows = record.keep_others("first_contact", rows, lambda r: (r["input"], r["version"]))
        if not args.packages_only and not args.only:
            rows += caches(args.target, env, Path(tmp))
        elif args.only and not args.packages_only:
            rows = [r for r in rows if r["input"] in {c[0] for c in CANDIDATES}] + \
                [r for r in rows if r["input"] not in {c[0] for c in CANDIDATES}]
    aborted = sum(1 for r in rows if str(r.get("aborted", "")).startswith("yes"))
    internal = sum(r.get("internal errors", 0) for r in rows)
    unread = sum(r["unread"] for r in rows if isinstance(r.get("unread"), int))
    record.write("first_contact", f"First contact: packages and caches read as a new user would, on {args.target}",
                 rows, note=f"{len(rows)} inputs: {aborted} whole-input aborts, {internal} internal errors, {unread} "
                            "declared kernels unread (goal: 0, 0 and 0; declared = reported + excluded on every "
                            "input: the ledger, docs/how-it-works.md#the-ledger). `skipped`: members named in a note "
                            "as holding no compute kernel, and why.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
