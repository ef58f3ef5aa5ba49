"""Markdown that renders: a pull-request comment of a diff and an audit, read back through a
CommonMark renderer with GFM's tables (markdown-it-py), shows each kernel's name as it is:
no entity (`&lt;`) and no escape (`\\|`) left visible, a `|` in a name never a new column."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from zeinspect.formats.common import md_code, md_text
from zeinspect.formats.labels import labels
from zeinspect.judge import ratchet
from zeinspect.judge.audit import audit
from zeinspect.levers import DEFAULT_SHAPE
from zeinspect.model import KernelReport, Source, Status

from ..judge.test_diff import _Run, report, run

RENDERER = MarkdownIt("commonmark").enable("table")
NAMES = ["GemmCuteName<cutlass::half_t, C<64>>", "k|with|pipes", "a`tick", "``", "x & y <b> *not em* _no_"]


def cells(markdown: str) -> list[list[str]]:
    """The table rows as a reader sees them: each cell's visible text (code spans' content as is)."""
    rows, row = [], None
    for token in RENDERER.parse(markdown):
        if token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            rows.append(row)
        elif token.type == "inline" and row is not None:
            row.append("".join(c.content for c in token.children or []))
    return rows


@pytest.mark.parametrize("name", NAMES)
def test_a_code_span_in_a_table_shows_the_name_as_it_is(name):
    rows = cells(f"| kernel | x |\n|---|---|\n| {md_code(name)} | {md_text(name)} |\n")
    assert rows[1] == [name, name]


def test_the_diffs_comment_renders_every_name_as_it_is():
    names = ["GemmCuteName<cutlass::half_t, C<64>>", "k|pipe<int>", "Fwd<a, b>"]
    old = [report(n) for n in names]
    new = [report(n, spill=256) for n in names]
    md = _diff_markdown(old, new)
    assert "&lt;" not in md
    shown = [row[0] for row in cells(md) if row and row[0] and row[0] != "kernel" and row[0] != "family"]
    for n in names:
        assert any(n.split("<")[0] in s for s in shown), (n, shown)
    assert not any("&lt;" in s or "\\|" in s for row in cells(md) for s in row)
    for row in cells(md):
        assert len(row) == len(cells(md)[0]) or len(row) in (3, 5)  # a `|` in a name never adds a column


def test_the_audits_markdown_renders_every_finding():
    from zeinspect.formats.audit import markdown

    names = ["Kernel<cutlass::half_t, C<64>>", "odd|name", "plain"]
    reports = [KernelReport(input="lib.so", kernel=n, target="bmg-g21", ip="20.1.0", compiler=None,
                            shape=DEFAULT_SHAPE, status=Status.OK, source=Source.BINARY, spill_bytes=512,
                            private_bytes=0) for n in names]
    result = audit(reports, ratchet.Ratchet(path="r.txt", dialect=ratchet.Dialect.NATIVE), [])
    md = markdown(result, strict=False)
    rows = cells(md)
    assert rows[0] == ["kernel", "target", "verdict", "scratch", "finding"]
    assert sorted(r[0] for r in rows[1:]) == sorted(labels(names).values())  # the labels, as a table shows them
    assert "Kernel<half_t, C<64>>" in [r[0] for r in rows]
    assert all(len(r) == 5 for r in rows) and all(r[2] == "FAIL: NEW" for r in rows[1:])
    assert "&lt;" not in md and md.startswith("**zeinspect audit**: gate failed (3 findings)")


def _diff_markdown(old, new) -> str:
    from zeinspect.formats import diff as diff_fmt

    return diff_fmt.markdown(_Run(run(old, new)))
