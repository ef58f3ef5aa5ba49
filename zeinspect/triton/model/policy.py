"""Triton-XPU's own build policy: when it builds a kernel a second time, with 256 registers.

Read from triton-xpu 3.3.0b1 (`backends/intel/driver.c`, `compiler.py`): at load time
(`jit`) a kernel built without a register-file flag whose spillMemSize is over 1,000 bytes
is built again with the large register file; in the native-code path (`native`,
TRITON_XPU_GEN_NATIVE_CODE) any "spilled" in ocloc's log without the large-GRF flag does
the same.  `first` reports the first build only.
"""

from __future__ import annotations

import enum

from ...model import KernelReport, Status
from ...settings import Flag, Setting, Settings

LARGE_GRF_FLAG = "-cl-intel-256-GRF-per-thread"
GRF_FLAGS = (LARGE_GRF_FLAG, "-cl-intel-128-GRF-per-thread", "-cl-intel-enable-auto-large-GRF-mode")
LOAD_SPILL_LIMIT = 1000


class BuildPolicy(enum.StrEnum):
    JIT = "jit"
    """Triton's load-time rule (the default: what a user's process ends with)."""
    NATIVE = "native"
    """The native-code path's rule."""
    FIRST = "first"
    """The first build only."""


BUILD_POLICIES = tuple(p.value for p in BuildPolicy)


def policy_of(config: Settings) -> BuildPolicy:
    """The run's build policy (the `triton_policy` setting, which zeinspect.triton.plugin registers)."""
    return BuildPolicy(config.get(SETTING.name))


SETTING = Setting(
    "triton_policy", BuildPolicy.JIT, "The build of a Triton kernel to report: the one Triton-XPU ends with when it "
    "loads the kernel (jit), in its native-code path (native), or its first build only (first).", BuildPolicy,
    flag=Flag(("--build-policy",), ("triton",), metavar="|".join(BUILD_POLICIES)))
"""Triton's build policy as a run setting: every screen reads it from the settings it is given."""


def policy_rebuilds(policy: BuildPolicy | str, flags: str, report: KernelReport) -> str | None:
    """Which of Triton-XPU's rebuild rules fires for this first build, or None."""
    policy = BuildPolicy(policy)
    if report.status is not Status.OK:
        return None
    if policy is BuildPolicy.JIT and not any(f in flags for f in GRF_FLAGS) and \
            (report.spill_bytes or 0) > LOAD_SPILL_LIMIT:
        return (f"Triton's load-time rule: {report.spill_bytes} bytes of spill at {report.grf} registers, over "
                f"{LOAD_SPILL_LIMIT}, and no register-file flag: rebuilt with {LARGE_GRF_FLAG}")
    if policy is BuildPolicy.NATIVE and LARGE_GRF_FLAG not in flags and (
            report.log_spilled_regs is not None or any("spilled" in line for line in report.log)):
        return f"Triton's native-code rule: ocloc's log says the kernel spilled: rebuilt with {LARGE_GRF_FLAG}"
    return None
