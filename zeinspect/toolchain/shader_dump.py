"""IGC's shader dumps: the final ISA of every kernel, with source lines and spill annotations.

Established on both compiler generations here (IGC 1.0.12504 and 2.40): with
`IGC_ShaderDumpEnable=1 IGC_DumpToCustomDir=DIR` in ocloc's environment, IGC writes, per
kernel and SIMD width, `*_simd<N>_entry_<id>.asm` with the final ISA.  Where the module has
line information (`-g` for OpenCL C; `OpLine` in SPIR-V) the ISA carries `// Line N:  <text>`
comments before the instructions of that line.  The dump also writes LLVM IR, vISA and
binaries (about two dozen files per kernel); they go to a temporary folder that is removed,
and only the `.asm` files are read.  No narrower switch was found: IGC_DumpVISAASMToConsole
prints vISA (before register allocation), not the final ISA.  Measured on fma_tile for
bmg-g21, the dumping compile takes 1.05-1.35x a plain one; the same compile also gives the
zebin, so explain costs one compile per target.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..model import Compiler
from .environment import Environment, process
from .ocloc import Flags, compile_argv
from .run import run_tool

DUMP_ENV = {"IGC_ShaderDumpEnable": "1"}
THE_MODULE = "<module>"
"""What a dump's `// File:` says for the compiled file itself (its temporary copy's path)."""


@dataclass(frozen=True)
class IsaDump:
    file: str
    """The dump's file name (it carries the SIMD width: `_simd16_`, and IGC's pass: `_1_simd`)."""
    text: str


@dataclass(frozen=True)
class DumpedBuild:
    dumps: tuple[IsaDump, ...]
    log: str
    failure: str | None
    """A crash or a timeout (the compiler's fault), None otherwise."""
    binary: bytes | None
    """The zebin the same compile wrote (the binary whose ISA the dumps show)."""
    exit_code: int = 0
    """ocloc's exit code: non-zero without a failure is a module that did not build."""
    seconds: float = 0.0
    """How long the compile took."""


def dump_isa(compiler: Compiler, source: bytes, *, spirv: bool, ip: str, options: str, internal_options: str,
             timeout: float | None, environment: Environment = ()) -> DumpedBuild:
    """One compile with dumps on: its `.asm` dumps, ocloc's log, a crash or timeout, the zebin.
    It runs under the run's compiler `environment`, with the dump flags on top."""
    with tempfile.TemporaryDirectory(prefix="zeinspect-dump-") as tmp:
        src = Path(tmp) / ("module.spv" if spirv else "module.cl")
        src.write_bytes(source)
        dumps = Path(tmp) / "dumps"
        dumps.mkdir()
        out = Path(tmp) / "out"
        env = process(environment, {**DUMP_ENV, "IGC_DumpToCustomDir": str(dumps)})
        argv = compile_argv(compiler, str(src), ip, spirv_input=spirv, out_dir=str(out),
                            flags=Flags(options, internal_options))
        run = run_tool(argv, cwd=tmp, timeout=timeout, env=env)
        found = tuple(IsaDump(p.name, p.read_text(errors="replace").replace(f"// File: {src}", f"// File: {THE_MODULE}"))
                      for p in sorted(dumps.rglob("*_entry_*.asm")))
        binaries = sorted(out.glob("*.bin")) if out.is_dir() else []
        binary = binaries[0].read_bytes() if binaries else None
    # The temporary copy's path means nothing to the user: name it as the dumps do.
    return DumpedBuild(found, run.output.replace(str(src), THE_MODULE), run.describe_failure(), binary,
                       run.returncode or 0, run.seconds)
