"""A module or a package at once: every @triton.jit kernel that is launched, screened.

`zeinspect triton FILE.py` and `zeinspect triton DIR/` find the kernels of each module (a
kernel another kernel calls is a helper, not launched on its own), and end each one of three
ways:
  - screened: built on every target with the values it is launched with (the user's, the
    kernel's defaults, its autotune configs, or its module's own launch: triton.load.discover);
  - a named value the user must give (`--constexprs BLOCK_SIZE=...`, `--signature '*fp16'`);
  - a one-line reason it cannot build here (what the installed Triton or the Intel backend
    does not have).
`--constexprs` and `--signature` take NAME=VALUE for every kernel and KERNEL.NAME=VALUE for one.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...app.outcome import Outcome, of_reports
from ...errors import InputError, ToolchainError, UsageError
from ...ledger import Part
from ...model import KernelReport
from ...probes.results import Collection, Progress
from ...probes.session import Session
from ...settings import Settings
from ..model.kernel import TritonKernel


@dataclass
class Unscreened:
    kernel: str
    """`FILE.py:KERNEL`"""
    reason: str
    needs: list[str] = field(default_factory=list)
    """The values the user must give, by name (empty: it cannot build here)."""

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "reason": self.reason, "needs": self.needs}

    @property
    def why(self) -> str:
        """Why it was not screened, as the ledger says it."""
        return f"needs values: {', '.join(self.needs)}" if self.needs else f"cannot build here: {self.reason}"


@dataclass
class PackageScreen:
    modules: int = 0
    screened: list[str] = field(default_factory=list)
    unscreened: list[Unscreened] = field(default_factory=list)
    collection: Collection = field(default_factory=Collection)
    load_errors: list[str] = field(default_factory=list)
    """Modules that did not load (not Python, a syntax error, a load that did not finish)."""
    profiled: Any = None
    """The reports joined with the run's profile (app.profile), when it names one."""

    @property
    def reports(self) -> list[KernelReport]:
        return self.collection.reports

    @property
    def stats(self) -> Any:
        return self.collection.stats

    @property
    def coverage(self) -> Any:
        """The ledger: every launched kernel of the modules screened, or unread with why (it
        needs values, this Triton cannot build it, its module did not load)."""
        from ...judge.coverage import account

        return account(self.collection.parts, self.reports)

    @property
    def outcome(self) -> Outcome:
        """1 when a screened kernel did not build or cannot launch, 2 when no module loaded, 3 when
        a launched kernel was left unscreened (judge.coverage)."""
        if self.load_errors and not self.modules:
            return Outcome.untrusted(self.collection.incidents, notes=self.load_errors)
        return of_reports(self.reports, self.collection.incidents + self.coverage.incidents())


def modules_under(path: Path) -> list[Path]:
    """The Triton modules of a file or a folder (those that mention triton.jit), in name order."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError("no such Triton source file or folder", path=str(path))
    found = []
    for p in sorted(path.rglob("*.py")):
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if "jit" in text and "triton" in text:
            found.append(p)
    return found


def _calls_and_returns(obj: Any) -> tuple[set[str], bool]:
    """(the names a JIT function's body calls, whether it returns a value)."""
    from ..load.module import jit_function

    try:
        tree = ast.parse(textwrap.dedent(jit_function(obj).src))
    except (SyntaxError, TypeError, ValueError):
        return set(), False
    called = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr if isinstance(n.func, ast.Attribute) else ""
              for n in ast.walk(tree) if isinstance(n, ast.Call)}
    returns = any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(tree))
    return called, returns


def launched(modules: list[Any]) -> list[list[tuple[str, Any]]]:
    """Per module, its kernels that are launched: not called by another kernel of the package,
    and returning nothing (a @triton.jit function that returns a value is a device function)."""
    kernels = [m.kernels() for m in modules]
    facts = [[_calls_and_returns(obj) for _, obj in ks] for ks in kernels]
    called = {name for per in facts for calls, _ in per for name in calls}
    return [[(name, obj) for (name, obj), (_, returns) in zip(ks, per) if name not in called and not returns]
            for ks, per in zip(kernels, facts)]


def _for_kernel(pairs: dict, kernel: str) -> dict:
    """NAME=VALUE pairs for every kernel, with KERNEL.NAME=VALUE for this one taking precedence."""
    out = {k: v for k, v in pairs.items() if "." not in k or k == "*"}
    out.update({k.split(".", 1)[1]: v for k, v in pairs.items() if "." in k and k.split(".", 1)[0] == kernel})
    return out


_NEEDS = re.compile(r"(?:constexpr|pointer) ((?:'\w+'(?:, )?)+) needs (?:a value|a type)")


def needed(message: str) -> list[str]:
    """The names a `signature_for` refusal asks the user for."""
    return [name for m in _NEEDS.finditer(message) for name in re.findall(r"'(\w+)'", m.group(1))]


def _staged(kernel: TritonKernel, label: str, config: Settings, session: Session, progress: Progress | None) -> Collection:
    """A kernel (a config of it) built again with the SLM staging pass, its rows `LABEL[staged]`."""
    from ..probes.audit import probe_triton

    staged = probe_triton(kernel, config, session, stage=True, progress=progress)
    staged.reports = [r.replace(input=f"{label}[staged]") for r in staged.reports]
    return staged


def screen_package(path: str, base: TritonKernel, config: Settings, session: Session, *,
                   progress: Progress | None = None, build: bool = True, stage: bool = False) -> PackageScreen:
    """Every launched kernel of the module or package at `path` (see the module docstring);
    with `build` off, only what each needs (nothing is compiled: `zeinspect triton --list`);
    with `stage`, each kernel (each config of an autotuned one) again with the SLM staging pass,
    a row of its own (`[staged]`), as a library's screen does (--stage on every way in)."""
    from ..build.backend import capabilities
    from ..build.modules import loaded_module, prime_launches
    from ..probes.audit import probe_triton
    from ..probes.screen import screen_autotune

    plan = session.plan(config.targets)
    first = plan.targets[0]
    caps = capabilities(plan.compiler_for_ip[first.ip], first.name)
    out = PackageScreen()
    files = modules_under(Path(path))
    prime_launches([str(f) for f in files], caps, first.name, base.threads_per_warp)
    loaded = []
    for file in files:
        try:
            loaded.append((file, loaded_module(str(file), caps, first.name, base.threads_per_warp)))
        except InputError as exc:
            out.load_errors.append(exc.one_line())
            if build:
                out.collection.parts.append(Part(path, str(file), None, DECLARED_BY, unread=exc.one_line()))
    out.modules = len(loaded)
    for (file, _), kernels in zip(loaded, launched([m for _, m in loaded])):
        for name, obj in kernels:
            kernel = dataclasses.replace(base, file=str(file), kernel=name,
                                         signature=_for_kernel(base.signature, name),
                                         constexprs=_for_kernel(base.constexprs, name))
            if not build:
                _list(out, kernel, obj, caps, first.name)
                continue
            try:
                got = Collection()
                if getattr(obj, "configs", None):
                    for n, (tuned, result) in enumerate(screen_autotune(kernel, config, session,
                                                                        progress=progress), start=1):
                        label = f"{kernel.label}[config {n}: {tuned.describe()}]"
                        got.extend(result, reports=[r.replace(input=label) for r in result.reports])
                        if stage and not tuned.unusable:
                            got.extend(_staged(tuned.applied_to(kernel), label, config, session, progress))
                else:
                    got.extend(probe_triton(kernel, config, session, stage=False, progress=progress))
                    if stage:
                        got.extend(_staged(kernel, kernel.label, config, session, progress))
            except UsageError as exc:
                needs = needed(str(exc))
                out.unscreened.append(Unscreened(kernel.label, exc.one_line().removeprefix(f"{kernel.label}: "),
                                                 needs))
                continue
            except (InputError, ToolchainError) as exc:
                out.unscreened.append(Unscreened(kernel.label, exc.one_line().removeprefix(f"{kernel.label}: ")
                                                 .removeprefix("Triton could not compile it: ")))
                continue
            out.screened.append(kernel.label)
            out.collection.extend(got)
            out.collection.parts += [Part(path, label, (name,), DECLARED_BY)
                                     for label in dict.fromkeys(r.input for r in got.reports)]
    if build:  # `--list` says what each kernel needs; it screens none
        out.collection.parts += [Part(path, u.kernel, (u.kernel.rpartition(":")[2],), DECLARED_BY, unread=u.why)
                                 for u in out.unscreened]
    return out


DECLARED_BY = "kernels the modules launch"


def _list(out: PackageScreen, kernel: TritonKernel, obj: Any, caps: dict, target: str) -> None:
    """What a kernel needs before it can be built, without building it."""
    from ..build.modules import launches
    from ..load.module import jit_function
    from ..load.signature import signature_for
    from ..model.kernel import AutotuneConfig

    configs = getattr(obj, "configs", None) or []
    tuned = AutotuneConfig.of(configs[0]).applied_to(kernel) if configs else kernel
    try:
        signature_for(jit_function(obj), tuned, lambda: launches(kernel.file, caps, target,
                                                                  kernel.threads_per_warp).get(kernel.kernel))
    except UsageError as exc:
        out.unscreened.append(Unscreened(kernel.label, exc.one_line().removeprefix(f"{kernel.label}: "),
                                         needed(str(exc))))
        return
    out.screened.append(kernel.label)
