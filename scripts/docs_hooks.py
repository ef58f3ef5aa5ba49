"""MkDocs hooks: the pages generated from the code and from bench/ results, never typed by hand.

- `<!-- zeinspect:environment -->`: the table of zeinspect/envvars.py's registry (the run
  settings' variables among them, as zeinspect/settings.py declares them);
- `<!-- zeinspect:settings -->`: the table of the run settings (zeinspect/settings.py): each
  one's gate key, option, variable, type, default and help, declared once there;
- `<!-- zeinspect:benchmarks -->`: every bench/results/*.json a benchmark wrote (its figures,
  the command, the date and the machine);
- `<!-- zeinspect:bench NAME -->`: bench/results/NAME.json's figures in a guide, where they
  back what it says (or a line saying which script measures them, until one has run);
- `<!-- zeinspect:measures -->`: scripts/measures.py's measures of the tree.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _environment() -> str:
    import zeinspect.settings  # noqa: F401 - registers the settings' variables
    from zeinspect.envvars import ENVIRONMENT

    rows = ["| variable | type | default | what it does |", "|---|---|---|---|"]
    for var in ENVIRONMENT:
        if var.audience != "user":
            continue
        default = "" if var.default is None else f"`{var.default}`"
        setting = f" (the `{var.setting}` setting)" if var.setting else ""
        rows.append(f"| `{var.name}` | {var.type_name} | {default} | {var.help}{setting} |")
    tests = [f"`{v.name}`" for v in ENVIRONMENT if v.audience == "test"]
    return "\n".join(rows) + f"\n\nFor the project's own tests and benchmarks: {', '.join(tests)}.\n"


PIPE = "\\|"
"""A `|` inside a GFM table cell."""


def _settings() -> str:
    from zeinspect.settings import SETTINGS

    def shown(value: object) -> str:
        if value in (None, "", (), {}):
            return ""
        if isinstance(value, tuple):
            value = ",".join(map(str, value))
        return f"`{str(value).lower() if isinstance(value, bool) else value}`"

    rows = ["| setting | gate key | option | variable | type | default | what it does |",
            "|---|---|---|---|---|---|---|"]
    for s in SETTINGS:
        option = " ".join(f"`{n}`" for n in s.flag.names) if s.flag else ""
        rows.append(f"| `{s.name}` | {shown(s.gate)} | {option} | {shown(s.env)} | {s.type_name} | "
                    f"{shown(s.default) if s.name != 'shape' else ''} | {s.help.replace('|', PIPE)} |")
    return "\n".join(rows) + "\n"


def _result(path: Path, heading: str = "### ") -> str:
    """One benchmark's results file: its title, command, date, machine and table."""
    if not path.is_file():
        return (f"*Not measured yet: `.venv/bin/python bench/{path.stem}.py` writes "
                f"`bench/results/{path.name}`.*\n")
    doc = json.loads(path.read_text())
    if "rows" not in doc and path.with_suffix(".md").is_file():
        # A benchmark that writes its own tables (bench/realworld.py: realworld.md beside its JSON).
        title = f"{heading}{path.stem} (`bench/{path.stem}.py`)\n\n" if heading else ""
        return title + path.with_suffix(".md").read_text()
    out = [f"{heading}{doc.get('title', path.stem)}\n" if heading else "",
           f"`{doc.get('command', '?')}`, {doc.get('date', '?')}, on {doc.get('machine', '?')}.\n"]
    if doc.get("note"):
        out.append(doc["note"] + "\n")
    rows = doc.get("rows") or []
    if rows:
        keys = list(dict.fromkeys(k for r in rows for k in r))  # every row's columns, first seen first
        out.append("| " + " | ".join(keys) + " |")
        out.append("|" + "---|" * len(keys))
        out += ["| " + " | ".join(str(r.get(k, "")) for k in keys) + " |" for r in rows]
        out.append("")
    return "\n".join(out)


def _benchmarks() -> str:
    out = [_result(path) for path in sorted((ROOT / "bench" / "results").glob("*.json"))]
    return "\n".join(out) or "No benchmark has written its results yet (`bench/results/`).\n"


def _bench(markdown: str) -> str:
    """`<!-- zeinspect:bench NAME -->`: bench/results/NAME.json, in place, without its title."""
    return re.sub(r"<!-- zeinspect:bench (\w+) -->",
                  lambda m: _result(ROOT / "bench" / "results" / f"{m.group(1)}.json", heading=""), markdown)


def _measures() -> str:
    got = subprocess.run([sys.executable, str(ROOT / "scripts" / "measures.py")], capture_output=True, text=True,
                         check=True).stdout
    return "```\n" + got + "```\n"


MARKERS = {"<!-- zeinspect:environment -->": _environment, "<!-- zeinspect:settings -->": _settings,
           "<!-- zeinspect:benchmarks -->": _benchmarks,
           "<!-- zeinspect:measures -->": _measures}


def on_page_markdown(markdown: str, **_: object) -> str:
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return _bench(markdown)
