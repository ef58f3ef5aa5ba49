"""The house's measures, computed rather than counted by hand (docs/contributing.md, "Layout").

    .venv/bin/python scripts/measures.py            # text
    .venv/bin/python scripts/measures.py --json

Modules and lines; import cycles (imports inside functions count: tests/unit/test_layers.py's
graph); the largest CLI module; the longest function; private names imported across modules;
and the files a new setting, a new lever and a new Triton lever touched when one was added,
read from the history (`git log`): the last commit that declared a setting, a lever or a
Triton lever that did not exist before it, and the files that commit changed.  Without the
history (a shallow clone, an export) the figure is unknown, and says so.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
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


ADDED = {
    # kind: (the call that declares one, the name in its declaration, where in the package)
    "setting": ("Setting(", r'\bSetting\(\s*"(\w+)"', "zeinspect"),
    "lever": ("Lever(", r'\bLever\(\s*name="(\w+)"', "zeinspect/levers"),
    "triton_lever": ("Lever(", r'\bLever\(\s*name="(\w+)"', "zeinspect/triton"),
}
"""The declarations whose additions are measured (a new name declared, not one moved)."""


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout


def _declared(rev: str, word: str, pattern: str, where: str) -> set[str]:
    """The names declared at revision `rev` under `where`."""
    try:
        files = _git("grep", "-l", "-F", word, rev, "--", where).split()
    except subprocess.CalledProcessError:  # nothing matches there
        return set()
    return {name for f in files for name in re.findall(pattern, _git("show", f), re.S)}


def touched_by_last_addition(kind: str) -> dict | None:
    """The last commit that declared a new `kind` (ADDED): its hash, the names it added and the
    files it changed.  None when the history is not there to read."""
    word, pattern, where = ADDED[kind]
    try:
        commits = _git("log", "--format=%H", "-G", re.escape(word), "--", where).split()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None
    for commit in commits:  # newest first
        parents = _git("rev-list", "--parents", "-n", "1", commit).split()[1:]
        before = _declared(parents[0], word, pattern, where) if parents else set()
        added = sorted(_declared(commit, word, pattern, where) - before)
        if added:
            files = [f for f in _git("show", "--format=", "--name-only", commit).splitlines() if f]
            return {"commit": commit[:10], "added": added, "files": len(files)}
    return None


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
        "files_the_last_new_setting_touched": touched_by_last_addition("setting"),
        "files_the_last_new_lever_touched": touched_by_last_addition("lever"),
        "files_the_last_new_triton_lever_touched": touched_by_last_addition("triton_lever"),
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
