"""A launch argument's Triton signature type: a tensor's dtype, a Python scalar's kind; a Triton
dtype given as a constexpr.  Standard library only: the captured command's process spells its
launches with it (triton.capture.record)."""

from __future__ import annotations

from typing import Any

DTYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32", "float64": "fp64", "int8": "i8",
          "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "i1", "float8_e5m2": "fp8e5",
          "float8_e4m3fn": "fp8e4nv"}

DTYPE_PREFIX = "tl.dtype:"
"""A Triton dtype given as a constexpr (`dtype=tl.bfloat16`), spelled `tl.dtype:bf16`."""


def type_of(value: Any) -> str | None:
    """A Triton signature type for a launch argument (a tensor's dtype, a Python scalar), or None."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return "*" + DTYPES.get(str(dtype).rsplit(".", 1)[-1], "fp32")
    if isinstance(value, bool):
        return "i1"
    if isinstance(value, int):
        return "i32" if -2**31 <= value < 2**31 else "i64"
    if isinstance(value, float):
        return "fp32"
    return None
