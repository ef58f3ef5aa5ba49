"""The house's measures, computed rather than counted by hand (docs/contributing.md, "Layout").

    .venv/bin/python scripts/measures.py            # text
    .venv/bin/python scripts/measures.py --json

Modules and lines; import cycles (imports inside functions count: tests/unit/test_layers.py's
graph); the largest CLI module; the longest function; private names imported across modules;
and the files a new setting, a new lever and a new Triton lever touch, as the tests that add one prove it
(tests/unit/test_settings.py, tests/unit/levers/test_new_lever.py,
tests/integration/triton/test_new_triton_lever.py: each adds it from the test
file alone, so the package files touched are none and the count is that one file).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "zeinspect"
sys.path.insert(0, str(ROOT / "tests" / "unit"))

from test_layers import cycles, front_door_bypasses, import_graph, private_imports  # noqa: E402


def _functions(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    return [(node.end_lineno - node.lineno + 1, f"{path.relative_to(ROOT)}:{node.name}")
            for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno is not None]


def _touches(test: str, marker: str) -> int | None:
    """Files a new piece touches: the test that adds it, if it does so from that file alone
    (it registers the piece itself, and imports nothing written for it)."""
    path = ROOT / test
    if not path.is_file() or marker not in path.read_text():
        return None
    return 1


def measures() -> dict:
    modules = sorted(PACKAGE.rglob("*.py"))
    lines = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in modules}
    cli = {k: v for k, v in lines.items() if k.startswith("zeinspect/cli/")}
    functions = sorted((f for p in modules for f in _functions(p)), reverse=True)
    lengths = sorted(n for n, _ in functions)
    return {
        "modules": len(modules),
        "lines": sum(lines.values()),
        "largest_module": max(lines.items(), key=lambda kv: kv[1]),
        "cli_lines": sum(cli.values()),
        "largest_cli_module": max(cli.items(), key=lambda kv: kv[1]),
        "import_cycles": cycles(import_graph()),
        "private_imports": private_imports(),
        "cli_bypasses_app": front_door_bypasses(),
        "longest_function": [functions[0][1], functions[0][0]],
        "median_function_lines": lengths[len(lengths) // 2],
        "files_a_new_setting_touches": _touches("tests/unit/test_settings.py", "SETTINGS.register("),
        "files_a_new_lever_touches": _touches("tests/unit/levers/test_new_lever.py", "MODULE_LEVERS.register("),
        "files_a_new_triton_lever_touches": _touches("tests/integration/triton/test_new_triton_lever.py",
                                                     "TRITON_LEVERS.register("),
    }


def main() -> None:
    got = measures()
    if "--json" in sys.argv:
        print(json.dumps(got, indent=2))
        return
    for key, value in got.items():
        print(f"{key.replace('_', ' ')}: {value}")


if __name__ == "__main__":
    main()
