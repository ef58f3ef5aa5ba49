"""What a Triton report carries beside its figures: its typed part (JSON: `extra.triton`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...model import KernelReport


@dataclass(frozen=True)
class TritonPart:
    """What a Triton report carries beside its figures (JSON: `extra.triton`)."""

    path: str
    """DPAS or FMA: the lowering Triton chose for tl.dot on the target."""
    artifacts: dict
    """`ttgir` and `spirv`: the files kept on disk."""
    metadata: dict
    policy: str
    loop_carried: dict | None = None
    staging: dict | None = None
    first_build: dict | None = None
    """The first build's report, where Triton's build policy rebuilt the kernel."""

    @property
    def spirv(self) -> str:
        return self.artifacts["spirv"]

    def to_json(self) -> dict:
        out: dict[str, Any] = {"path": self.path, "artifacts": self.artifacts, "metadata": self.metadata,
                               "policy": self.policy, "loop_carried": self.loop_carried}
        if self.staging is not None:
            out["staging"] = self.staging
        if self.first_build is not None:
            out["first_build"] = self.first_build
        return out


def triton_part(report: KernelReport) -> TritonPart | None:
    """The Triton part of a report (None for reports of other probes)."""
    part = (report.extra or {}).get("triton")
    return part if isinstance(part, TritonPart) else None
