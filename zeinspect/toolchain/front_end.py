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

from ..cache import BuildCache, make_key
from ..errors import InputError
from ..fileio import sha256
from ..inputs import Input
from ..inputs.includes import keyed_source
from ..inputs.kinds import InputKind
from ..model import Compiler
from .environment import Environment, process
from .knowledge import device_query, remembered
from .ocloc import Flags, compile_argv
from .run import run_tool

FRONT_END_QUERIES = ("CL_DEVICE_EXTENSIONS", "CL_DEVICE_OPENCL_C_FEATURES")


def front_end_class(compiler: Compiler, ip: str) -> str:
    """Targets with equal classes get the same SPIR-V from the same OpenCL C."""

    def ask() -> str:
        answers = [device_query(compiler, query, ip) for query in FRONT_END_QUERIES]
        known = [a for a in answers if a is not None]
        if len(known) < len(answers):
            return f"ip:{ip}"
        canonical = "\n".join(" ".join(sorted(a.split())) for a in known)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    return remembered("front_ends.json", f"{compiler.id}|{ip}", ask)


@dataclass(frozen=True)
class FrontEndRun:
    spirv: bytes | None
    """None when the front end failed; `log` and `failure` say why."""
    log: str
    failure: str | None


def run_front_end(compiler: Compiler, source: bytes, ip: str, options: str, internal_options: str,
                  timeout: float | None, environment: Environment = ()) -> FrontEndRun:
    """`ocloc compile -spv_only` for `ip`, with the options the back end will get too (ocloc
    hands the same options to both halves of a direct build)."""
    with tempfile.TemporaryDirectory(prefix="zeinspect-fe-") as tmp:
        src = Path(tmp) / "module.cl"
        src.write_bytes(source)
        out = Path(tmp) / "out"
        argv = compile_argv(compiler, str(src), ip, spv_only=True, out_dir=str(out),
                            flags=Flags(options, internal_options))
        run = run_tool(argv, cwd=tmp, timeout=timeout, env=process(environment))
        produced = sorted(out.glob("*.spv")) if out.is_dir() else []
        if run.returncode != 0 or run.describe_failure() or not produced:
            return FrontEndRun(None, run.output, run.describe_failure() or f"exit code {run.returncode}")
        return FrontEndRun(produced[0].read_bytes(), run.output, None)


def to_spirv(inp: Input, compiler: Compiler, ip: str, cache: BuildCache, timeout: float | None,
             options: str = "", environment: Environment = ()) -> bytes:
    """The module as SPIR-V: the input itself, or OpenCL C through ocloc's front end with the
    user's `options` (its -D macros decide what the source is) under the compiler's `environment`."""
    if inp.kind == InputKind.SPIRV:
        return inp.data
    # Targets that share a front end share its SPIR-V.
    key = make_key(kind="spv_only", module=keyed_source(sha256(inp.data), inp.data, options),
                   front_end=front_end_class(compiler, ip), compiler=compiler.id, options=options,
                   environment=[list(kv) for kv in environment])
    hit = cache.get(key)
    if hit is not None:
        return hit[1]
    run = run_front_end(compiler, inp.data, ip, options, "", timeout, environment)
    if run.spirv is None:
        first = next((line for line in run.log.splitlines() if "error" in line), run.log.strip()[-300:])
        raise InputError(f"the OpenCL C front end failed: {first or run.failure}", path=inp.path)
    cache.put(key, {"kind": "spv_only"}, run.spirv)
    return run.spirv
