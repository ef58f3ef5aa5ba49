#!/usr/bin/env python3
"""A module that does not build on every target, cold, against ocloc once per target.

kernels/ptss_overflow.cl keeps a live set over the per-thread scratch cap on some targets
(IGC 2.x refuses it on Xe2) and builds with spills on the others: the case a pre-merge gate
exists for, and the one where a compile is slowest (IGC tries every way to fit before it gives
up).  On the 19 default targets, in one run:

  anchor  ocloc once per distinct IP version, one after another (a user building each target);
  cold    `zeinspect inspect kernels/ptss_overflow.cl -t default` with an empty build cache
          (fat builds of one module's targets, one per worker: probes/executor.py).

Compared by CPU time (user + system of every process, the compilers included) as well as wall
time: what the compiles cost, whatever the cores do.  A fat build stops at the first target
that fails and keeps nothing it built before; zeinspect lists the newest IP first and takes the
failing target's own output as its failure (2026-12-07; the figures before and after are in
the README's Performance section).

Usage: .venv/bin/python bench/failing_builds.py   Writes bench/results/failing_builds.json.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import record  # noqa: E402

from zeinspect.toolchain.compilers import discover  # noqa: E402
from zeinspect.toolchain.targets import DEFAULT_TARGETS, plan_targets  # noqa: E402

MODULE = ROOT / "kernels" / "ptss_overflow.cl"


def main() -> int:
    compiler = discover()[0]
    plan = plan_targets(DEFAULT_TARGETS, [compiler])
    ips = {}
    for target in plan.targets:
        ips.setdefault(target.ip, target.name)
    anchor_wall = anchor_cpu = 0.0
    failing = []
    with tempfile.TemporaryDirectory(prefix="zeinspect-failing-") as tmp:
        for name in ips.values():
            wall, cpu, code, out = record.measured([compiler.path, "compile", "-file", str(MODULE), "-device", name,
                                                    "-out_dir", str(Path(tmp) / name), "-q"],
                                                   ok=(0, record.CL_BUILD_PROGRAM_FAILURE))
            anchor_wall += wall
            anchor_cpu += cpu
            if code:
                failing.append(name)
        env = dict(os.environ, ZEINSPECT_CACHE_DIR=str(Path(tmp) / "cache"))
        wall, cpu, _, out = record.measured([sys.executable, "-m", "zeinspect", "inspect", str(MODULE), "-t", "default",
                                             "--compiler", compiler.id, "--json", "-q"], env=env, ok=(1,))
    doc = json.loads(out)
    refused = sorted({r["target"] for r in doc["reports"] if r["status"] != "ok"})
    rows = [
        {"measure": f"anchor: ocloc once per distinct IP ({len(ips)}), one after another",
         "wall s": round(anchor_wall, 1), "cpu s": round(anchor_cpu, 1),
         "targets that do not build": ", ".join(failing)},
        {"measure": "zeinspect inspect -t default, cold (19 targets)", "wall s": round(wall, 1), "cpu s": round(cpu, 1),
         "cpu ratio to the anchor": round(cpu / anchor_cpu, 2), "wall ratio to the anchor": round(wall / anchor_wall, 2),
         "targets reported not building": ", ".join(refused), "cores": os.cpu_count()},
    ]
    for row in rows:
        print(row)
    record.write("failing_builds", "A module over the scratch cap on some targets, cold, against ocloc once per "
                 "target", rows, note=f"kernels/ptss_overflow.cl; {compiler.id}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
