"""Shared test fixtures: the real compilers of both generations and a CLI runner.

Two tiers, laid out as the package is (tests/<tier>/<layer>/test_<module>.py):
  tests/unit/         pure code with fakes of the executor and the compiler; seconds
                      (`make unit`);
  tests/integration/  the real ocloc/IGC of both generations, Level Zero, Triton and dpctl,
                      marked `integration` here (`make test` runs both tiers).

Tests run the installed `zeinspect` command in a subprocess, as a user would, and
compare what it prints with what the compilers themselves wrote (zebins, logs).
`make test` sets ZEINSPECT_REQUIRE_TOOLCHAINS=1: a missing compiler is then a failure,
not a skip, so CI cannot pass by testing nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def realworld() -> Path:
    """The shared real-world modules (Triton's tutorials, ...): $ZEINSPECT_REALWORLD, else
    ../shared/realworld beside this checkout, else the machine's /work/shared/realworld (a
    clone elsewhere, as CI's may be, still tests on the real modules in place)."""
    for candidate in (os.environ.get("ZEINSPECT_REALWORLD"), ROOT.parent / "shared" / "realworld",
                      "/work/shared/realworld"):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return ROOT.parent / "shared" / "realworld"


KERNELS = ROOT / "kernels"
ZEINSPECT = [sys.executable, "-m", "zeinspect"]

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "bench"))  # bench/wheels.py: real libraries from the package index

# The sample project is run by test_pytest_plugin in its own pytest process.
collect_ignore = ["sample_project"]


# The test files that take longest (the sum of their tests' durations, `--durations=0`,
# 2026-12-02), longest first.  `make test` runs two workers a file at a time with
# `--no-loadscope-reorder`, so the files start in this order and the rest after them: a long
# file never starts last and leaves the other worker idle (xdist's own order is by the number
# of tests, which put the single-test files of a minute or more at the end).
LONG_FIRST = ("integration/probes/test_triton.py", "integration/probes/test_aot.py",
              "integration/probes/test_runtime.py", "integration/judge/test_shapes.py",
              "integration/judge/test_gate.py", "integration/probes/test_dask_executor.py",
              "integration/probes/test_executor.py", "integration/probes/test_triton_modules.py",
              "integration/test_precommit.py", "integration/triton/test_tutorials.py",
              "integration/probes/test_multi.py", "integration/test_shared_cache.py", "integration/test_cli.py")
SLOW_LONG_FIRST = ("integration/triton/test_inductor_templates.py", "integration/triton/test_inductor.py",
                   "integration/triton/test_run_front_end.py", "integration/triton/test_from_cache.py",
                   "integration/inputs/test_sycl_cache.py")
"""The same for `make slow` (its tests' `--durations=0` of 2026-12-07, longest first): ranks its
slow tests only, so that `make test` keeps LONG_FIRST's order."""


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    unit = here / "unit"
    for item in items:
        if unit not in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.integration)
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    slow_rank = {name: i for i, name in enumerate(SLOW_LONG_FIRST)}

    def weight(item) -> int:
        ranks = slow_rank if item.get_closest_marker("slow") else rank
        try:
            rel = Path(str(item.fspath)).resolve().relative_to(here).as_posix()
        except ValueError:
            return len(ranks)
        return ranks.get(rel, len(ranks))

    items.sort(key=weight)  # stable: the order within a file, and of the other files, is kept


def _require() -> bool:
    return os.environ.get("ZEINSPECT_REQUIRE_TOOLCHAINS") == "1"


def _compilers():
    from zeinspect.toolchain.compilers import discover

    return discover()


@pytest.fixture(scope="session")
def all_compilers():
    return _compilers()


def generation(compiler) -> str:
    """"current" (ocloc 24 and later: IGC 2.x) or "debian" (Debian 12's ocloc 22.43, IGC 1.0)."""
    return "current" if int(compiler.ocloc_version.split(".")[0]) >= 24 else "debian"


def _pick(wanted: str):
    return next((c for c in _compilers() if generation(c) == wanted), None)


@pytest.fixture(scope="session")
def sid_compiler():
    c = _pick("current")
    if c is None:
        if _require():
            pytest.fail("the current compiler stack is missing: run `zeinspect toolchain fetch`")
        pytest.skip("no current compiler stack (zeinspect toolchain fetch)")
    return c


@pytest.fixture(scope="session")
def debian_compiler():
    c = _pick("debian")
    if c is None:
        if _require():
            pytest.fail("Debian 12's ocloc is missing: apt-get install intel-opencl-icd")
        pytest.skip("no Debian 12 ocloc")
    return c


@pytest.fixture(params=["current", "debian"])
def compiler(request):
    """Each test using this runs once per compiler generation."""
    return request.getfixturevalue("sid_compiler" if request.param == "current" else "debian_compiler")


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory):
    """One build cache for the whole run, as in one process: under pytest-xdist the workers
    share it (their temporary folders have a common parent), so a module's compiles serve the
    other modules whichever worker runs them.  The cache is safe under concurrent writers
    (content-addressed entries written by rename); tests that count compiles use their own."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    path = root / "zeinspect-cache"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture(scope="session", autouse=True)
def _oracle_builds_kept_for_the_run(session_cache):
    """The oracle's plain builds, kept beside the session's cache (tests/oracle.py, MEMO)."""
    import oracle

    oracle.MEMO = session_cache.parent / "oracle-builds"
    oracle.MEMO.mkdir(exist_ok=True)
    yield
    oracle.MEMO = None


@pytest.fixture(scope="session", autouse=True)
def _builds_in_the_session_cache(session_cache):
    """Code the tests run in-process builds into the session's cache too, never the user's:
    every run starts as cold as CI's, and a developer's cache is left alone."""
    before = os.environ.get("ZEINSPECT_CACHE_DIR")
    os.environ["ZEINSPECT_CACHE_DIR"] = str(session_cache)
    yield
    if before is None:
        os.environ.pop("ZEINSPECT_CACHE_DIR", None)
    else:
        os.environ["ZEINSPECT_CACHE_DIR"] = before


class Cli:
    def __init__(self, env: dict):
        self.env = env

    def __call__(self, *args, env: dict | None = None, cwd: str | None = None, timeout: float = 1800):
        full_env = dict(self.env)
        if env:
            full_env.update(env)
        proc = subprocess.run([*ZEINSPECT, *map(str, args)], capture_output=True, text=True, env=full_env,
                              cwd=cwd or str(ROOT), timeout=timeout)
        return Result(proc.returncode, proc.stdout, proc.stderr)

    def json(self, *args, **kw):
        res = self(*args, "--json", **kw)
        assert res.code in (0, 1), res.err
        return res.code, json.loads(res.out)


class Result:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def __repr__(self):
        return f"Result(code={self.code}, err={self.err[-400:]!r})"


def _clean_environ() -> dict:
    """The test run's environment without a variable that changes what a compiler builds (an
    IGC_ flag a developer exported must not change what the tests see)."""
    from zeinspect.toolchain.environment import kind_of

    return {k: v for k, v in os.environ.items() if kind_of(k, os.environ) is None}


@pytest.fixture
def cli(session_cache):
    """The zeinspect CLI with the session's build cache (shared, so repeated compiles are cheap)."""
    env = _clean_environ()
    env["ZEINSPECT_CACHE_DIR"] = str(session_cache)
    env.pop("ZEINSPECT_OCLOC", None)
    env["PYTHONPATH"] = str(ROOT)
    return Cli(env)


@pytest.fixture
def fresh_cli(tmp_path):
    """The CLI with an empty build cache of its own."""
    env = _clean_environ()
    env["ZEINSPECT_CACHE_DIR"] = str(tmp_path / "cache")
    env.pop("ZEINSPECT_OCLOC", None)
    env["PYTHONPATH"] = str(ROOT)
    return Cli(env)
