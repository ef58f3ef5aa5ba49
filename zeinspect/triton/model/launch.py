"""How a module's own host code launches one kernel (what triton.load.discover finds)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Launch:
    """How a module's own host code launches one kernel."""

    line: int
    args: dict = field(default_factory=dict)
    """argument name -> a Triton type (`*fp16`, `i32`, `fp32`) or, for a constexpr, its value."""
    options: dict = field(default_factory=dict)

    def describe(self) -> str:
        return f"as the module's own code launches it (line {self.line})"
