"""ocloc's command line, spelled in one place.

Every compile zeinspect makes (the executor's builds, the shared front end, the
register-file spelling probes) and every `reproduce:` command it prints comes from
`compile_argv`, so what a user re-runs is what was run.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from ..inputs.buildlog import failure_exit
from ..model import Compiler


class Flags(NamedTuple):
    """What a compile passes the compiler: `-options` (the OpenCL build options) and
    `-internal_options` (IGC's internal ones), each one string as ocloc takes it."""

    options: str = ""
    internal: str = ""


NO_FLAGS = Flags()


def compile_argv(compiler: Compiler, file: str, device: str, *, spirv_input: bool = False, spv_only: bool = False,
                 out_dir: str | None = None, output: str = "module", flags: Flags = NO_FLAGS) -> list[str]:
    """`ocloc compile` of `file` for `device` (one name, or several joined by commas for a fat
    build); without `out_dir` the command writes where it is run, as a user would run it."""
    argv = [compiler.path, "compile", "-file", file, "-device", device]
    if spirv_input:
        argv.append("-spirv_input")
    if spv_only:
        argv.append("-spv_only")
    if out_dir is not None:
        argv += ["-out_dir", out_dir, "-output", output]
    if flags.options:
        argv += ["-options", flags.options]
    if flags.internal:
        argv += ["-internal_options", flags.internal]
    return argv


# `ocloc multi LIST`: one process builds every line of LIST, printing "Command number N: "
# before the Nth build's own output (compute-runtime, offline_compiler/source/multi_command.cpp)
# and a summary at the end.
MULTI_MARKER = re.compile(r"^Command number (\d+): $", re.M)
MULTI_SUMMARY = re.compile(r"^Build command \d+: ", re.M)
UNQUOTABLE = re.compile(r'["\\\n\r]')
"""What a line of the list cannot carry unchanged in an option (its reader has no escapes)."""


def multi_line(argv: list[str]) -> str:
    """One line of an `ocloc multi` list: the arguments after `ocloc compile`, quoted as its
    reader splits them (double quotes around a value with spaces)."""
    return " ".join(f'"{a}"' if (" " in a or "\t" in a or not a) else a for a in argv[2:])


def multi_outputs(output: str, *, cut_short: bool) -> dict[int, str]:
    """Each build's own output in an `ocloc multi` run's, by its line's index (from 0).  After a
    crash or a hang (`cut_short`) the last build that started may be cut short: only builds
    another one followed are trusted then; all of them when the process ended by itself."""
    text = MULTI_SUMMARY.split(output, maxsplit=1)[0]
    marks = list(MULTI_MARKER.finditer(text))
    finished = len(marks) - 1 if cut_short else len(marks)
    out = {}
    for k, mark in enumerate(marks[:max(0, finished)]):
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        out[int(mark[1]) - 1] = text[mark.end() + 1:end]
    return out


def multi_exit(chunk: str) -> int | None:
    """The exit status a build of an `ocloc multi` list has alone, read from its own output: 0 for
    one that ends "Build succeeded.", else what its failure's verdict gives
    (inputs.buildlog.failure_exit: "Build failed with error code: -11" exits 245, with the
    compiler's reason), None for anything else (cut short, or a failure without a word of its
    own: built again alone).  Each build prints its log and then that line, alone or in a list
    alike (compute-runtime, offline_compiler/source/multi_command.cpp MultiCommand::singleBuild
    and ocloc_api.cpp oclocInvoke); alone, ocloc adds only its framing line "Command was: ..."
    after a failure.  Observed on ocloc 22.43 and 26.27 here (a scratch overflow on Xe2, a
    missing input)."""
    return 0 if chunk.endswith("Build succeeded.\n") else failure_exit(chunk)
