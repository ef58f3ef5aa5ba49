#!/usr/bin/env python3
"""Write the JSON Schemas that are generated from the code: docs/schemas/gate-1.json, from the
run settings (zeinspect.settings.SETTINGS), what a gate configuration audits and the registered
sources (app.gate.gate_schema).  `--check` writes nothing and exits 1 when the file differs
(tests/unit/test_settings.py checks the same).

Usage: .venv/bin/python scripts/schemas.py [--check]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import zeinspect.triton.plugin  # noqa: E402,F401 - registers the gate's `triton:` entries
from zeinspect.app.gate import gate_schema  # noqa: E402

GATE = ROOT / "docs" / "schemas" / "gate-1.json"


def text() -> str:
    return json.dumps(gate_schema(), indent=2) + "\n"


def main() -> int:
    if "--check" in sys.argv[1:]:
        if GATE.read_text() != text():
            print(f"{GATE.relative_to(ROOT)} is not what the settings declare: run scripts/schemas.py", file=sys.stderr)
            return 1
        return 0
    GATE.write_text(text())
    print(f"wrote {GATE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
