"""`zeinspect diff` on real builds: the corpus against itself, under Debian 12's IGC 1.0 and the
current IGC, with two option strings, and from saved documents; bad input.

Every figure a diff prints for a side must be the figure `inspect --json` reports for that
side on its own (the diff adds no figure of its own making).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import KERNELS

TARGETS = "tgllp,dg2-g10"
FIGURES = {"status": "status", "spill_bytes": "spill_bytes", "private_bytes": "private_bytes", "grf": "grf",
           "simd": "simd", "code_bytes": "code_bytes"}


def _inspect(cli, compiler, tmp_path, name, *extra):
    code, doc = cli.json("inspect", KERNELS, "-t", TARGETS, "--compiler", compiler.id, *extra)
    assert code in (0, 1)
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return doc, path


def _by_identity(doc):
    return {(r["kernel"], r["target"]): r for r in doc["reports"]}


def _entries(doc):
    return {(e["identity"]["kernel"], e["identity"]["target"]): e for e in doc["entries"]}


def test_a_build_against_itself_is_the_same_everywhere(cli, sid_compiler, tmp_path):
    code, doc = cli.json("diff", KERNELS, KERNELS, "-t", TARGETS, "--compiler", sid_compiler.id)
    assert code == 0, doc
    assert doc["entries"] and all(e["change"] == "same" and not e["changed"] for e in doc["entries"])
    saved, path = _inspect(cli, sid_compiler, tmp_path, "self.json")
    # A saved document against the input it came from: the same, nothing compiled for the
    # document's side.
    code, doc = cli.json("diff", path, KERNELS, "--compiler", sid_compiler.id)
    assert code == 0 and len(doc["entries"]) == len({(r["kernel"], r["target"]) for r in saved["reports"]})


def test_two_compilers_every_difference_with_the_figures_of_each(cli, sid_compiler, debian_compiler, tmp_path):
    old, old_path = _inspect(cli, debian_compiler, tmp_path, "old.json")
    new, new_path = _inspect(cli, sid_compiler, tmp_path, "new.json")
    code, built = cli.json("diff", KERNELS, "--compiler", debian_compiler.id, "--compiler", sid_compiler.id,
                           "-t", TARGETS)
    assert code in (0, 1), built
    code_saved, saved = cli.json("diff", old_path, new_path)
    assert code_saved == code
    # The two ways give the same entries: the build and the saved documents agree.
    assert _entries(built).keys() == _entries(saved).keys()
    assert [(e["change"], e["why"]) for e in built["entries"]] == [(e["change"], e["why"]) for e in saved["entries"]]
    before, after = _by_identity(old), _by_identity(new)
    assert set(_entries(built)) == set(before) & set(after)
    for key, e in _entries(built).items():
        for side, reports in (("old", before), ("new", after)):
            r = reports[key]
            for field, source in FIGURES.items():
                assert e[side][field] == (r[source] if r[source] is not None else "n/a"), (key, side, field)
            if r["occupancy"]:
                assert e[side]["threads_per_eu"] == r["occupancy"]["threads_per_eu"]
        differs = [f for f in FIGURES if e["old"][f] != e["new"][f]]
        assert set(differs) <= set(e["changed"])
        scratch = [e[s]["scratch_bytes"] for s in ("old", "new")]
        if all(isinstance(x, int) for x in scratch) and scratch[1] > scratch[0]:
            assert e["change"] in ("worse",)
    assert built["compilers"] == {"old": [debian_compiler.id], "new": [sid_compiler.id]}


def test_the_large_register_file_costs_threads_and_is_a_regression(cli, sid_compiler):
    kernel = KERNELS / "fma_tile.cl"
    code, doc = cli.json("diff", kernel, "--options", "", "--options", "-cl-intel-256-GRF-per-thread", "-t",
                         "dg2-g10", "--compiler", sid_compiler.id)
    assert code == 1, doc
    (e,) = doc["entries"]
    assert e["old"]["grf"] == 128 and e["new"]["grf"] == 256
    assert e["change"] == "worse" and f"threads per EU {e['old']['threads_per_eu']} -> {e['new']['threads_per_eu']}" \
        in e["why"] and e["new"]["threads_per_eu"] < e["old"]["threads_per_eu"]
    res = cli("diff", kernel, "--options", "", "--options", "-cl-intel-256-GRF-per-thread", "-t", "dg2-g10",
              "--compiler", sid_compiler.id, "--format", "markdown")
    assert res.code == 1 and res.out.startswith("**zeinspect diff**: 1 kernel-target pairs compared: 1 worse")


def test_build_time_and_retries_are_compared_from_each_sides_own_record(cli, sid_compiler, tmp_path):
    """Each side's compile times and IGC's retries, as each side's own JSON records them: the
    diff's build totals are those records added up (saved documents and live builds alike)."""
    kernel = KERNELS / "fma_tile.cl"
    sides = []
    for name, grf in (("old", "default"), ("new", "256")):
        _, doc = cli.json("kernel", kernel, "--grf", grf, "-t", "bmg-g21,dg2-g10", "--compiler", sid_compiler.id)
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
        sides.append(doc)
    _, diffed = cli.json("diff", tmp_path / "old.json", tmp_path / "new.json")
    for name, doc in zip(("old", "new"), sides):
        assert diffed["build"][name]["retries"] == sum(t["retries"] for t in doc["compile_times"])
        assert diffed["build"][name]["seconds"] == pytest.approx(sum(t["seconds"] for t in doc["compile_times"]), 1e-3)
        for t in doc["compile_times"]:
            assert diffed["build"]["targets"][t["target"]][name]["retries"] == t["retries"]
    # The premise, from IGC's own log: the 128-register build is retried, the 256-register one less.
    assert diffed["build"]["old"]["retries"] > diffed["build"]["new"]["retries"]
    changed = {e["identity"]["target"]: e for e in diffed["entries"] if "retries" in e["changed"]}
    assert changed and all(e["old"]["retries"] != e["new"]["retries"] for e in changed.values())
    text = cli("diff", tmp_path / "old.json", tmp_path / "new.json").out
    assert f"IGC retries {diffed['build']['old']['retries']} -> {diffed['build']['new']['retries']}" in text


def test_documents_of_another_schema_version_and_targets_compare_their_overlap(cli, sid_compiler, tmp_path):
    doc, path = _inspect(cli, sid_compiler, tmp_path, "a.json")
    other = dict(doc, schema="zeinspect.report/2",
                 reports=[r for r in doc["reports"] if r["target"] == "dg2-g10" and r["kernel"] != "saxpy"])
    (tmp_path / "b.json").write_text(json.dumps(other))
    code, got = cli.json("diff", path, tmp_path / "b.json")
    assert code == 0, got
    assert got["only_old_targets"] == ["tgllp"] and any("schemas differ" in n for n in got["notes"])
    assert {e["identity"]["kernel"] for e in got["entries"] if e["change"] == "removed"} == {"saxpy"}


@pytest.mark.parametrize("content, words", [
    ('{"schema": "zeinspect.report/1", "reports": [', "is not a complete JSON document"),
    ('{"schema": "something.else/1"}', "is not a zeinspect report or audit document"),
    ("\x00\x01", "is not a"),
])
def test_bad_documents_are_one_line_and_exit_2(cli, tmp_path, content, words):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    res = cli("diff", bad, bad)
    assert res.code == 2 and words in res.err and str(bad) in res.err and "Traceback" not in res.err
    assert len(res.err.strip().splitlines()) == 1


def test_a_library_with_no_images_cannot_be_compared(cli, tmp_path):
    host = tmp_path / "libnothing.so"
    libz = next(p for p in (Path("/lib/x86_64-linux-gnu/libz.so.1"), Path("/usr/lib/x86_64-linux-gnu/libz.so.1"))
                if p.exists())
    host.write_bytes(libz.read_bytes())  # a real shared library with no device image
    res = cli("diff", host, host, "-t", "dg2-g10")
    assert res.code == 2 and "Traceback" not in res.err and len(res.err.strip().splitlines()) == 1


def test_explain_names_the_line_whose_spill_traffic_grew_with_each_sides_own_counts(cli, sid_compiler,
                                                                                      debian_compiler):
    kernel = KERNELS / "sg32_accumulate.cl"
    res = cli("diff", kernel, "--compiler", debian_compiler.id, "--compiler", sid_compiler.id, "-t", "tgllp",
              "--explain")
    assert res.code in (0, 1), res
    lines = [x for x in res.out.splitlines() if "line that changed most:" in x]
    if res.code == 0:
        assert not lines
        return
    (line,) = lines
    place, _, counts = line.split("line that changed most: ", 1)[1].partition(": ")
    number = int(place.rsplit(":", 1)[1])
    before, after = (int(x) for x in counts.split(" spill/fill")[0].split(" -> "))
    assert after > before
    for compiler, expected in ((debian_compiler, before), (sid_compiler, after)):
        _, doc = cli.json("explain", kernel, "-t", "tgllp", "--compiler", compiler.id)
        (report,) = doc["reports"]
        got = sum(x["spills"] + x["fills"] for x in report["lines"] if x["line"] == number)
        assert got == expected, compiler.id
