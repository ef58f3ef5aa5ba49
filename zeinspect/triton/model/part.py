"""What a Triton report carries beside its figures: its typed part (JSON: `extra.triton`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...model import KernelReport


@dataclass(frozen=True)
class TritonPart:
    """What a Triton report carries beside its figures (JSON: `extra.triton`)."""

    path: str
    """DPAS or FMA: the lowering Triton chose for tl.dot on the target."""
    artifacts: dict
    """`ttgir` and `spirv`: the files kept on disk (none in a screen of many unless they are wanted:
    triton.probes.audit.files_wanted)."""
    metadata: dict
    policy: str
    loop_carried: dict | None = None
    staging: dict | None = None
    first_build: dict | None = None
    """The first build's report, where Triton's build policy rebuilt the kernel."""
    rebuilt: str | None = None
    """Which of Triton-XPU's rebuild rules fired on this target (triton.model.policy), or None."""
    intent: dict | None = None
    """What the config asked (grf_mode, warps) against what was built on this target (with_build)."""

    @property
    def spirv(self) -> str | None:
        return self.artifacts.get("spirv")

    def to_json(self) -> dict:
        out: dict[str, Any] = {"path": self.path, "artifacts": self.artifacts, "metadata": self.metadata,
                               "policy": self.policy, "loop_carried": self.loop_carried}
        if self.staging is not None:
            out["staging"] = self.staging
        if self.first_build is not None:
            out["first_build"] = self.first_build
        if self.intent is not None:
            out["intent"] = self.intent
        return out


    def with_build(self, report: KernelReport, first_build: dict | None, rebuilt: str | None) -> TritonPart:
        """This part for one target's report: the first build where Triton's policy rebuilt it, and
        what the config asked of the register file and warps against what was built there (the
        question `did my build do what I asked?`, for Triton)."""
        first = first_build or {}
        intent = {"asked": {"grf_mode": self.metadata.get("grf_mode") or "default",
                            "num_warps": self.metadata.get("num_warps"),
                            "threads_per_warp": self.metadata.get("threads_per_warp")},
                  "built": {"grf": report.grf, "simd": report.simd, "rebuilt_by": rebuilt,
                            "first_grf": first.get("grf"), "first_spill_bytes": first.get("spill_bytes")}}
        return replace(self, first_build=first_build, rebuilt=rebuilt, intent=intent)


def triton_part(report: KernelReport) -> TritonPart | None:
    """The Triton part of a report (None for reports of other probes)."""
    part = (report.extra or {}).get("triton")
    return part if isinstance(part, TritonPart) else None
