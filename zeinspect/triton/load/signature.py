"""A kernel's signature and constexprs, as a request gives them and the module's source and launch
complete them.

Offline there is no tensor to type an argument, so the signature comes from the user
(`--signature '*fp16'` for every pointer, NAME=TYPE pairs), from the kernel's own source (an
argument it loads from or stores to is a pointer: triton.load.source), from the module's own
launch (triton.load.discover) and from defaults (other scalars are i32, and the report says so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...errors import UsageError
from ..model.kernel import TritonKernel, constexpr_value, is_pointer
from ..model.launch import Launch
from .source import pointer_arguments


def pointers_by_use(fn: Any) -> list[str]:
    """The arguments the kernel's source loads from, stores to or builds block pointers on."""
    source = getattr(fn, "src", None)
    found = pointer_arguments(source, [p.name for p in fn.params]) if isinstance(source, str) else None
    return found or []


def _launched_type(launch: Launch | None, arg: str, pointer: bool) -> str | None:
    """The Triton type the module's own launch passes for `arg`, if it agrees on pointerness."""
    typed = launch.args.get(arg) if launch is not None else None
    return typed if isinstance(typed, str) and typed.startswith("*") == pointer else None


def signature_for(fn: Any, kernel: TritonKernel, launch: Callable[[], Launch | None] = lambda: None
                  ) -> tuple[dict, dict, list[str]]:
    """(signature, constexprs, notes): types as given, pointers (named *ptr*, or used as
    pointers in the source) from `*TYPE`, constexprs from --constexprs or their defaults in the
    source; what is still open from the module's own launch of the kernel (`launch`, asked only
    then); other scalars i32 (each said in the notes)."""
    signature, constexprs, defaulted, launched = {}, {}, [], []
    missing_values, missing_types = [], []
    used = pointers_by_use(fn)
    for param in fn.params:
        arg = param.name
        pointer = arg in used or is_pointer(arg)
        if arg in kernel.constexprs:
            signature[arg] = "constexpr"
            value = kernel.constexprs[arg]
            constexprs[arg] = constexpr_value(value) if isinstance(value, str) else value
        elif param.is_constexpr and param.has_default:
            signature[arg], constexprs[arg] = "constexpr", param.default
        elif param.is_constexpr:
            found = launch()
            if found is None or arg not in found.args:
                missing_values.append(arg)
                continue
            signature[arg], constexprs[arg] = "constexpr", found.args[arg]
            launched.append(f"{arg}={found.args[arg]!r}")
        elif arg in kernel.signature:
            signature[arg] = kernel.signature[arg]
        elif pointer and "*" in kernel.signature:
            signature[arg] = kernel.signature["*"]
        elif (typed := _launched_type(launch(), arg, pointer)) is not None:
            signature[arg] = typed
            launched.append(f"{arg}: {typed}")
        elif pointer:
            missing_types.append(arg)
        else:
            signature[arg] = "i32"
            defaulted.append(arg)
    if missing_values or missing_types:
        said = []
        if missing_values:
            said.append(f"constexpr {', '.join(repr(a) for a in missing_values)} needs a value: --constexprs "
                        f"{','.join(f'{a}=...' for a in missing_values)} (no default, no autotune config sets it, "
                        "and the module's own code does not launch the kernel)")
        if missing_types:
            said.append(f"pointer {', '.join(repr(a) for a in missing_types)} needs a type: --signature '*fp16' "
                        f"(every pointer) or {missing_types[0]}=*TYPE")
        raise UsageError(f"{kernel.label}: " + "; ".join(said))
    notes = [f"scalar arguments typed i32 by default: {', '.join(defaulted)}"] if defaulted else []
    if launched:
        notes.append(f"{', '.join(launched)}: {launch().describe()}")  # type: ignore[union-attr]
    unnamed = [a for a in used if not is_pointer(a) and a not in kernel.signature and a not in constexprs]
    if unnamed:
        notes.append(f"pointers by use (the kernel loads from or stores to them): {', '.join(unnamed)}")
    return signature, constexprs, notes
