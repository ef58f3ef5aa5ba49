"""`zeinspect devices`: Level Zero drivers and devices, and the SYCL devices dpctl sees.  Pure."""

from __future__ import annotations

import json

from ..model import driver_version_text
from .common import safe


def text(listing: dict) -> str:
    out = []
    if listing["level_zero"] is None:
        out.append(f"Level Zero: {listing['level_zero_error']}")
    for drv in listing["level_zero"] or []:
        out.append(f"Level Zero driver {drv['index']}: version {driver_version_text(drv['version'])}")
        for i, dev in enumerate(drv["devices"]):
            out.append(f"  device {i}: {safe(dev['name'])} (device id {dev['device_id']}, IP "
                       f"{dev['ip_version'] or 'not reported'}, sub-group sizes "
                       f"{', '.join(map(str, dev['sub_group_sizes']))}, SLM {dev['slm_bytes']} bytes)")
    if listing["sycl"] is None:
        out.append("SYCL: dpctl is not installed")
    for dev in listing["sycl"] or []:
        out.append(f"SYCL: {dev['filter']}: {safe(dev['name'])} ({dev['driver']})")
    return "".join(line + "\n" for line in out)


def dumps(listing: dict) -> str:
    return json.dumps(listing, indent=2) + "\n"
