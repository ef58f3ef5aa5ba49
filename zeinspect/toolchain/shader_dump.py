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

Many SPIR-V modules' dumping compiles run in one `ocloc multi` process (dump_isa_many), as the
audit's plain builds do.  IGC reads its settings (the dump switch and folder) once per process
(igc_regkeys.cpp LoadRegistryKeys behind a static flag, IGC 98fff71), so every build of the
process dumps into one folder; each build's files are told apart by their name, which begins
`OCL_asm<hash>`: IGC's hash of the input module's bytes and nothing else (dllInterfaceCompute.cpp
TranslateBuild -> Dump.cpp ShaderHashOCL -> iStdLib utility.h Hash; DumpName::AbsolutePath,
Dump.cpp 192-333).  Among them IGC writes `OCL_asm<hash>.spv`, the module itself, byte for
byte: a module's files are the ones named like the copy of it (no need to compute IGC's hash).
The same module twice in one process would share the names, so a batch holds each module
once.  Checked on IGC 1.0.12504 and 2.40.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..model import Compiler
from .environment import Environment, process
from .ocloc import Flags, compile_argv, multi_exit, multi_line, multi_outputs
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


@dataclass(frozen=True)
class DumpModule:
    """One SPIR-V module's dumping compile in a batch (dump_isa_many)."""

    source: bytes
    ip: str
    options: str
    internal_options: str


def dump_isa_many(compiler: Compiler, modules: Sequence[DumpModule], *, timeout: float | None,
                  environment: Environment = ()) -> list[DumpedBuild | None]:
    """Several SPIR-V modules' dumping compiles in one `ocloc multi` process, each module once;
    None for a build a crash or a hang left unfinished there, or whose dumps cannot be told
    apart: the caller compiles it alone.  A build that failed there is its failure, its exit
    read from its own output (ocloc.multi_exit).  Each build's seconds are its share of the
    process's (none after a crash or a hang, whose time is not theirs)."""
    digests = [hashlib.sha256(m.source).hexdigest() for m in modules]
    if len(set(digests)) != len(modules):
        raise ValueError("a batch of dumping compiles holds each module once (IGC names dumps by the module)")
    results: list[DumpedBuild | None] = [None] * len(modules)
    with tempfile.TemporaryDirectory(prefix="zeinspect-dump-") as tmp:
        dumps = Path(tmp) / "dumps"
        dumps.mkdir()
        lines = []
        for n, m in enumerate(modules):
            (Path(tmp) / f"m{n}.spv").write_bytes(m.source)
            lines.append(multi_line(compile_argv(compiler, f"m{n}.spv", m.ip, spirv_input=True, out_dir=f"o{n}",
                                                 flags=Flags(m.options, m.internal_options))))
        (Path(tmp) / "builds.txt").write_text("\n".join(lines) + "\n")
        env = process(environment, {**DUMP_ENV, "IGC_DumpToCustomDir": str(dumps)})
        run = run_tool([compiler.path, "multi", "builds.txt"], cwd=tmp, timeout=timeout, env=env)
        cut_short = run.describe_failure() is not None
        share = 0.0 if cut_short else run.seconds / len(modules)
        # Each module's name in the folder (OCL_asm<hash>): the one of IGC's copy of it.
        named = {hashlib.sha256(p.read_bytes()).hexdigest(): p.name[:-len(".spv")] + "_"
                 for p in dumps.glob("OCL_asm*.spv")}
        asm = sorted(dumps.rglob("*_entry_*.asm"))
        for n, chunk in multi_outputs(run.output, cut_short=cut_short).items():
            if not 0 <= n < len(modules):
                continue
            binaries = sorted((Path(tmp) / f"o{n}").glob("*.bin"))
            code = multi_exit(chunk)
            if code is None or len(binaries) != (1 if code == 0 else 0) or digests[n] not in named:
                continue
            found = tuple(IsaDump(p.name, p.read_text(errors="replace")) for p in asm
                          if p.name.startswith(named[digests[n]]))
            log = chunk.replace(f"m{n}.spv", THE_MODULE)
            results[n] = DumpedBuild(found, log, None, binaries[0].read_bytes() if binaries else None, code, share)
    return results
