#!/usr/bin/env python3
"""First contact: every package of the package index known to ship Intel GPU device code, and
the Triton and Inductor caches, read as a new user would (`zeinspect inspect WHEEL`,
`zeinspect triton --from-cache DIR`), on one target.

Goal: 0 internal errors and 0 whole-input aborts.  Per input: how it ended (exit code), the
inputs read, the members skipped and why (each named in a note), the kernels, the incidents.

The packages: the candidates below, each downloaded with pip at its newest release (the
system's pip settings apply; nothing is vendored) and kept if it holds device code (SPIR-V,
zebins, ocloc fat binaries, SYCL offload images: what `zeinspect inspect` finds in it).  The
list was assembled by hand from the packages the Intel GPU software stack publishes and from
those that ship kernels for it (no index search service was at hand: a package found later is
a line here).  Its versions are what pip resolved on the day of the run, in the table.

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
CANDIDATES = (
    # oneMKL's SYCL domains (SPIR-V images, old offload model), the SYCL runtime and its device
    # libraries, dpctl and dpnp (SYCL libraries), the kernels of vLLM and of xpu-kernels (native
    # images and SPIR-V), Open3D's SYCL build (lambda-heavy, with Vulkan shaders as resources).
    "onemkl-sycl-blas", "onemkl-sycl-lapack", "onemkl-sycl-sparse", "onemkl-sycl-dft", "onemkl-sycl-rng",
    "onemkl-sycl-stats", "onemkl-sycl-vm", "onemkl-sycl-datafitting", "intel-sycl-rt", "intel-opencl-rt",
    "dpctl", "dpnp", "vllm-xpu-kernels", "xpu-kernels", "open3d-xpu", "oneccl-bind-pt", "onednn",
)
PINNED = {"vllm-xpu-kernels": "0.1.16.2", "xpu-kernels": "0.3.0", "open3d-xpu": "0.20.0"}
"""Packages the tests read at a known release; the others at their newest."""


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
    for package in CANDIDATES:
        if only and package not in only:
            continue
        try:
            whl = wheels.wheel(package, PINNED.get(package))
        except (SystemExit, subprocess.CalledProcessError) as exc:
            rows.append({"input": package, "version": "-", "exit": "-", "aborted": f"no wheel: {exc}"[:120]})
            continue
        version = whl.name.split("-")[1]
        code, doc, err, seconds = _run(["inspect", str(whl), "-t", target, "-q", "--json"], env)
        row = _row(package, version, code, doc, err, seconds)
        if code == 2 and "holds no kernels" in err:
            row["aborted"] = "no: holds no device code"  # a candidate that ships none: checked, listed
        rows.append(row)
        print(json.dumps(row), flush=True)
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
        subprocess.run(ZEINSPECT + ["triton", str(tutorials / spec), "--signature", pointer, "-t", target, "-q"],
                       capture_output=True, env={**env, "ZEINSPECT_CACHE_DIR": str(written)})
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
            last = json.loads((record.RESULTS / "first_contact.json").read_text())["rows"]
            rows = [r for r in last if r["input"] in CANDIDATES]
        else:
            rows = packages(args.target, set(args.only.split(",")) if args.only else None, env)
        if not args.packages_only and not args.only:
            rows += caches(args.target, env, Path(tmp))
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
