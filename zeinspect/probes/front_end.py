"""OpenCL C to SPIR-V: ocloc's front end, run once per group of targets that share it.

`ocloc compile -file k.cl -device a,b,c` runs the OpenCL C front end (Clang) again for every
device, and for a small module that is most of the time: measured with IGC 2.40, 0.59 s for
seven devices from OpenCL C against 0.10 s from SPIR-V (bench/run.py shows the effect on a
whole audit).  The front end depends on the device only through the OpenCL C extensions and
features it offers (the macros the source can test), so targets that report the same ones
(`ocloc query CL_DEVICE_EXTENSIONS` and `CL_DEVICE_OPENCL_C_FEATURES`) share one front-end
run; on IGC 2.40 the 19 default targets form five such groups.  The back end then compiles
that SPIR-V with the same options, and the zebin is byte-for-byte the one a direct build
gives (tests/test_aot.py checks this on the corpus).  A compiler that cannot answer the
queries gets one group per target, which is the direct build again.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..model import Compiler
from ..toolchain.knowledge import device_query, remembered
from ..toolchain.run import run_tool

FRONT_END_QUERIES = ("CL_DEVICE_EXTENSIONS", "CL_DEVICE_OPENCL_C_FEATURES")


def front_end_class(compiler: Compiler, ip: str) -> str:
    """Targets with equal classes get the same SPIR-V from the same OpenCL C."""

    def ask() -> str:
        answers = [device_query(compiler, query, ip) for query in FRONT_END_QUERIES]
        if any(a is None for a in answers):
            return f"ip:{ip}"
        canonical = "\n".join(" ".join(sorted(a.split())) for a in answers)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    return remembered("front_ends.json", f"{compiler.id}|{ip}", ask)


@dataclass(frozen=True)
class FrontEndRun:
    spirv: bytes | None
    """None when the front end failed; `log` and `failure` say why."""
    log: str
    failure: str | None


def run_front_end(compiler: Compiler, source: bytes, ip: str, options: str, internal_options: str,
                  timeout: float | None) -> FrontEndRun:
    """`ocloc compile -spv_only` for `ip`, with the options the back end will get too (ocloc
    hands the same options to both halves of a direct build)."""
    with tempfile.TemporaryDirectory(prefix="zeinspect-fe-") as tmp:
        src = Path(tmp) / "module.cl"
        src.write_bytes(source)
        out = Path(tmp) / "out"
        argv = [compiler.path, "compile", "-file", str(src), "-device", ip, "-spv_only", "-out_dir", str(out),
                "-output", "module"]
        if options:
            argv += ["-options", options]
        if internal_options:
            argv += ["-internal_options", internal_options]
        run = run_tool(argv, cwd=tmp, timeout=timeout)
        produced = sorted(out.glob("*.spv")) if out.is_dir() else []
        if run.returncode != 0 or run.describe_failure() or not produced:
            return FrontEndRun(None, run.output, run.describe_failure() or f"exit code {run.returncode}")
        return FrontEndRun(produced[0].read_bytes(), run.output, None)
