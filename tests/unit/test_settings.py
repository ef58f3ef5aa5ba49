"""One settings record, resolved by one rule: defaults < environment < gate configuration <
command line (or the pytest plugin's options), and a setting added in one file reaches a
compile, its cache key, the gate configuration and the plugin with no other file changed
(as tests/unit/levers/test_new_lever.py proves for levers).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import zeinspect.triton.plugin  # noqa: F401 - registers its settings (the build policy) as any user's run does
from zeinspect import envvars
from zeinspect.app.audit import AuditRequest, run
from zeinspect.app.gate import settings as front_end_settings
from zeinspect.app.session import open_session
from zeinspect.inputs import read_input
from zeinspect.judge.gate import parse as parse_gate
from zeinspect.model import IntentRule, Verdict
from zeinspect.probes.aot import probe
from zeinspect.settings import SETTINGS, Builds, Flag, Setting, SettingError, Settings, resolve

from .fakes import FAKE_COMPILER, FakeBackend, figures
from .test_layers import parsed

PACKAGE = Path(__file__).resolve().parents[2] / "zeinspect"
SPIRV = "tests/fuzz/corpus/spirv/clean"


def test_the_command_line_wins_over_the_gate_which_wins_over_the_environment():
    environ = {"ZEINSPECT_TIMEOUT": "30", "ZEINSPECT_SCHEDULER": "tcp://env:1", "ZEINSPECT_CACHE_URL": "/env"}
    assert resolve({}, {}, {}).timeout is None  # the default
    assert resolve({}, {}, environ).timeout == 30.0
    gate = {"timeout": 40.0, "scheduler": "tcp://gate:1"}
    got = resolve({}, gate, environ)
    assert (got.timeout, got.scheduler, got.cache_url) == (40.0, "tcp://gate:1", "/env")
    got = resolve({"timeout": 50, "cache_url": "/cli"}, gate, environ)
    assert (got.timeout, got.scheduler, got.cache_url) == (50.0, "tcp://gate:1", "/cli")


def test_saying_nothing_keeps_what_is_below():
    got = resolve({"targets": (), "options": "", "compiler": None, "cache_readonly": None},
                  {"targets": ("tgllp",), "options": "-DX", "compiler": "26.27", "cache_readonly": True}, {})
    assert (got.targets, got.options, got.compiler, got.cache_readonly) == (("tgllp",), "-DX", "26.27", True)
    assert got.targets_given  # named by the gate configuration


def test_defaults_of_a_command_are_the_lowest_layer():
    got = resolve({}, {}, {}, defaults={"targets": ("arl-s", "bmg-g21")})
    assert got.targets == ("arl-s", "bmg-g21") and not got.targets_given
    assert resolve({"targets": ["dg2-g10,lnl-m"]}, {}, {}).targets == ("dg2-g10", "lnl-m")


def test_the_compilers_environment_is_inherited_then_the_gates_then_the_command_lines():
    environ = {"IGC_VISAOptions": "-a", "IGC_ExtraOCLOptions": "-b", "PATH": "/bin", "HOME": "/root",
               "SYCL_PROGRAM_COMPILE_OPTIONS": "-c", "SetCommandStreamReceiver": "1"}
    got = resolve({"environment": ["IGC_ExtraOCLOptions=-cli", "IGC_VISAOptions="]},
                  {"environment": {"IGC_ExtraOCLOptions": "-gate", "IGC_ForceOCLSIMDWidth": "16"}}, environ)
    # PATH, HOME and a NEO key without NEOReadDebugKeys change no build; `NAME=` drops a variable.
    assert dict(got.environment) == {"IGC_ExtraOCLOptions": "-cli", "IGC_ForceOCLSIMDWidth": "16",
                                     "SYCL_PROGRAM_COMPILE_OPTIONS": "-c"}
    assert got.environment_given == ("IGC_ExtraOCLOptions", "IGC_ForceOCLSIMDWidth", "IGC_VISAOptions")
    # What reaches ocloc: not the SYCL runtime's variables (they act through an image's options).
    assert dict(got.compiler_environment) == {"IGC_ExtraOCLOptions": "-cli", "IGC_ForceOCLSIMDWidth": "16"}
    neo = resolve({}, {}, {"NEOReadDebugKeys": "1", "SetCommandStreamReceiver": "1", "PATH": "/bin"})
    assert dict(neo.environment) == {"NEOReadDebugKeys": "1", "SetCommandStreamReceiver": "1"}


@pytest.mark.parametrize("given, where", [({"environment": ["NOEQUALS"]}, "the command line"),
                                          ({"timeout": 0}, "the command line")])
def test_a_value_that_is_not_one_names_its_setting_and_source(given, where):
    with pytest.raises(SettingError) as err:
        resolve(given, {}, {})
    assert where in str(err.value)


def test_a_bad_gate_value_names_the_file_and_the_key():
    from zeinspect.errors import InputError

    with pytest.raises(InputError) as err:
        parse_gate(b"environment: [12]\n", "ratchet/gate.yaml")
    assert "ratchet/gate.yaml" in err.value.one_line() and "'environment'" in err.value.one_line()


def test_the_gate_configuration_gives_the_environment():
    gate = parse_gate(b"environment:\n  IGC_ExtraOCLOptions: -ze-opt-large-register-file\n", "gate.yaml")
    got = front_end_settings({}, gate=gate, environ={})
    assert dict(got.environment) == {"IGC_ExtraOCLOptions": "-ze-opt-large-register-file"}


def test_the_environment_reaches_every_compile_and_its_cache_key():
    seen = []
    backend = FakeBackend(lambda job: seen.append(job) or [figures("saxpy")])
    plain = Settings(targets=("dg2-g10",), use_cache=False)
    under = resolve({"targets": ("dg2-g10",), "environment": ["IGC_ExtraOCLOptions=-x"]}, {}, {})
    for config in (plain, under):
        session = open_session(config, compilers=[FAKE_COMPILER], backend=lambda: backend)
        got = probe([read_input(SPIRV)], config.replace(use_cache=False), session)
        assert got.reports and all(r.environment == config.compiler_environment for r in got.reports)
    assert [j.environment for j in seen] == [(), (("IGC_ExtraOCLOptions", "-x"),)]
    assert seen[0].key != seen[1].key
    assert seen[1].process_environment["IGC_ExtraOCLOptions"] == "-x"


def test_no_module_reads_the_environment_at_import_time():
    """Module-level code (outside functions and classes' methods) never touches os.environ."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        body = list(parsed(path).body)
        for node in body:
            if isinstance(node, ast.ClassDef):
                body += node.body  # a class body runs at import time; its methods do not
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or (
                    isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):  # code, not a docstring
                continue
            text = ast.unparse(node)
            if "os.environ" in text or "os.getenv" in text or "envvars.value(" in text:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert found == []


def test_every_variable_the_package_reads_is_declared_once():
    read = set()
    for path in PACKAGE.rglob("*.py"):
        read |= set(re.findall(r"\bZEINSPECT_[A-Z_]+\b", path.read_text()))
    declared = {v.name for v in envvars.ENVIRONMENT}
    assert read - declared == set()
    assert len(declared) == len(envvars.ENVIRONMENT)
    for setting in SETTINGS:
        assert setting.env is None or setting.env in declared


# --- A setting added from this file alone ---------------------------------------------------

OPT_LEVEL = Setting("opt_level", None, "IGC's optimisation level for every compile.", str, gate="opt_level",
                    flag=Flag(("--opt-level",)), builds=lambda value: Builds(options=f"-ze-opt-level={value}" if value else ""))


@pytest.fixture
def setting():
    SETTINGS.register(OPT_LEVEL)
    yield OPT_LEVEL
    SETTINGS.unregister(OPT_LEVEL.name)


def test_a_new_setting_reaches_a_compile_the_cache_key_the_gate_and_the_plugin(setting, tmp_path, monkeypatch):
    seen = []
    backend = FakeBackend(lambda job: seen.append(job) or [figures("saxpy")])

    # The gate configuration knows its key, and the command line wins over it.
    gate = parse_gate(b"opt_level: '1'\ntargets: dg2-g10\n", "gate.yaml")
    from_gate = front_end_settings({}, gate=gate, environ={})
    from_cli = front_end_settings({"opt_level": "2"}, gate=gate, environ={})
    assert (from_gate.get("opt_level"), from_cli.get("opt_level")) == ("1", "2")

    # It reaches every compile, so its cache key.
    for config in (Settings(targets=("dg2-g10",)), from_gate, from_cli):
        session = open_session(config, compilers=[FAKE_COMPILER], backend=lambda: backend)
        probe([read_input(SPIRV)], config.replace(use_cache=False), session)
    assert [j.options for j in seen] == ["", "-ze-opt-level=1", "-ze-opt-level=2"]
    assert len({j.key for j in seen}) == 3

    # The gate's audit builds with it.
    seen.clear()
    ratchet = tmp_path / "ratchet.txt"
    ratchet.write_text("")
    audit_settings = from_gate.replace(ratchet=str(ratchet), use_cache=False)
    audited = run(AuditRequest(audit_settings, paths=(SPIRV,)),
                  session=open_session(audit_settings, backend=lambda: backend))
    assert [j.verdict for j in audited.result.judgements] == [Verdict.CLEAN]
    assert seen and all("-ze-opt-level=1" in j.options for j in seen)

    # The command line has its option (from the registry, as every compiling command).
    from zeinspect.cli.common import compile_options

    got = {}

    @click.command()
    @compile_options
    def command(compile):
        got["settings"] = compile.config()

    assert CliRunner().invoke(command, ["--opt-level", "3"]).exit_code == 0
    assert got["settings"].get("opt_level") == "3"

    # The pytest plugin resolves the same way.
    from zeinspect import pytest_plugin

    monkeypatch.setattr(pytest_plugin, "_OPTIONS", {"environment": ["IGC_X=1"], "set": ["opt_level=4"]})
    request = pytest_plugin._request([SPIRV], targets="dg2-g10", ratchet=ratchet)
    assert request.settings.get("opt_level") == "4" and dict(request.settings.environment)["IGC_X"] == "1"
    assert "-ze-opt-level=4" in request.settings.options_for(SPIRV)
    monkeypatch.setenv("IGC_Y", "2")
    assert dict(pytest_plugin._request([SPIRV]).settings.environment)["IGC_Y"] == "2"
    assert json.dumps(request.settings.targets) == '["dg2-g10"]'


# --- Every setting, declared once, given every way it can be -----------------------------------

EXAMPLES = {
    # setting: (the text a command line, a variable or --zeinspect-set gives, the value it is)
    "targets": ("dg2-g10,lnl-m", ("dg2-g10", "lnl-m")),
    "compiler": ("26.27", "26.27"),
    "options": ("-DTILE=8", "-DTILE=8"),
    "modules": ("k.cl=-DTILE=8", {"k.cl": "-DTILE=8"}),
    "shape": ("grf=256,sub_group=16", None),  # a Shape: checked below
    "kernels": ("fma_*,clean", ("fma_*", "clean")),
    "jobs": ("4", 4),
    "timeout": ("120", 120.0),
    "use_cache": ("false", False),
    "scheduler": ("tcp://host:8786", "tcp://host:8786"),
    "cache_url": ("/srv/cache", "/srv/cache"),
    "cache_readonly": ("true", True),
    "environment": ("IGC_ExtraOCLOptions=-x", (("IGC_ExtraOCLOptions", "-x"),)),
    "jit_paths": ("false", False),
    "intent": ('{"chunk_*": {"grf": 256, "native_on": "bmg-g21"}}',
               (IntentRule("chunk_*", grf=256, native_on=("bmg-g21",)),)),
    "ratchet": ("ratchet.txt", "ratchet.txt"),
    "shapes_file": ("shapes.yaml", "shapes.yaml"),
    "strict": ("true", True),
    "cost": ("true", True),
    "loop_bound": ("0", 0),
    "batch": ("0", False),
    "multi": ("off", False),
    "share_front_end": ("no", False),
    "triton_workers": ("3", 3),
    "triton_artifacts": ("1", True),
    "profile": ("trace.json", "trace.json"),
    "time_share_bound": ("5", 5.0),
    "triton_policy": ("native", "native"),  # registered by zeinspect.triton.plugin (imported above)
}


def _expected(name: str):
    from zeinspect.levers import Shape

    return Shape(grf="256", sub_group=16) if name == "shape" else EXAMPLES[name][1]


def test_every_setting_has_an_example():
    """A new core setting must say here what text gives it (and so be tested every way below)."""
    assert set(EXAMPLES) == {s.name for s in SETTINGS}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_setting_parses_the_text_given_by_the_plugin(name, monkeypatch):
    """`pytest --zeinspect-set NAME=TEXT`: every setting takes the text form."""
    from zeinspect import pytest_plugin

    text = EXAMPLES[name][0]
    monkeypatch.setattr(pytest_plugin, "_OPTIONS", {"set": [f"{name}={text}"]})
    assert pytest_plugin._request([SPIRV]).settings.get(name) == _expected(name)


@pytest.mark.parametrize("name", sorted(s.name for s in SETTINGS if s.env))
def test_every_setting_with_a_variable_is_given_by_it(name):
    setting = SETTINGS[name]
    assert resolve({}, {}, {setting.env: EXAMPLES[name][0]}).get(name) == _expected(name)


@pytest.mark.parametrize("name", sorted(s.name for s in SETTINGS if s.flag))
def test_every_setting_with_an_option_is_given_by_it(name):
    from zeinspect.cli.common import compile_options
    from zeinspect.settings import GROUPS

    setting = SETTINGS[name]
    got = {}

    @click.command()
    @compile_options(groups=tuple(GROUPS))
    def command(compile):
        got["settings"] = compile.config()

    flag = setting.flag.names[-1]
    args = [flag] if setting.flag.switch is not None else [flag, EXAMPLES[name][0]]
    res = CliRunner().invoke(command, args)
    assert res.exit_code == 0, res.output
    assert got["settings"].get(name) == _expected(name)
    # Its help on the command line is the setting's own sentence.
    assert setting.help.split()[0] in CliRunner().invoke(command, ["--help"]).output


@pytest.mark.parametrize("name", sorted(s.name for s in SETTINGS if s.gate))
def test_every_setting_with_a_gate_key_is_given_by_it(name):
    setting = SETTINGS[name]
    text = EXAMPLES[name][0]
    if name == "modules":
        body = "modules:\n  k.cl: {options: -DTILE=8}\n"
    else:
        body = f"{setting.gate}: {json.dumps(text)}\n"
    gate = parse_gate(body.encode(), "gate.yaml")
    expected = _expected(name)
    if name in ("ratchet", "shapes_file", "profile"):
        expected = text  # relative to the configuration's folder, here the current one
    assert front_end_settings({}, gate=gate, environ={}).get(name) == expected


@pytest.mark.parametrize("name, text", [("jobs", "four"), ("jobs", "300"), ("timeout", "0"), ("strict", "maybe"),
                                        ("loop_bound", "-1"), ("shape", "grf=512"), ("modules", "no-equals")])
def test_a_text_that_is_no_value_is_an_error_naming_the_setting(name, text):
    with pytest.raises(SettingError) as err:
        resolve({name: text}, {}, {})
    assert name in str(err.value) and "the command line" in str(err.value)


def test_the_gate_schema_is_generated_from_the_settings():
    """docs/schemas/gate-1.json is what the settings, the configuration's own keys and the
    registered sources declare (scripts/schemas.py writes it); its keys are the gate keys."""
    from zeinspect.app import plugins
    from zeinspect.app.gate import gate_schema
    from zeinspect.judge.gate import STRUCTURE

    published = json.loads((PACKAGE.parent / "docs" / "schemas" / "gate-1.json").read_text())
    assert published == gate_schema()
    keys = set(published["properties"]) - set(STRUCTURE) - set(plugins.SOURCES)
    assert keys == set(SETTINGS.gate_keys())
    for key, setting in SETTINGS.gate_keys().items():
        assert published["properties"][key]["description"] == setting.help


def test_the_variables_of_the_settings_are_declared_with_them():
    for setting in SETTINGS:
        if setting.env:
            var = envvars.BY_NAME[setting.env]
            assert (var.setting, var.help, var.default) == (setting.name, setting.help, setting.default)
