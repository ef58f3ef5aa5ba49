"""The levers of OpenCL C and SPIR-V modules, and their shape (levers.base explains both).

Adding a lever: define it (a `Lever` with what it does to a build) and register it in
`MODULE_LEVERS`, here or from any module; nothing else changes (tests/unit/levers/
test_new_lever.py does it from the test file alone).  The order of the registry is the
order a shape search walks the settings.  Triton's levers are zeinspect.triton's own.
"""

from __future__ import annotations

from typing import Any

from . import register_file, sub_group
from .base import How, Lever, LeverRegistry, ShapeBase

__all__ = ["DEFAULT_SHAPE", "MODULE_LEVERS", "How", "Lever", "Shape", "module_rewrites", "written_shape"]

# OpenCL C sources and SPIR-V modules (judge.shapes).  JSON lists `grf` first, as
# zeinspect.report/1 always has.
MODULE_LEVERS = LeverRegistry(json_order=["grf", "sub_group"])
MODULE_LEVERS.register(sub_group.LEVER)
MODULE_LEVERS.register(register_file.LEVER)


class Shape(ShapeBase):
    """How a module is built: a value for each of MODULE_LEVERS (`Shape(grf="256", sub_group=16)`)."""

    levers = MODULE_LEVERS
    __slots__ = ()


DEFAULT_SHAPE = Shape()


def written_shape(module: Any, fid: int) -> Shape:
    """The shape an entry point is written in: each lever's written value (or its default)."""
    return Shape(**{lv.name: lv.written(module, fid) for lv in MODULE_LEVERS if lv.written is not None})


def module_rewrites(kernel: str, shape: ShapeBase, written: ShapeBase | None = None) -> tuple[tuple[str, str, Any], ...]:
    """The SPIR-V rewrites that build `kernel` in `shape`: every rewrite lever whose value is set
    (not its default) and, when `written` is given, differs from the written one."""
    return tuple((kernel, lv.name, getattr(shape, lv.name)) for lv in MODULE_LEVERS.of(How.SPIRV_REWRITE)
                 if getattr(shape, lv.name) != lv.default
                 and (written is None or getattr(shape, lv.name) != getattr(written, lv.name)))
