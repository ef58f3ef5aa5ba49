"""ocloc's command line, spelled in one place.

Every compile zeinspect makes (the executor's builds, the shared front end, the
register-file spelling probes) and every `reproduce:` command it prints comes from
`compile_argv`, so what a user re-runs is what was run.
"""

from __future__ import annotations

from typing import NamedTuple

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
