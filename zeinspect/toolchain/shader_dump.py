"""IGC's shader dumps: the final ISA of every kernel, with source lines and spill annotations.

Established on both compiler generations here (IGC 1.0.12504 and 2.40): with
`IGC_ShaderDumpEnable=1 IGC_DumpToCustomDir=DIR` in ocloc's environment, IGC writes, per
kernel and SIMD width, `*_simd<N>_entry_<id>.asm` with the final ISA.  Where the module has
line information (`-g` for OpenCL C; `OpLine` in SPIR-V) the ISA carries `// Line N:  <text>`
comments before the instructions of that line.  The dump also writes LLVM IR, vISA and
binaries (about two dozen files per kernel); they go to a temporary folder that is removed,
and only the `.asm` files are read.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..model import Compiler
from .ocloc import compile_argv
from .run import run_tool

DUMP_ENV = {"IGC_ShaderDumpEnable": "1"}


@dataclass(frozen=True)
class IsaDump:
    file: str
    """The dump's file name (it carries the SIMD width: `_simd16_`)."""
    text: str


def dump_isa(compiler: Compiler, source: bytes, *, spirv: bool, ip: str, options: str, internal_options: str,
             timeout: float | None) -> tuple[list[IsaDump], str, str | None]:
    """(the `.asm` dumps, ocloc's log, a failure or None) of one compile with dumps on."""
    with tempfile.TemporaryDirectory(prefix="zeinspect-dump-") as tmp:
        src = Path(tmp) / ("module.spv" if spirv else "module.cl")
        src.write_bytes(source)
        dumps = Path(tmp) / "dumps"
        dumps.mkdir()
        env = dict(os.environ, **DUMP_ENV, IGC_DumpToCustomDir=str(dumps))
        argv = compile_argv(compiler, str(src), ip, spirv_input=spirv, out_dir=str(Path(tmp) / "out"),
                            options=options, internal_options=internal_options)
        run = run_tool(argv, cwd=tmp, timeout=timeout, env=env)
        found = [IsaDump(p.name, p.read_text(errors="replace")) for p in sorted(dumps.rglob("*_entry_*.asm"))]
    failure = run.describe_failure() or (None if run.returncode == 0 else f"ocloc exited with {run.returncode}")
    return found, run.output, failure
