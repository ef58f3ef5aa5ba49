"""A module as a build sees it: its SPIR-V, its kernels' shapes as written, and its rewrites.

The one helper the compiling use cases (the audit, the shape search, `fix`, the audit in
recorded shapes) share to turn an input into what ocloc builds.  It takes the run's `Settings`
whole: the options the user gave for the input (its -D macros decide what OpenCL C source
is), the time limit and the compiler's environment all come from there, so no caller takes a
`Settings` apart to call the front end.  The SPIR-V comes from the first planned compiler's
front end unless a build names its own (compiler, IP): OpenCL C is turned into SPIR-V once
per front-end class and cached (toolchain.front_end).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cache import BuildCache
from ..inputs import Input
from ..inputs.spirv import Module, read_module
from ..levers import MODULE_LEVERS, Shape, written_shape
from ..levers.spirv_rewrite import Rewrite, apply_rewrites
from ..model import Compiler
from ..settings import Settings
from ..toolchain.front_end import to_spirv
from ..toolchain.targets import TargetPlan
from .session import Session


def module_spirv(inp: Input, config: Settings, cache: BuildCache, compiler: Compiler, ip: str) -> bytes:
    """The input as SPIR-V: itself, or OpenCL C through `compiler`'s front end for `ip`."""
    return to_spirv(inp, compiler, ip, cache, config.timeout, config.options_for(inp.path),
                    config.compiler_environment)


def rewritten(inp: Input, rewrites: tuple[Rewrite, ...], config: Settings, cache: BuildCache, compiler: Compiler,
              ip: str) -> tuple[bytes, tuple[str, ...]]:
    """The input's SPIR-V with the rewrites applied (checked by spirv-val), and notes saying what changed."""
    return apply_rewrites(module_spirv(inp, config, cache, compiler, ip), rewrites, MODULE_LEVERS, inp.path)


@dataclass(frozen=True)
class Written:
    """A module's SPIR-V as the first planned compiler makes it, and each kernel's shape as written."""

    spirv: bytes
    module: Module
    shapes: dict[str, Shape]
    """Kernel name -> the shape it is written in (its required sub-group size, ...), in module order."""


def first_front_end(session: Session, config: Settings, plan: TargetPlan | None = None) -> tuple[Compiler, str]:
    """The (compiler, IP) whose front end a search or a record reads a module with: the first planned."""
    plan = plan or session.plan(config.targets)
    ip = plan.ips[0]
    return plan.compiler_for_ip[ip], ip


def written(inp: Input, config: Settings, session: Session, plan: TargetPlan | None = None) -> Written:
    """The module as written: its SPIR-V and each kernel's shape."""
    compiler, ip = first_front_end(session, config, plan)
    spirv = module_spirv(inp, config, session.cache, compiler, ip)
    module = read_module(spirv, inp.path)
    return Written(spirv, module, {name: written_shape(module, fid) for fid, name in module.entry_points()})


def rewritten_first(inp: Input, rewrites: tuple[Rewrite, ...], config: Settings, session: Session,
                    plan: TargetPlan | None = None) -> tuple[bytes, tuple[str, ...]]:
    """`rewritten` through the first planned compiler's front end (what `fix` writes beside its record)."""
    compiler, ip = first_front_end(session, config, plan)
    return rewritten(inp, rewrites, config, session.cache, compiler, ip)
