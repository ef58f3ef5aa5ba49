"""Same results, checked: run the original and the remedied kernel on the same inputs.

Where a device accepts the SPIR-V (here: the OpenCL CPU runtime through dpctl), both
modules run on the same random inputs and their outputs are compared.  Kernels opt in
with a launch description in their source:

    // zeinspect-launch fma_tile: global=64,16 local=8,2
    // zeinspect-arg fma_tile: a float[8192] random
    // zeinspect-arg fma_tile: c float[8192] output
    // zeinspect-arg fma_tile: k_total int 64

sizes in OpenCL order (dimension 0 first), one `zeinspect-arg` line per kernel argument, in order: `NAME TYPE[COUNT] INIT` for
buffers (INIT: random, zero, output (zeroed and compared), below:N for integers in
[0, N)) and `NAME TYPE VALUE` for scalars; TYPE is float, int or uint.  Without a
description, or without a device, the answer is "not executable here": equivalence is
never claimed without a run.  The run happens in a child process with a timeout, so a
runtime crash is a finding, not a dead tool (probes.equivalence); this module reads the launch
descriptions and holds the outcome, as pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LAUNCH = re.compile(r"//\s*zeinspect-launch\s+(?P<kernel>\w+)\s*:\s*global=(?P<g>[\d,]+)\s+local=(?P<l>[\d,]+)")
_ARG = re.compile(r"//\s*zeinspect-arg\s+(?P<kernel>\w+)\s*:\s*(?P<name>\w+)\s+(?P<type>float|int|uint)"
                  r"(?:\[(?P<count>\d+)\]\s+(?P<init>random|zero|output|below:\d+)|\s+(?P<value>-?[\d.eE+-]+))\s*$")
MAX_ELEMENTS = 1 << 24


@dataclass
class Launch:
    kernel: str
    global_size: list[int]
    local_size: list[int]
    args: list[dict] = field(default_factory=list)


def launches(source: str) -> dict[str, Launch]:
    out: dict[str, Launch] = {}
    for line in source.splitlines():
        m = _LAUNCH.search(line)
        if m:
            out[m["kernel"]] = Launch(m["kernel"], [int(x) for x in m["g"].split(",")],
                                      [int(x) for x in m["l"].split(",")])
            continue
        m = _ARG.search(line)
        if m and m["kernel"] in out:
            if m["count"]:
                count = int(m["count"])
                if count > MAX_ELEMENTS:
                    continue
                out[m["kernel"]].args.append({"name": m["name"], "type": m["type"], "count": count,
                                              "init": m["init"]})
            else:
                out[m["kernel"]].args.append({"name": m["name"], "type": m["type"], "value": m["value"]})
    return out


@dataclass(frozen=True)
class Equivalence:
    """The outcome of running the original and the remedied kernel on the same inputs."""

    ran: bool
    why: str | None = None
    """Why it did not run (ran False)."""
    device: str | None = None
    equal: bool | None = None
    bitwise: bool | None = None
    max_abs_diff: float | None = None
    outputs_compared: int | None = None

    @classmethod
    def from_json(cls, data: dict) -> Equivalence:
        return cls(ran=bool(data.get("ran")), **{k: data[k] for k in cls.__dataclass_fields__ if k in data and k != "ran"})

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @property
    def differs(self) -> bool:
        return self.ran and not self.equal
