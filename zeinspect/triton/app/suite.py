"""`pytest --zeinspect-triton`: a Triton library's own test suite as the capture's command, gated.

The suite runs in pytest's process (and in each xdist worker) with the capture installed
(triton.capture): every kernel a test launches is recorded as Triton specialized it, and
nothing is compiled or run on a device, so the suite needs no Intel GPU (a CPU build of torch
does).  When the session ends, pytest's main process screens each specialization on the
targets (triton.app.library) and judges the reports against the ratchet as `zeinspect audit` does
(app.audit.judge_collection).  The terminal summary shows the table and the findings.

The session's exit status is the gate's: 0 when it passes, 1 when it fails, and 5 (pytest's
"nothing collected") when no test launched a Triton kernel, since a gate that saw nothing must
not pass.  Errors of the suite itself (collection, fixtures) keep pytest's own status.

A test whose assertion failed is reported as xfailed, with the reason: its kernels were
captured, not run, so their outputs are not results.  The summary counts them.

`--zeinspect-fix` runs the fix loop of `triton --run --fix` on the gated builds with a finding and
shows its groups in the summary (`--zeinspect-fix-write FILE`: its records); the gate is unchanged.
`--zeinspect-lever NAME=VALUE` (stage=1, grf_mode=256, num_warps=8, ...: the Triton levers, as
`zeinspect triton` takes them) gates the suite's kernels as the project builds them: each
captured specialization is rebuilt from its IR with the levers applied, and those builds are
judged (the specializations as launched are not: the levers are the project's build).  A lever
that cannot apply (the staging pass on a kernel without a large FMA dot) says so in its row.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from ...settings import Settings
from ..capture import record as capture
from ..capture.record import CAPTURE_ENV

NOT_RUN = "zeinspect --zeinspect-triton: the test's kernels were captured, not run; its outputs are not results"
NOTHING_LAUNCHED = 5
"""pytest's own status for a session that had nothing to run (ExitCode.NO_TESTS_COLLECTED)."""


def levers_given(items: tuple[str, ...]) -> tuple[bool, dict[str, Any]]:
    """(stage, launch options) from `--zeinspect-lever NAME=VALUE` items; UsageError naming the
    item that is not one."""
    from ...errors import UsageError
    from ...levers import How
    from ...settings import FALSE_WORDS, TRUE_WORDS
    from ..model.levers import TRITON_LEVERS

    stage, launch = False, {}
    for item in items:
        name, eq, text = item.partition("=")
        lever = TRITON_LEVERS.get(name.strip())
        if not eq or lever is None:
            raise UsageError(f"--zeinspect-lever {item!r}: NAME=VALUE, NAME one of "
                             f"{', '.join(lv.name for lv in TRITON_LEVERS)}")
        try:
            if lever.how is How.TTGIR_PASS:
                if text.strip().lower() not in TRUE_WORDS + FALSE_WORDS:
                    raise ValueError("expected true or false")
                stage = text.strip().lower() in TRUE_WORDS
            else:
                launch[lever.name] = lever.dump(lever.parse(text.strip()))
        except ValueError as exc:
            raise UsageError(f"--zeinspect-lever {item!r}: {exc}") from None
    return stage, launch


class TritonSuite:
    """The pytest plugin object `--zeinspect-triton` registers (zeinspect.pytest_plugin)."""

    def __init__(self, settings: Settings, *, worker: bool, levers: tuple[str, ...] = (), fix: bool = False,
                 records: str | None = None) -> None:
        self.settings = settings
        self.worker = worker
        self.stage, self.launch = levers_given(levers)
        if records and not fix:
            from ...errors import UsageError

            raise UsageError("--zeinspect-fix-write records the fix loop: give --zeinspect-fix with it")
        self.fix, self.records = fix, records
        """--zeinspect-fix: the fix loop on the gated builds with a finding (triton.app.library.fixes_of),
        shown in the summary; the gate judges the builds as they are.  --zeinspect-fix-write: its records."""
        self.folder: tempfile.TemporaryDirectory | None = None
        self.screen: Any = None
        self.run: Any = None
        self.not_judged = 0
        self.problem = ""
        """Why the screen could not be made (exit status 4), or ""."""
        self.session: Any = None
        """The suite's one build session (pytest's main process): the capture's target, the screen
        and its costs."""
        self.saved: dict[str, str | None] = {}
        """The caller's values of the variables the capture sets, restored at the end."""

    def start(self) -> None:
        """In pytest's main process: where the launches go and what the driver answers for, in
        the environment (xdist's workers start after this and inherit it); then the capture."""
        if not self.worker:
            from ...app.session import open_session
            from ..sources.run import capture_environment
            from .library import capture_target

            self.session = open_session(self.settings)
            self.folder = tempfile.TemporaryDirectory(prefix="zeinspect-suite-")
            env = capture_environment(Path(self.folder.name), capture_target(self.settings, self.session))
            self.saved = {name: os.environ.get(name) for name in env}
            os.environ.update(env)
        capture.install()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self) -> Any:
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" and report.failed:
            report.outcome = "skipped"
            report.wasxfail = NOT_RUN
            self.not_judged += 1

    def pytest_sessionfinish(self, session: Any, exitstatus: int) -> None:
        capture.uninstall()
        if self.worker or self.folder is None:
            return
        from ...app.audit import judge_collection
        from ..probes.cost import attach_costs
        from ..sources.launches import read_launches
        from .library import Levered, screen_captured

        out = Path(os.environ[CAPTURE_ENV])
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        lines = out.read_text(errors="replace").splitlines() if out.exists() else []
        got = read_launches(["pytest", *session.config.invocation_params.args], int(exitstatus), False, lines)
        from ...errors import ZeinspectError

        try:
            self.screen = screen_captured(got, self.settings, self.session,
                                          levered=Levered(self.stage, self.launch, levered_only=True, fix=self.fix,
                                                          records=self.records))
        except ZeinspectError as exc:  # a records file of other targets or compilers: the user's to fix
            self.problem = exc.one_line()
            session.exitstatus = pytest.ExitCode.USAGE_ERROR
            return
        self.run = judge_collection(self.screen.collection, self.settings, costs=attach_costs, session=self.session)
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return  # the suite itself did not run as it should: pytest's status stands
        if not got.specializations:
            session.exitstatus = NOTHING_LAUNCHED
        else:
            session.exitstatus = self.run.outcome.exit_code

    def levers_line(self) -> str:
        """The levers the gated builds were made with, and where the staging pass could not apply."""
        from ..model.part import triton_part

        given = ", ".join([*(["staged"] if self.stage else []), *(f"{k}={v}" for k, v in self.launch.items())])
        line = f"gated as built with the levers given: {given}"
        if self.stage:
            staging = {r.input + r.kernel: (part.staging or {}).get("changed") for r in self.screen.collection.reports
                       if (part := triton_part(r)) is not None}
            unchanged = sum(1 for changed in staging.values() if not changed)
            line += (f"; the staging pass changed {len(staging) - unchanged} of {len(staging)} specializations"
                     + (f" ({unchanged} have no large FMA dot to stage: built as launched)" if unchanged else ""))
        return line

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.problem:
            terminalreporter.write_line(f"zeinspect: error: {self.problem}")
        if self.worker or self.screen is None:
            return
        from ...formats.audit import text
        from ..views import library_text

        tr = terminalreporter
        tr.section("zeinspect: the Triton kernels the suite launched")
        tr.write(library_text(self.screen))
        if self.stage or self.launch:
            tr.write_line(self.levers_line())
        if not self.screen.source.specializations:
            tr.write_line("no test launched a Triton kernel: nothing was gated (exit status 5)")
        else:
            totals = self.run.coverage.totals() if self.run.coverage is not None else {}
            tr.write(text(self.run.result, strict=self.settings.strict,
                          unread=totals.get("unread", 0) + totals.get("unread_parts", 0)))
            for line in self.run.coverage.incidents() if self.run.coverage is not None else []:
                tr.write_line(f"unread: {line}")
        if self.not_judged:
            tests = "test" if self.not_judged == 1 else "tests"
            tr.write_line(f"{self.not_judged} failed {tests} reported as xfailed: their kernels were captured, not run")
        if self.folder is not None:
            self.folder.cleanup()
