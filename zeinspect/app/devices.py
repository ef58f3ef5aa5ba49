"""`devices`: the Level Zero drivers and devices, and the SYCL devices dpctl sees."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ToolchainError
from .outcome import Outcome


@dataclass(frozen=True)
class Devices:
    found: dict[str, Any]
    """The listing formats.devices prints."""

    @property
    def outcome(self) -> Outcome:
        """3 when no device is seen at all."""
        seen = self.found["level_zero"] or self.found["sycl"]
        return Outcome.of(0) if seen else Outcome.nothing_found("no device")


def listing(simulate: str | None) -> Devices:
    """The Level Zero drivers and devices, and the SYCL devices dpctl sees."""
    from ..probes.runtime import RuntimeConfig, sycl_devices
    from ..probes.runtime import devices as ze_devices

    found: dict[str, Any] = {"level_zero": None, "level_zero_error": None, "sycl": sycl_devices()}
    try:
        found["level_zero"] = ze_devices(RuntimeConfig(simulate=simulate))["drivers"]
    except ToolchainError as exc:
        found["level_zero_error"] = str(exc)
    return Devices(found)
