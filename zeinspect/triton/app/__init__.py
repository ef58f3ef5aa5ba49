"""The Triton use cases: `zeinspect triton`, and a gate configuration's `triton:` entries.

Triton's door: `request` turns what the command line gave into a `TritonRequest` for one of
the four ways in (a kernel, FILE.py:KERNEL; the kernels a module or folder launches; what a
command launches, `--run`; what a Triton cache holds, `--from-cache`), and `screen_request`
screens it (one kernel through triton.app.single.screen).  `gate_reports` and `gate_fix` are what app.plugins
calls for a gate configuration's entries.  Triton's build policy is a run setting
(triton.model.policy.SETTING), read from the settings by every screen.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import UsageError
from ...judge.shapes_file import load_section
from ...ledger import Part
from ...levers.base import How
from ...probes.results import STOPPED_COST, Collection, Progress
from ...probes.session import Session
from ...settings import Settings
from ..judge import record
from ..model.gate import TritonEntry
from ..model.kernel import TritonKernel, parse_pairs
from ..model.levers import TRITON_LEVERS, TritonShape
from ..model.request import Asked, TritonRequest, Way
from ..probes.audit import probe_triton
from ..probes.screen import screen_autotune
from .fix import search_triton
from .single import screen

ASKED_OF_A_KERNEL = {"autotune": "--autotune", "explain": "--explain", "list_only": "--list",
                     "artifacts": "--artifacts"}
"""The options only a FILE.py:KERNEL (or FILE.py, DIR) screen takes, by their name in `given`."""


def request(spec: tuple[str, ...], settings: Settings, given: Mapping[str, Any]) -> TritonRequest:
    """What `zeinspect triton` was asked: `given`, the command line's options by name (signature,
    constexprs, run, cache_dir, autotune, fix, explain, artifacts, list_only, run_timeout), and
    each Triton lever's value as `lever_NAME` (triton.model.levers.TRITON_LEVERS: the launch
    options and the staging pass)."""
    levers = {k.removeprefix("lever_"): v for k, v in given.items() if k.startswith("lever_") and v is not None}
    run, cache_dir = bool(given.get("run")), given.get("cache_dir")
    # Launch options not given are as the module's own code launches the kernel (triton.load.discover),
    # or as a cache entry or a capture recorded it.
    launch = {lv.name: lv.dump(lv.parse(levers[lv.name])) for lv in TRITON_LEVERS.of(How.TRITON_OPTION)
              if lv.name in levers}
    stage = bool(levers.get("stage"))
    if run or cache_dir is not None:
        if cache_dir is not None and (spec or run):
            raise UsageError("--from-cache DIR takes no FILE, DIR or --run")
        if run and not spec:
            raise UsageError("--run needs a command after `--`")
        flags = [flag for name, flag in ASKED_OF_A_KERNEL.items() if given.get(name)]
        if flags:
            raise UsageError(f"{', '.join(flags)} apply to FILE.py:KERNEL (or FILE.py, DIR); with "
                             f"{'--from-cache' if cache_dir is not None else '--run'} each specialization is screened "
                             "as recorded, with --stage, --fix and the launch options (--num-warps, --grf-mode, ...) "
                             "applied")
        records, ratchet_to = given.get("write_to"), given.get("ratchet_to")
        if (records or ratchet_to) and not given.get("fix"):
            raise UsageError("--write and --ratchet-lines record what --fix finds: give --fix")
        return TritonRequest(Way.CACHE if cache_dir is not None else Way.RUN, settings,
                             command=(cache_dir,) if cache_dir is not None else tuple(spec),
                             run_timeout=given.get("run_timeout"),
                             asked=Asked(stage=stage, fix=bool(given.get("fix")), records=records,
                                         ratchet_to=ratchet_to), launch=launch)
    if given.get("write_to") or given.get("ratchet_to"):
        raise UsageError("--write and --ratchet-lines record --fix on --run or --from-cache; for FILE.py:KERNEL, "
                         "`zeinspect fix --config GATE` records a gate's Triton kernels")
    if len(spec) != 1:
        raise UsageError("give one FILE.py:KERNEL, FILE.py or DIR (or --run -- CMD ARGS..., or --from-cache DIR)")
    path, sep, name = spec[0].rpartition(":")
    if not sep or not path or Path(spec[0]).exists():
        path, name = spec[0], ""
    kernel = TritonKernel(file=path, kernel=name, signature=parse_pairs(given.get("signature") or "", "signature"),
                          constexprs=parse_pairs(given.get("constexprs") or "", "constexprs"),
                          options_given=frozenset(launch)).with_options(launch)
    if name and stage and given.get("autotune"):
        raise UsageError("--stage with --autotune: --fix tries the staging pass on each config with a finding (or "
                         "screen one config staged, giving its values with --constexprs and the launch options)")
    if not name and given.get("fix"):
        raise UsageError("--fix searches the levers of one kernel: give FILE.py:KERNEL (with --autotune for each of "
                         "its configs), or --run / --from-cache for what a library launches")
    artifacts = given.get("artifacts")
    asked = Asked(autotune=bool(given.get("autotune")), fix=bool(given.get("fix")), stage=stage,
                  explain=bool(given.get("explain")), artifacts=Path(artifacts) if artifacts else None)
    return TritonRequest(Way.KERNEL if name else Way.MODULE, settings, kernel, asked=asked,
                         list_only=bool(given.get("list_only")))


def screen_request(req: TritonRequest, *, progress: Progress | None = None, session: Session | None = None) -> Any:
    """The request screened its way: a TritonResult (KERNEL), a PackageScreen (MODULE) or a
    LibraryScreen (RUN, CACHE); each carries its outcome, and triton.views renders it; with
    `cost` (--cost), its scratch users' loop traffic (triton.probes.cost); with the run's profile
    (--profile), its reports joined with it (`profiled`).  One build session serves the whole
    command (`session`, or one opened here): the screen, the capture's target and the costs."""
    from ...app.profile import profiled
    from ...app.session import open_session

    session = session or open_session(req.settings)
    got = _screened(req, session, progress)
    if req.settings.cost and not req.list_only:
        from ..probes.cost import attach_costs

        for collection in _collections(got):
            if collection.stopped:  # a stopped run ends now: its costs are compiles of their own
                collection.notes.append(STOPPED_COST)
            else:
                attach_costs(collection, req.settings, session)
    got.profiled = profiled(req.settings, [r for c in _collections(got) for r in c.reports])
    return got


def _collections(got: Any) -> list[Collection]:
    return got.collections if hasattr(got, "collections") else [got.collection]


def _levered(req: TritonRequest) -> Any:
    from .library import Levered

    return Levered(req.asked.stage, req.launch, fix=req.asked.fix, records=req.asked.records,
                   ratchet_to=req.asked.ratchet_to)


def _screened(req: TritonRequest, session: Session, progress: Progress | None) -> Any:
    if req.way is Way.CACHE:
        from .library import screen_cache

        return screen_cache(req.command[0], req.settings, session, progress=progress,
                            levered=_levered(req))
    if req.way is Way.RUN:
        from .library import screen_run

        return screen_run(list(req.command), req.settings, session, timeout=req.run_timeout, progress=progress,
                          levered=_levered(req))
    assert req.kernel is not None
    if req.way is Way.MODULE:
        return screen_package(req.kernel.file, req.kernel, req.settings, session, progress=progress,
                              build=not req.list_only, stage=req.asked.stage)
    return screen(req.kernel, req.settings, session, asked=req.asked, progress=progress)


def module_reports(spec: str, config: Settings, progress: Progress | None = None) -> Collection:
    """Every launched kernel of a module (FILE.py) or one of them (FILE.py:KERNEL), each config
    of its autotune, with the values it is launched with; a kernel that cannot be screened is
    a note (what `diff` compares)."""
    from ...errors import InputError
    from .package import screen_package

    path, sep, name = spec.rpartition(":")
    if not sep or not path.endswith(".py"):
        path, name = spec, ""
    from ...app.session import open_session

    found = screen_package(path, TritonKernel(file=path, kernel="", signature={}, constexprs={}, options_given=frozenset()),
                           config, open_session(config), progress=progress)
    out = Collection()
    keep = [r for r in found.collection.reports if not name or r.kernel == name]
    out.extend(found.collection, reports=keep)
    out.notes += [f"{u.kernel}: not screened: {u.reason}" for u in found.unscreened
                  if not name or u.kernel.endswith(f":{name}")]
    out.notes += found.load_errors
    if name and not keep and not any(u.kernel.endswith(f":{name}") for u in found.unscreened):
        raise InputError(f"no launched kernel {name!r}", path=path)
    return out


def _decided(shapes_path: str, kernel: TritonKernel) -> tuple[TritonKernel, bool | None]:
    """The kernel in the shape `zeinspect fix` recorded for it, and whether it is staged (None:
    no decision).  Levers a decision does not name (it predates them) keep the configured value."""
    for label, decision in load_section(shapes_path, "triton").items():
        file, _, name = str(label).rpartition(":")
        if os.path.normpath(file) != os.path.normpath(kernel.file) or name != kernel.kernel:
            continue
        shape = decision.get("shape") if isinstance(decision, dict) else None
        if not isinstance(shape, dict):
            return kernel, None
        chosen = TritonShape.from_json(shape)
        launch = {k: v for k, v in chosen.launch().items() if k in shape}
        return kernel.with_options(launch), bool(chosen.stage)
    return kernel, None


def gate_reports(entry: TritonEntry, config: Settings, session: Session, shapes_path: str | None,
                 progress: Progress | None) -> Collection:
    """A gate configuration's Triton kernel, in its recorded shape when `fix` chose one."""
    kernel = entry.kernel
    stage = entry.stage
    if shapes_path:
        kernel, staged = _decided(shapes_path, kernel)
        stage = stage if staged is None else staged
    sub = replace(config, targets=entry.targets or config.targets)
    # The ledger: the entry declares its kernel (each config of its autotune), needed on every
    # target it names.
    targets = tuple(t.name for t in session.plan(sub.targets).targets) if session is not None else None
    declared = Part(kernel.file, kernel.label, (kernel.kernel,), "the gate configuration's triton: entry",
                    targets=targets)
    if entry.autotune:
        out = Collection()
        for n, (tuned, got) in enumerate(screen_autotune(kernel, sub, session, progress=progress), start=1):
            label = f"{kernel.label}[config {n}: {tuned.describe()}]"
            out.extend(got, reports=[r.replace(input=label) for r in got.reports])
            out.parts.append(replace(declared, label=label))
        return out
    out = probe_triton(kernel, sub, session, stage=stage, progress=progress)
    out.parts.append(declared)
    return out


def gate_fix(entry: TritonEntry, config: Settings, session: Session, progress: Progress | None) -> dict:
    sub = replace(config, targets=entry.targets or config.targets)
    return record(search_triton(entry.kernel, sub, session, progress=progress))


def screen_package(*args: Any, **kwargs: Any) -> Any:
    """Every launched kernel of a module or package (triton.app.package.screen_package)."""
    from .package import screen_package as screen

    return screen(*args, **kwargs)

