"""A new lever, defined and registered in this file alone, runs through every part that uses
levers: the shape search, the fix record, the gate round trip (shapes.yaml written, read back,
and the audit building each kernel in its recorded shape) and the command-line option.

The lever is IGC's optimisation level as a build option; the fake compile spills unless the
build carries it, so the search must choose it, the record must keep it and the audit must
build with it.  No other file of zeinspect knows this lever.
"""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from zeinspect.app import fix as fix_mod
from zeinspect.app.audit import AuditRequest, run
from zeinspect.app.session import open_session
from zeinspect.inputs import read_input
from zeinspect.judge import shapes_file
from zeinspect.levers import MODULE_LEVERS, Shape
from zeinspect.levers.base import BuildOptions, CliOption, How, Lever
from zeinspect.model import Verdict
from zeinspect.settings import Settings

from ..fakes import FAKE_COMPILER, FakeBackend, figures

SPIRV = "tests/fuzz/corpus/spirv/clean"  # one kernel, saxpy, no required sub-group size
OPTION = "-ze-opt-level=1"

OPT_LEVEL = Lever(
    name="opt_level", how=How.BUILD_OPTION, default="default", settings=lambda written: ("default", "1"),
    cost=lambda value, written: int(value != "default"), describe=lambda value: f"optimisation level {value}",
    parse=str, build_options=lambda compiler, value: BuildOptions(options=OPTION if value == "1" else ""),
    cli=CliOption("--opt-level", ("default", "1"), "IGC's optimisation level."),
)


@pytest.fixture
def lever(monkeypatch, tmp_path):
    # What zeinspect would have learnt of the fake compiler's register-file spellings.
    known = tmp_path / "toolchains"
    known.mkdir()
    (known / "levers.json").write_text(json.dumps({
        f"{FAKE_COMPILER.id}|256": {"options": "-ze-opt-large-register-file", "internal_options": "", "note": None},
        f"{FAKE_COMPILER.id}|auto": {"options": "", "internal_options": "-ze-intel-enable-auto-large-GRF-mode",
                                     "note": None}}))
    monkeypatch.setenv("ZEINSPECT_TOOLCHAIN_DIR", str(known))
    MODULE_LEVERS.register(OPT_LEVEL)
    yield OPT_LEVEL
    MODULE_LEVERS.unregister(OPT_LEVEL.name)


def _backend(seen: list):
    def answer(job):
        seen.append(job.options)
        return [figures("saxpy", spill=0 if OPTION in job.options else 512)]

    return lambda: FakeBackend(answer)


def test_the_new_lever_is_searched_recorded_read_back_and_audited(lever, tmp_path):
    seen: list[str] = []
    config = Settings(targets=("dg2-g10",), use_cache=False)
    session = open_session(config, compilers=[FAKE_COMPILER], backend=_backend(seen))
    plan = session.plan()

    result = fix_mod.fix_inputs([read_input(SPIRV)], config, session, plan)
    [decision] = result.decisions
    # The search walked the new lever's settings and chose the one that cleans the kernel.
    assert {row.shape.opt_level for row in decision.search.rows} == {"default", "1"}
    assert decision.shape.opt_level == "1" and decision.cleans

    written = tmp_path / "shapes.yaml"
    fix_mod.write(result, str(written), plan, config, session)
    assert "opt_level: '1'" in written.read_text()
    [(module, chosen)] = shapes_file.load(str(written)).items()
    assert chosen["saxpy"] == decision.shape and chosen["saxpy"].opt_level == "1"

    seen.clear()
    ratchet = tmp_path / "ratchet.txt"
    ratchet.write_text("")
    audit_settings = Settings(targets=("dg2-g10",), targets_given=True, shapes_file=str(written),
                              ratchet=str(ratchet), use_cache=False)
    audited = run(AuditRequest(audit_settings, paths=(SPIRV,)), session=open_session(audit_settings, backend=_backend(seen)))
    assert seen and all(OPTION in options for options in seen)
    assert [j.verdict for j in audited.result.judgements] == [Verdict.CLEAN]


def test_the_new_lever_is_a_command_line_option(lever):
    from zeinspect.cli.common import probe_options

    got = {}

    @click.command()
    @probe_options
    def probe(compile, shape, as_json):
        got["shape"] = shape

    assert "--opt-level" in CliRunner().invoke(probe, ["--help"]).output
    assert CliRunner().invoke(probe, ["--opt-level", "1"]).exit_code == 0
    assert got["shape"] == Shape(opt_level="1") and got["shape"].grf == "default"
