"""`devices`: the Level Zero drivers and devices, and the SYCL devices dpctl sees."""

from __future__ import annotations

from typing import Any

from ..errors import ToolchainError
from .outcome import Outcome


def listing(simulate: str | None) -> tuple[dict[str, Any], int]:
    """(the listing formats.devices prints, the exit code: 3 when no device is seen at all)."""
    from ..probes.runtime import RuntimeConfig, sycl_devices
    from ..probes.runtime import devices as ze_devices

    found: dict[str, Any] = {"level_zero": None, "level_zero_error": None, "sycl": sycl_devices()}
    try:
        found["level_zero"] = ze_devices(RuntimeConfig(simulate=simulate))["drivers"]
    except ToolchainError as exc:
        found["level_zero_error"] = str(exc)
    seen = found["level_zero"] or found["sycl"]
    return found, Outcome.of(0).exit_code if seen else Outcome.nothing_found("no device").exit_code
