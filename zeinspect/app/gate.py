"""A run's settings as every front end makes them, and the gate configuration they may come from.

The CLI, the pytest plugin and the Triton prune hook call `settings`: one rule (defaults <
environment < gate configuration < what the front end was given), zeinspect.settings.resolve.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..errors import UsageError
from ..judge.gate import STRUCTURE, GateConfig
from ..judge.gate import load as load_config
from ..settings import SETTINGS, SettingError, Settings, resolve
from . import plugins


def load_gate(path: str) -> GateConfig:
    """A gate configuration, with every registered source's key known to it."""
    return load_config(path, sources=plugins.SOURCES)


def settings(given: Mapping[str, Any], *, gate: str | GateConfig | None = None,
             defaults: Mapping[str, Any] | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """The run's settings: `given` (by setting name) over the gate configuration's (a path or one
    already loaded), over the environment's, over `defaults`.  A value that is not one is a
    usage error naming where it came from."""
    config = load_gate(gate) if isinstance(gate, str) else gate
    try:
        return resolve(given, config.settings if config else None, environ, defaults=defaults)
    except SettingError as exc:
        raise UsageError(str(exc)) from None


def gate_entries(gate: GateConfig, paths: tuple[str, ...] = ()) -> dict[str, tuple]:
    """Each registered source's entries in `gate` (only those whose file is among `paths`, when
    given: a pre-commit hook's changed files are what is audited)."""
    wanted = {os.path.normpath(p) for p in paths}
    out = {}
    for name, raw in gate.sources.items():
        entries = plugins.source(name).parse(raw, gate.folder, gate.path)
        out[name] = tuple(e for e in entries if not wanted or os.path.normpath(e.file) in wanted)
    return out


def gate_schema() -> dict:
    """The gate configuration's JSON Schema (docs/schemas/gate-1.json, written by
    `scripts/schemas.py`): what it audits, every run setting with a gate key (its schema and
    help, from zeinspect.settings) and every registered source's entries."""
    properties = {**STRUCTURE, **{key: s.gate_schema() for key, s in SETTINGS.gate_keys().items()},
                  **{name: source.schema or {} for name, source in plugins.SOURCES.items()}}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "gate-1.json",
            "title": "The gate configuration (`zeinspect audit --config FILE`)", "type": ["object", "null"],
            "additionalProperties": False, "properties": properties}
