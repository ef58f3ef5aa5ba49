"""What a failed Triton compile says, in one line: the kernel line it is on, its message, and
what the installed Triton or the Intel backend lacks."""

from __future__ import annotations

import inspect
import re
from typing import Any

_CANNOT = (
    (re.compile(r"make_tensor_descriptor|tensor_descriptor|TensorDescriptor|_experimental_descriptor"
                r"|'tensor' object has no attribute '(load|store)'"),
     "uses tensor descriptors (TMA, tl.make_tensor_descriptor), which this Triton does not have"),
    (re.compile(r"\bcuda\b|nvidia|\bptx\b|inline_asm", re.I), "uses an NVIDIA-only intrinsic"),
    (re.compile(r"\bhip\b|\bamd\b|cdna|\bmfma\b", re.I), "takes a path for AMD (CDNA) GPUs only"),
)


def compile_error_text(exc: BaseException, first_line: int | None = None) -> str:
    """Triton's compile error as one line: the kernel line it is on and its message, without the
    dozen lines of source Triton's CompilationError prints before them (the message is taken
    from the error that caused it where Triton's own is empty).  `first_line`: the kernel's
    first source line, since Triton numbers lines from there."""
    where = None
    lineno = getattr(getattr(exc, "node", None), "lineno", None) if hasattr(exc, "src") else None
    if isinstance(lineno, int):
        where = f"line {lineno + first_line - 1}" if first_line else f"line {lineno} of the kernel"
    current: BaseException | None = exc
    for _ in range(8):
        if current is None:
            break
        message = getattr(current, "error_message", None) if hasattr(current, "src") else str(current).strip()
        if message:
            return f"{where}: {message}" if where else str(message)
        current = current.__cause__
    return where or type(exc).__name__


def def_line(fn: Any) -> int | None:
    """The file line of a JIT function's `def` (Triton numbers its error lines from there: it
    drops the decorators from the source it compiles)."""
    try:
        lines, start = inspect.getsourcelines(fn.fn)
    except (AttributeError, OSError, TypeError):
        return None
    return next((start + i for i, line in enumerate(lines) if re.match(r"\s*(async\s+)?def\b", line)), None)


def classify(message: str) -> str:
    """A compile failure in one line: what the installed Triton or the Intel backend lacks."""
    text = " ".join(message.split())
    for pattern, why in _CANNOT:
        if pattern.search(text):
            return f"{why}: {text[:200]}"
    return text[:300]
