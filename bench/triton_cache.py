#!/usr/bin/env python3
"""Screening a Triton cache at scale: `triton --from-cache` on the Inductor cache of a GPT-2
training step (67 specializations, realworld inductor-gpt2), cold and warm, against compiling
the same specializations one by one.

- one by one: each specialization built by triton-xpu's own compile (its TTIR through the
  offline backend to SPIR-V, per group of targets) and its SPIR-V by one ocloc process per
  target, as a first launch would; this is zeinspect's per-specialization path (Screener.screen)
  with triton-xpu's own libdevice link for every kernel (triton.offline.link off);
- cold: `zeinspect triton --from-cache` with an empty build cache: Triton's front end in
  worker processes (triton.build.front_ends), libdevice's metadata alone linked where a kernel calls
  nothing in it (triton.offline.link), every SPIR-V of a target group built in one batch
  (triton.probes.audit.build_many, audit_many); and the same with the front end in the screening
  process (ZEINSPECT_TRITON_WORKERS=0);
- warm: the same command again; then, on copies of its cache, with one more target that shares
  a group's capabilities (`--added`, lnl-m beside bmg-g21), whose builds need their front ends
  again: in workers, and in the screening process.
Goals (issue 47): cold at most 0.5x one by one; warm under 10 s; the screening process's own
peak RSS (VmHWM, not its compilers') at most 250 MB; (issue 62) zeinspect's build cache on disk
no larger than the input cache.  Each run in a fresh process with its own build cache.

Usage: .venv/bin/python bench/triton_cache.py [--targets bmg-g21,arl-s] [--added lnl-m]
Writes bench/results/triton_cache.json.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402

PYTHON = str(ROOT / ".venv" / "bin" / "python")
ONE_BY_ONE = """
import sys
from zeinspect.triton import plugin  # registers the Triton settings (its build policy), as the CLI does
from zeinspect.app.gate import settings
from zeinspect.app.session import open_session
from zeinspect.triton.offline import link
link.ENABLED = False  # triton-xpu's own libdevice link for every kernel: what it spends
from zeinspect.triton.sources.cache import read_cache
from zeinspect.triton.app.library import Screener
config = settings({"targets": tuple(sys.argv[2].split(","))})
screener = Screener(config, open_session(config))
specs = read_cache(sys.argv[1]).specializations
got = [screener.screen(spec) for spec in specs]
built = sum(1 for c in got if not isinstance(c, str) and c.reports)
broken = [i for c in got if not isinstance(c, str) for i in c.incidents if "internal error" in i]
print(f"one by one: {built} of {len(specs)} specializations built", file=sys.stderr)
if broken or not built:  # an anchor that built nothing measures nothing: exit 3, which timed() refuses
    print(f"one by one: {len(broken)} internal errors: {broken[:1]}", file=sys.stderr)
    sys.exit(3)
"""


def realworld() -> Path:
    for candidate in (os.environ.get("ZEINSPECT_REALWORLD"), ROOT.parent / "shared" / "realworld",
                      "/work/shared/realworld"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    raise SystemExit("no realworld folder (set $ZEINSPECT_REALWORLD)")


AT_EXIT_PEAK = """
import atexit, sys
atexit.register(lambda: print("VmHWM", open("/proc/self/status").read().split("VmHWM:")[1].split()[0],
                              file=sys.stderr))
"""
"""Prepended to a script: its process's own peak resident set, printed on stderr as it ends (peak_mb)."""
PEAK = AT_EXIT_PEAK + """
from zeinspect.cli import main
main(sys.argv[1:])
"""


def peak_mb(stderr: str) -> float:
    """The screening process's own peak resident set, as PEAK printed it."""
    return round(int(stderr.rsplit("VmHWM", 1)[1].split()[0]) / 1024, 1)


def size_mb(folder: Path) -> float:
    """A folder's size on disk (its files' allocated blocks, as `du` counts them: a cache of many
    small entries takes more than their bytes), in MB."""
    return round(sum(p.stat().st_blocks * 512 for p in folder.rglob("*") if p.is_file()) / 2**20, 1)


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            try:
                kids = [int(k) for k in task.read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def peaks(pid: int, seen: dict[int, tuple[str, int]]) -> None:
    """Each live descendant's peak resident set (VmHWM, kB) and what it is, kept in `seen` by pid:
    a Triton front-end worker (multiprocessing's spawned children, triton.build.front_ends), an
    ocloc, or the name of what it runs."""
    for kid in _descendants(pid):
        try:
            argv = Path(f"/proc/{kid}/cmdline").read_bytes().split(b"\0")
            hwm = int(Path(f"/proc/{kid}/status").read_text().split("VmHWM:")[1].split()[0])
        except (OSError, IndexError, ValueError):
            continue
        names = [Path(a.decode(errors="replace")).name for a in argv]
        if b"multiprocessing" in b" ".join(argv):
            kind = "front-end worker"
        else:  # ocloc runs under the toolchain's own loader (ld-linux-x86-64.so.2 ... ocloc-26.x)
            kind = next((n for n in names if n.startswith("ocloc")), names[0] or "?").split("-")[0]
        seen[kid] = (kind, max(hwm, seen.get(kid, ("", 0))[1]))


def children_cpu() -> float:
    """CPU seconds (user and system) of every process this one has waited for: a command's own and
    those of the processes it waited for in turn (its compilers, its front-end workers)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def watched(argv: list[str], cache: Path, **environ: str) -> tuple[float, str, dict[str, float], float]:
    """Seconds, stderr, the largest peak RSS (MB) of each kind of process under it (sampled every
    0.2 s: a process's last 0.2 s of growth, or one shorter than that, may be missed), and the CPU
    seconds of the command and its processes: with the seconds, how busy it kept the cores (two
    busy cores cost more CPU than one here)."""
    cpu = children_cpu()
    start = time.perf_counter()
    said = tempfile.TemporaryFile()  # not a pipe: a command that says more than a pipe holds would wait
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=said,
                            env=dict(os.environ, ZEINSPECT_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **environ))
    seen: dict[int, tuple[str, int]] = {}
    while proc.poll() is None:
        peaks(proc.pid, seen)
        time.sleep(0.2)
    said.seek(0)
    stderr = said.read().decode(errors="replace")
    said.close()
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:4])}...: exit {proc.returncode}: {stderr[-500:]}")
    kinds: dict[str, float] = {}
    for kind, kb in seen.values():
        kinds[kind] = max(kinds.get(kind, 0.0), round(kb / 1024, 1))
    return time.perf_counter() - start, stderr, kinds, children_cpu() - cpu


def timed(argv: list[str], cache: Path, **environ: str) -> tuple[float, str, float, float]:
    """`watched`, with the front-end workers' peak alone (MB; 0 when none ran)."""
    seconds, stderr, kinds, cpu = watched(argv, cache, **environ)
    return seconds, stderr, kinds.get("front-end worker", 0.0), cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--targets", default="bmg-g21,arl-s")
    ap.add_argument("--added", default="lnl-m", help="a target with the capabilities of one of --targets")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="zeinspect-triton-cache-") as tmp:
        with tarfile.open(realworld() / "inductor-gpt2" / "gpt2-step.tar.xz") as tar:
            tar.extractall(tmp, filter="data")
        cache = Path(tmp) / "ind_gpt2"
        one, _, _, one_cpu = timed([PYTHON, "-c", ONE_BY_ONE, str(cache), args.targets], Path(tmp) / "c1")
        command = [PYTHON, "-c", PEAK, "triton", "--from-cache", str(cache), "-t", args.targets, "-q", "--json"]
        cold, said, workers, cold_cpu = timed(command, Path(tmp) / "c2")
        warm, _, _, _ = timed(command, Path(tmp) / "c2")
        # Warm, with one more target that shares a group's capabilities (lnl-m beside bmg-g21): the
        # group's front ends are in the cache, its new compiles are not, so each of its builds has
        # its front end run again (triton.probes.audit._made_again), in workers, and in the
        # screening process (ZEINSPECT_TRITON_WORKERS=0, as every such build did before).
        more = [*command[:7], f"{args.targets},{args.added}", *command[8:]]
        added = {}
        for name, workers_env in (("workers", {}), ("in the screening process", {"ZEINSPECT_TRITON_WORKERS": "0"})):
            shutil.copytree(Path(tmp) / "c2", Path(tmp) / f"c5-{len(added)}")
            seconds, added_said, _, _ = timed(more, Path(tmp) / f"c5-{len(added)}", **workers_env)
            added[name] = (seconds, peak_mb(added_said))
        alone, alone_said, _, alone_cpu = timed(command, Path(tmp) / "c3", ZEINSPECT_TRITON_WORKERS="0")
        # The screening process's growth per entry: the same screen on three of the entries
        # (workers forced, as the whole cache has them), against the whole cache.
        small = Path(tmp) / "small"
        for entry in sorted(p for p in (cache / "triton").rglob("*") if p.is_dir() and any(p.glob("*.ttir")))[:3]:
            shutil.copytree(entry, small / entry.name)
        few = [*command[:5], str(small), *command[6:]]
        _, few_said, _, _ = timed(few, Path(tmp) / "c4", ZEINSPECT_TRITON_WORKERS="2")
        entries = sum(1 for p in (cache / "triton").rglob("*.ttir"))
        per_entry = (peak_mb(said) - peak_mb(few_said)) / max(1, entries - 3)
        ours, theirs = size_mb(Path(tmp) / "c2"), size_mb(cache)
    rows = [
        {"measure": "one by one: triton-xpu's compile, then one ocloc per target", "seconds": round(one, 1),
         "cpu seconds": round(one_cpu, 1)},
        {"measure": "zeinspect triton --from-cache, cold (batched per target group)", "seconds": round(cold, 1),
         "cpu seconds": round(cold_cpu, 1), "ratio": round(cold / one, 2), "goal": "0.5 x one by one",
         "met": cold <= 0.5 * one},
        {"measure": "the same, warm", "seconds": round(warm, 1), "goal": "10 s", "met": warm < 10},
        *({"measure": f"warm, with {args.added} added (its group's front ends run again, its compiles made): "
                      f"front ends {name}", "seconds": round(seconds, 1), "peak RSS (MB)": peak,
           "goal": "250 MB", "met": peak <= 250} for name, (seconds, peak) in added.items()),
        {"measure": "peak RSS of the cold screen (MB, the process's own)", "value": peak_mb(said),
         "goal": "250 MB", "met": peak_mb(said) <= 250},
        {"measure": "peak RSS of its largest Triton front-end worker (MB, sampled)", "value": workers},
        {"measure": f"the screening process on 3 entries (MB); its growth per entry up to {entries}",
         "value": peak_mb(few_said), "per entry (MB)": round(per_entry, 3)},
        {"measure": "500 entries, extrapolated from that growth (MB; bench/triton_cache_large.py measures a real cache of 500)",
         "value": round(peak_mb(few_said) + per_entry * 497, 1), "goal": "250 MB",
         "met": peak_mb(few_said) + per_entry * 497 <= 250},
        {"measure": "zeinspect's build cache after the cold and warm screens (MB on disk) against the input cache "
                    "(a real run's: TTIR, TTGIR, LLIR, PTX and cubin of every entry, and Inductor's code)",
         "value": ours, "input": theirs, "goal": "no larger than the input", "met": ours <= theirs},
        {"measure": "cold, Triton's front end in the screening process (ZEINSPECT_TRITON_WORKERS=0)",
         "seconds": round(alone, 1), "cpu seconds": round(alone_cpu, 1), "ratio": round(alone / one, 2),
         "peak RSS (MB)": peak_mb(alone_said)},
    ]
    for row in rows:
        print(row)
    record.write("triton_cache", "Screening an Inductor cache: 67 specializations of a GPT-2 training step",
                 rows, note=f"targets {args.targets}; each run in a fresh process with its own build cache.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
