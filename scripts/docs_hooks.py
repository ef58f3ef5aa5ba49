"""MkDocs hooks: the pages generated from the code and from bench/ results, never typed by hand.

- `<!-- zeinspect:environment -->`: the table of zeinspect/envvars.py's registry (the run
  settings' variables among them, as zeinspect/settings.py declares them);
- `<!-- zeinspect:settings -->`: the table of the run settings (zeinspect/settings.py): each
  one's gate key, option, variable, type, default and help, declared once there;
- `<!-- zeinspect:benchmarks -->`: every bench/results/*.json a benchmark wrote (its figures,
  the command, the date and the machine);
- `<!-- zeinspect:bench NAME -->`: bench/results/NAME.json's figures in a guide, where they
  back what it says (or a line saying which script measures them, until one has run);
- `<!-- zeinspect:measures -->`: scripts/measures.py's measures of the tree;
- `<!-- zeinspect:package-map -->`: every module of the package, from the tree itself: its path
  and its docstring's first sentence, zeinspect.triton's floors in their order (so the map
  cannot go stale: a module added, moved or removed changes it).
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


def _first_sentence(path: Path) -> str:
    import ast

    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    paragraph = " ".join(doc.split("\n\n")[0].split())
    end = re.search(r"(?<=\.)\s", paragraph)
    text = paragraph[:end.start()] if end else paragraph
    return text.replace("|", PIPE) or "*(no docstring)*"


def _package_map() -> str:
    import ast

    package = ROOT / "zeinspect"
    tree = ast.parse((package / "triton" / "__init__.py").read_text())
    floors = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                  and any(getattr(t, "id", None) == "FLOORS" for t in n.targets))

    def order(path: Path) -> tuple:
        parts = path.relative_to(package).parts
        floor = parts[1].removesuffix(".py") if parts[0] == "triton" and len(parts) > 1 else None
        if floor in floors:
            return (parts[0], floors.index(floor), parts[1:])
        if parts[0] == "triton":
            return (parts[0], len(floors), parts[1:])
        return (parts[0] if len(parts) > 1 else "", 0, parts)

    rows = ["| module | what it is |", "|---|---|"]
    for path in sorted(package.rglob("*.py"), key=order):
        if path.name == "_ze.py" or (path.name == "__init__.py" and not path.read_text().strip()):
            continue
        name = path.relative_to(ROOT).as_posix()
        rows.append(f"| `{name}` | {_first_sentence(path)} |")
    return "\n".join(rows) + "\n"


MARKERS = {"<!-- zeinspect:package-map -->": _package_map, "<!-- zeinspect:environment -->": _environment,
           "<!-- zeinspect:settings -->": _settings,
           "<!-- zeinspect:benchmarks -->": _benchmarks,
           "<!-- zeinspect:measures -->": _measures}


def on_page_markdown(markdown: str, **_: object) -> str:
    for marker, make in MARKERS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return _bench(markdown)
