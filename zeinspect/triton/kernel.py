"""What a Triton kernel request is: `FILE.py:KERNEL`, its signature, constexprs and launch options.

Offline there is no tensor to type an argument, so the signature comes from the user
(`--signature '*fp16'` for every pointer, NAME=TYPE pairs), from the kernel's own source
(an argument it loads from or stores to is a pointer: triton.source) and from defaults
(other scalars are i32, and the report says so).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..pairs import parse_pairs
from .source import pointer_arguments

__all__ = ["AutotuneConfig", "TritonKernel", "constexpr_value", "parse_pairs", "parse_spec", "signature_for"]


@dataclass(frozen=True)
class TritonKernel:
    """What to compile: `FILE.py:KERNEL` with its signature and constexpr values."""

    file: str
    kernel: str
    signature: dict
    constexprs: dict
    num_warps: int = 4
    threads_per_warp: int = 32
    grf_mode: str = "default"
    num_stages: int | None = None
    """Software pipelining depth; None: Triton's default."""

    @property
    def label(self) -> str:
        return f"{self.file}:{self.kernel}"


@dataclass(frozen=True)
class AutotuneConfig:
    """One `triton.Config` of a kernel's `@triton.autotune`, as the module builds it."""

    constexprs: dict
    num_warps: int
    num_stages: int | None
    grf_mode: str | None

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.constexprs.items()] + [f"num_warps={self.num_warps}"]
        parts += [f"num_stages={self.num_stages}"] if self.num_stages is not None else []
        parts += [f"grf_mode={self.grf_mode}"] if self.grf_mode else []
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {"constexprs": self.constexprs, "num_warps": self.num_warps, "num_stages": self.num_stages,
                "grf_mode": self.grf_mode}

    @classmethod
    def of(cls, config: Any) -> AutotuneConfig:
        """From a `triton.Config` (a `grf_mode` among its kwargs is Triton-XPU's launch option)."""
        return cls(constexprs={k: v for k, v in config.kwargs.items() if k != "grf_mode"},
                   num_warps=config.num_warps, num_stages=config.num_stages, grf_mode=config.kwargs.get("grf_mode"))

    def applied_to(self, kernel: TritonKernel) -> TritonKernel:
        return dataclasses.replace(kernel, constexprs={**kernel.constexprs, **self.constexprs},
                                   num_warps=self.num_warps, num_stages=self.num_stages,
                                   grf_mode=self.grf_mode or kernel.grf_mode)


def parse_spec(spec: str) -> tuple[str, str]:
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:KERNEL, not {spec!r}")
    return path, name


def constexpr_value(text: str) -> Any:
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def is_pointer(arg: str) -> bool:
    """Whether an argument is a pointer by its name (`a_ptr`, `out_ptr`, `X_ptr`): the
    convention of Triton's tutorials; kernels that do not follow it are read by use
    (triton.source)."""
    return "ptr" in arg.lower()


def pointers_by_use(fn: Any) -> list[str]:
    """The arguments the kernel's source loads from, stores to or builds block pointers on."""
    source = getattr(fn, "src", None)
    found = pointer_arguments(source, [p.name for p in fn.params]) if isinstance(source, str) else None
    return found or []


def signature_for(fn: Any, kernel: TritonKernel) -> tuple[dict, dict, list[str]]:
    """(signature, constexprs, notes): types as given, pointers (named *ptr*, or used as
    pointers in the source) from `*TYPE`, constexprs from --constexprs or their defaults in the
    source, other scalars i32 (said in the notes)."""
    signature, constexprs, defaulted = {}, {}, []
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
            raise UsageError(f"{kernel.label}: constexpr {arg!r} needs a value in --constexprs")
        elif arg in kernel.signature:
            signature[arg] = kernel.signature[arg]
        elif pointer and "*" in kernel.signature:
            signature[arg] = kernel.signature["*"]
        elif pointer:
            raise UsageError(f"{kernel.label}: pointer {arg!r} needs a type: --signature '*fp16' (every pointer) "
                             f"or {arg}=*TYPE")
        else:
            signature[arg] = "i32"
            defaulted.append(arg)
    notes = [f"scalar arguments typed i32 by default: {', '.join(defaulted)}"] if defaulted else []
    unnamed = [a for a in used if not is_pointer(a) and a not in kernel.signature and a not in constexprs]
    if unnamed:
        notes.append(f"pointers by use (the kernel loads from or stores to them): {', '.join(unnamed)}")
    return signature, constexprs, notes
