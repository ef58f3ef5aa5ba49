#!/usr/bin/env python3
"""Print the staging pass's validation matrix (docs/guides/triton.md, "The SLM staging pass"): before and
after on the FMA target, the K tile and SLM chosen, and the evaluator's comparison."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
import triton_matrix as mx  # noqa: E402
from support.ttgir_eval import run_dot_kernel  # noqa: E402

from zeinspect.settings import Settings  # noqa: E402
from zeinspect.triton.build.backend import compile_kernel  # noqa
from zeinspect.triton.build.staging import stage  # noqa: E402
from zeinspect.triton.probes.audit import probe_triton  # noqa: E402

CAPS = {"has_subgroup_matrix_multiply_accumulate": False, "has_subgroup_2d_block_io": False,
        "has_bfloat16_conversions": False, "sub_group_sizes": [8, 16, 32]}


def cell(r) -> str:
    if r.status.value == "scratch_overflow":
        return f"does not build ({r.needed_scratch_bytes} > {r.scratch_limit_bytes})"
    return f"builds, spill {r.spill_bytes}"


def main() -> None:
    print("| group | dot (MxNxK, dtype, warps) | target | as compiled | staged | pass | same results |")
    print("|---|---|---|---|---|---|---|")
    rows = [("A", mx.FMA_TARGET, c) for c in mx.GROUP_A] + [("B", mx.FMA_TARGET, c) for c in mx.GROUP_B] + \
        [("C", t, c) for t, c in mx.GROUP_C_DPAS + mx.GROUP_C_SMALL]
    for group, target, case in rows:
        kernel = mx.kernel(case)
        config = Settings(targets=(target,))
        before = probe_triton(kernel, config, stage=False).reports[0]
        after = probe_triton(kernel, config, stage=True).reports[0]
        dots = after.extra["triton"]["staging"]["dots"]
        did = "; ".join(f"K_TILE {d['k_tile']}, {d['slm_bytes'] // 1024} KB SLM" if d["applied"]
                        else f"declined: gate {d['gate']}" for d in dots)
        same = "identical bytes" if not after.extra["triton"]["staging"]["changed"] else ""
        if not same:
            m, n, k, dtype, _ = case
            ttgir, _, meta = compile_kernel(kernel, CAPS, target)
            staged = stage(ttgir, CAPS, slm_total=65536, shared_in_use=meta["shared"]).ttgir
            elem = {"fp16": "f16", "bf16": "bf16"}[dtype]
            a, b = run_dot_kernel(ttgir, m, n, k, elem), run_dot_kernel(staged, m, n, k, elem)
            same = f"max difference {np.abs(a - b).max():.1e}"
        print(f"| {group} | {mx.case_id(case)} | {target} | {cell(before)} | {cell(after)} | {did} | {same} |",
              flush=True)


if __name__ == "__main__":
    main()
