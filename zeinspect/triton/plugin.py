"""zeinspect.triton, registered with the core: imported (for its effect) by every front end that
may meet Triton (the CLI's triton, gate and diff commands, the pytest plugin, the prune hook).
It registers how a gate configuration's `triton:` entries are audited and fixed, Triton modules
as an input, the build policy's setting and the Triton retry field of a diff (app.plugins); it
imports no Triton, and everything else loads when it is used.  It is not the package's
__init__ so that the captured command's process (triton.capture), which imports the package,
does not load the core's settings, levers and readers with it.
"""

from __future__ import annotations

from typing import Any

from ..app import plugins
from ..hardware import TRITON_TARGETS
from ..judge.diff import PartField, register_field
from ..settings import SETTINGS
from .model import policy


def _audit(*args: Any) -> Any:
    from .app import gate_reports

    return gate_reports(*args)


def _fix(*args: Any) -> dict:
    from .app import gate_fix

    return gate_fix(*args)


def _parse(raw: Any, base: Any, path: str) -> tuple:
    from .model.gate import parse_entries

    return parse_entries(raw, base, path)


def _claims(path: str) -> bool:
    """A Triton module, a FILE.py:KERNEL spec (what `diff` builds through Triton)."""
    file = path.rpartition(":")[0] if ".py:" in path else path
    return file.endswith(".py")


def _probe(path: str, config: Any, progress: Any) -> Any:
    from .app import module_reports

    return module_reports(path, config, progress)


def _costs(collection: Any, config: Any, session: Any) -> None:
    from .probes.cost import attach_costs

    attach_costs(collection, config, session)


def _describe_fix(label: str, record: dict) -> list[str]:
    """A Triton kernel's decision, as `zeinspect fix` prints it."""
    shape = record["shape"]
    built_in = ("stage", "grf_mode", "num_warps", "threads_per_warp")
    others = "".join(f", {k} {v}" for k, v in shape.items() if k not in built_in)
    return [f"{label}: {'staged' if shape['stage'] else 'not staged'}, grf_mode {shape['grf_mode']}, "
            f"{shape['num_warps']} warps of {shape['threads_per_warp']} threads{others}",
            f"  why: {record['why']}", f"  Triton: {record['triton']}"]


def _retried(part: dict) -> bool:
    """Whether Triton's build policy rebuilt the kernel (its first build is kept beside)."""
    return bool(part.get("first_build"))


register_field(PartField(name="triton_retry", label="Triton retry", part="triton", of=_retried))
_STRINGS = {"type": ["string", "array"], "items": {"type": "string"}}
SCHEMA = {"type": "array", "description": "Triton kernels to build offline and audit (zeinspect.triton).",
          "items": {"type": "object", "required": ["kernel"], "additionalProperties": False, "properties": {
              "kernel": {"type": "string", "pattern": ".+:.+"}, "signature": {"type": "string"},
              "constexprs": {"type": "string"}, "num_warps": {"type": "integer"},
              "threads_per_warp": {"type": "integer"}, "grf_mode": {"type": "string"}, "stage": {"type": "boolean"},
              "autotune": {"type": "boolean"}, "targets": _STRINGS}}}
"""The JSON Schema of a gate configuration's `triton:` entries (triton.model.gate reads them)."""

plugins.register(plugins.GateSource(name="triton", parse=_parse, audit=_audit, fix=_fix,
                                    describe_fix=_describe_fix, schema=SCHEMA, costs=_costs))
SETTINGS.register(policy.SETTING)
plugins.register_input(plugins.InputSource(name="triton", claims=_claims, probe=_probe,
                                           default_targets=TRITON_TARGETS))
