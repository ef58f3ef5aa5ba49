"""Examples that run: every `$ zeinspect ...` command in the README and the docs site runs here,
against this repository's kernels/ (in a copy, so that `fix --write` writes nothing of ours),
and must end as the page shows: its first output line, each table header line it shows, and
an exit code of 0 or 1 (2 and 3 would be an error the page does not show).  Output shown
without a `$` command line is an illustration (a library that is not part of this repository).

The site itself builds in strict mode in `make test` (Makefile), before this tier runs.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
COPIED = ("kernels", "ratchet", "scratch_ratchet.txt", "tests/kernels")


@dataclass
class Example:
    page: str
    line: int
    command: str
    output: list[str]

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def examples() -> list[Example]:
    found = []
    for page in PAGES:
        lines = page.read_text().splitlines()
        i = 0
        while i < len(lines):
            m = re.match(r"^(\s*)\$ (zeinspect .*)$", lines[i])
            if not m:
                i += 1
                continue
            indent, command, start = m.group(1), m.group(2), i + 1
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            i += 1
            output = []
            while i < len(lines) and lines[i].startswith(indent) and lines[i].strip() and \
                    not lines[i].strip().startswith("$ "):
                output.append(lines[i][len(indent):])
                i += 1
            found.append(Example(str(page.relative_to(ROOT)), start, command, output))
    return found


EXAMPLES = examples()


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("docs")
    for name in COPIED:
        source = ROOT / name
        target = where / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy(source, target)
    return where


def _words(line: str) -> list[str]:
    return line.split()


def test_the_pages_have_examples():
    assert len(EXAMPLES) >= 5 and any(e.page == "README.md" for e in EXAMPLES)


_RUNS: dict[str, subprocess.CompletedProcess] = {}
"""A command two pages show runs once."""


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.id for e in EXAMPLES])
def test_each_example_runs_as_shown(cli, sandbox, example):
    if example.command not in _RUNS:
        argv = ["bash", "-c", example.command.replace("zeinspect ", f"{' '.join(map(str, cli_prefix()))} ", 1)]
        _RUNS[example.command] = subprocess.run(argv, capture_output=True, text=True, cwd=sandbox, env=cli.env,
                                                timeout=1200)
    res = _RUNS[example.command]
    assert res.returncode in (0, 1), f"{example.id}: exit {res.returncode}: {res.stderr[-500:]}"
    shown = [line for line in example.output if line.strip() and line.strip() != "..."]
    if not shown:
        return
    got = res.stdout.splitlines()
    assert got and _words(got[0]) == _words(shown[0]), f"{example.id}: first line\n{got[:1]}\n{shown[:1]}"
    for header in (line for line in shown if re.match(r"^\s*(kernel|target|#)\s{2,}", line)):
        assert any(_words(line) == _words(header) for line in got), f"{example.id}: no line {header!r}"


def cli_prefix() -> list[str]:
    import sys

    return [sys.executable, "-m", "zeinspect"]
