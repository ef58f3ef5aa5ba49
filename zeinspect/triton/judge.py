"""Triton's judgements, pure functions of reports: the autotune ranking, the prune hook's keep or
drop, and the fix's choice among the shapes it built (with the decision as a Triton author
writes it).  No compile, no Triton: the searches that build are use cases (triton.app.fix) and
the screens probes (triton.probes.screen).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..judge.shapes import Row, Search
from ..levers.base import How, LeverRegistry, spell
from ..model import KernelReport
from .model.kernel import TritonKernel
from .model.levers import TRITON_LEVERS, TritonShape
from .model.part import triton_part


def _rank_key(item: tuple[int, tuple[Any, Any]]) -> tuple:
    index, (_, got) = item
    if not got.reports:  # a config that could not be screened ranks after every screened one
        return 1 << 30, 0, 0, index
    blocked = sum(1 for r in got.reports if r.applicable and not r.built)
    scratch = [r for r in got.reports if r.built and r.uses_scratch]
    return blocked, len(scratch), sum(r.scratch_bytes or 0 for r in scratch), index


def ranking(screen: list) -> list[int]:
    """Config indices, best first: fewest targets where it cannot build or launch, then fewest
    with scratch, then least scratch in all, then the module's order."""
    return [i for i, _ in sorted(enumerate(screen), key=_rank_key)]


def pruned(screen: list, max_spill_bytes: int) -> tuple[list[int], int | None]:
    """The prune hook's verdict on a screen ((config, Collection) pairs): the indices of the configs
    it keeps (none that, on any target, does not build, cannot launch or spills more than
    `max_spill_bytes`), and, when it keeps none, the least bad one (ranking) to keep instead."""
    bad = [any(not r.built or (r.spill_bytes or 0) > max_spill_bytes for r in got.reports) for _, got in screen]
    kept = [i for i, b in enumerate(bad) if not b]
    return kept, (None if kept else ranking(screen)[0])


@dataclass
class TritonRow(Row):
    levers: LeverRegistry = field(default=TRITON_LEVERS, repr=False)


@dataclass
class TritonSearch:
    kernel: TritonKernel
    rows: list[TritonRow] = field(default_factory=list)
    staging: dict = field(default_factory=dict)
    compiler_ids: list[str] = field(default_factory=list)
    targets: tuple[str, ...] = ()
    in_order: bool = False
    """The fix loop on many specializations (triton.app.library.fixes_of): its rows are the build
    as launched, then each lever alone in the levers' order (staging first), and the first of
    those that builds on every target without scratch is the change; only where none does are
    the other shapes built, and the least scratch wins.  Otherwise (one kernel, every shape
    built) the best by Row.key: no scratch first, then the most threads per EU."""

    @property
    def first_clean(self) -> TritonRow | None:
        """With `in_order`: the first row, in the order built, that builds everywhere without scratch."""
        return next((r for r in self.rows if r.builds_everywhere and not r.scratch_targets), None) \
            if self.in_order else None

    @property
    def staging_applies(self) -> bool:
        """The staging pass staged a dot of this kernel in one of the shapes built."""
        return any(d.get("applied") for got in self.staging.values() for d in got.get("dots", []))

    @property
    def staged_only(self) -> bool:
        """No lever cleans, the staging pass applies and a staged shape builds everywhere: the change
        shown is a staged one (the least scratch among them).  Staging is the remedy for a large
        dot's registers, and it changes nothing of the config itself (issue 63)."""
        return (self.in_order and self.first_clean is None and self.staging_applies
                and any(r.shape.stage and r.builds_everywhere for r in self.rows))

    @property
    def winner(self) -> TritonRow | None:
        first = self.first_clean
        if first is not None:
            return first
        rows = [r for r in self.rows if r.shape.stage] if self.staged_only else self.rows
        ranked = sorted(rows, key=Row.key)
        return ranked[0] if ranked and ranked[0].builds_everywhere else None

    @property
    def runner_up(self) -> TritonRow | None:
        ranked = sorted(self.rows, key=Row.key)
        return ranked[1] if len(ranked) > 1 else None

    def why(self) -> str:
        first = self.first_clean
        if first is not None:
            return (f"{first.shape.describe()} builds on every target and uses no scratch memory anywhere: the "
                    "first of the levers tried one at a time, in their order (the staging pass, the register "
                    "file, threads per warp, warps), that does")
        fake = Search(input=self.kernel.label, kernel=self.kernel.kernel, written=TritonShape(), depends=[])
        fake.rows = [r for r in self.rows if r.shape.stage] if self.staged_only else list(self.rows)
        return fake.why() + ("; among the staged shapes, as the staging pass applies to this kernel and no lever "
                             "cleans it" if self.staged_only else "")


def has_finding(reports: list[KernelReport]) -> bool:
    """What the fix loop searches for: on a target it applies to, it does not build or launch, or
    it uses scratch memory."""
    return any(r.applicable and (not r.built or r.uses_scratch) for r in reports)


def record(search: TritonSearch) -> dict:
    w = search.winner
    shape = w.shape if w is not None and isinstance(w.shape, TritonShape) else TritonShape(stage=True)
    cells = w.cells if w else []
    return {
        "shape": shape.to_json(),
        "found": w is not None,
        "cleans": w is not None and not w.scratch_targets,
        "staging_applies": search.staging_applies,
        "why": search.why(),
        "triton": launch_spelling(shape),
        "compilers": search.compiler_ids,
        "results": {c.target: result_of(c.report) for c in cells},
    }


def result_of(report: KernelReport | None) -> dict:
    """A build's figures on one target, as a record keeps them (None: it did not build there)."""
    return {"status": report.status.value if report else "failed",
            "simd": report.simd if report else None, "grf": report.grf if report else None,
            "spill_bytes": report.spill_bytes if report else None,
            "private_bytes": report.private_bytes if report else None,
            "staging": _staging_text(report),
            "cost": cost_of(report),
            # The chosen build itself, to look at or rebuild: its kept TTGIR and SPIR-V, Triton's
            # name for the kernel, and ocloc's options.
            "build": _build_of(report)}


K_BLOCKS = ("BLOCK_K", "BLOCK_SIZE_K", "BK", "TILE_K", "K_BLOCK")
"""The names a config gives its block of the reduction dimension: Inductor's GEMM templates'
(BLOCK_K) and the Triton tutorials' matmul's (BLOCK_SIZE_K), with the common short forms."""


def k_block(values: dict) -> tuple[str, int] | None:
    """A config's K block: its name and value, or None where the config has none."""
    return next(((name, values[name]) for name in K_BLOCKS if isinstance(values.get(name), int)), None)


def smaller_k_block(own: dict, siblings: list[tuple[dict, Any]]) -> tuple[str, int, Any] | None:
    """The last of the levers, a smaller K block: among configs of the same kernel (the same
    template on the same problem) whose values equal `own`'s but for a smaller K block, and that
    build without scratch on every target (`siblings`: (values, what to name it) of those), the
    one with the largest such block, the least change.  Only configs that were screened count:
    a block no config has is not invented (its other values may not divide the problem)."""
    mine = k_block(own)
    if mine is None:
        return None
    name, value = mine
    rest = {k: v for k, v in own.items() if k != name}
    fits = [(theirs[name], who) for theirs, who in siblings
            if isinstance(theirs.get(name), int) and theirs[name] < value
            and {k: v for k, v in theirs.items() if k != name} == rest]
    if not fits:
        return None
    block, who = max(fits, key=lambda x: x[0])
    return name, block, who


def cost_of(report: KernelReport | None) -> dict | None:
    """What a build costs on its target, the lever's price beside what it buys: the Xe-core
    occupancy of its launched work-group (zeinspect.occupancy: registers, SIMD, SLM) and the
    shared local memory it launches with.  None for a build with no figures (it did not build)."""
    from ..occupancy import of

    got = of(report) if report is not None and report.built else None
    if report is None or got is None:
        return None
    return {"occupancy": round(got.xe_core_occupancy, 4), "threads_per_eu": got.threads_per_eu,
            "limited_by": got.limited_by, "slm_bytes": report.slm_bytes or 0}


def launch_spelling(shape: TritonShape) -> str:
    """The decision as a Triton author writes it at the launch (or in a triton.Config): the
    launch options, outermost first (num_warps, threads_per_warp, grf_mode), then any pass."""
    options = [lv for lv in TRITON_LEVERS if lv.how is How.TRITON_OPTION][::-1]
    passes = [lv for lv in TRITON_LEVERS if lv.how is not How.TRITON_OPTION]
    text = ", ".join(spell(tuple(options), shape, None))
    return text + "".join(f"; and {x}" for x in spell(tuple(passes), shape, None))


def _build_of(report: KernelReport | None) -> dict | None:
    part = triton_part(report) if report else None
    if report is None or part is None:
        return None
    return {"artifacts": part.artifacts, "name": part.metadata.get("name"), "options": report.options,
            "threads_per_warp": part.metadata.get("threads_per_warp")}


def _staging_text(report: KernelReport | None) -> str | None:
    part = triton_part(report) if report else None
    staging = part.staging if part is not None and part.staging else {}
    if not staging:
        return None
    parts = []
    for d in staging.get("dots", []):
        parts.append(f"staged, K_TILE {d['k_tile']}, {d['slm_bytes']} bytes of SLM" if d["applied"]
                     else f"declined by gate {d['gate']}: {d['reason']}")
    return "; ".join(parts)


def fix_groups(fixes: list[dict]) -> list[dict]:
    """The fix loop's records grouped as users read them: the specializations of one kernel (the
    configs of one Inductor template on one problem) that the same change cleans are one group,
    the largest first, with the change in Triton's terms (launch_spelling), its members' rows and
    the range of their configs (`BLOCK_K: [16, 128]`: 20 configs of one matmul are one group)."""
    groups: dict[tuple, dict] = {}
    for fix in fixes:
        found = fix["record"]
        key = (fix["file"], fix["kernel"], fix.get("template"), found["triton"], found["cleans"], found["found"])
        group = groups.setdefault(key, {"file": fix["file"], "kernel": fix["kernel"], "template": fix.get("template"),
                                        "change": found["triton"], "shape": found["shape"], "cleans": found["cleans"],
                                        "found": found["found"], "why": found["why"], "specializations": [],
                                        "k_block": bool(found.get("k_block")),
                                        "configs": {}})
        group["specializations"].append(fix["row"])
        _add_cost(group.setdefault("cost", {}), fix)
        for name, value in (fix.get("config") or {}).items():
            seen = group["configs"].setdefault(name, [])
            if value not in seen:
                seen.append(value)
    for group in groups.values():
        group["configs"] = {k: _span(v) for k, v in group["configs"].items()}
        group["cost"] = {target: {k: _least_most(v) for k, v in spans.items()} for target, spans in group["cost"].items()}
        if group["template"]:
            group["inductor"] = inductor_advice(group["template"], group["found"], smaller=group["k_block"])
    return sorted(groups.values(), key=lambda g: (-len(g["specializations"]), g["kernel"], g["change"]))


def _add_cost(cost: dict, fix: dict) -> None:
    """A member's cost as launched and in the chosen build, per target, added to its group's
    (fix_groups): the occupancy and SLM each had, spanned over the group."""
    chosen = fix["record"].get("results") or {}
    for target in chosen:
        spans = cost.setdefault(target, {})
        for when, figures in (("as_launched", (fix.get("as_launched_results") or {}).get(target)),
                              ("chosen", chosen[target])):
            got = (figures or {}).get("cost")
            for name in ("occupancy", "slm_bytes"):
                seen = spans.setdefault(f"{when}_{name}", [])
                value = got[name] if got else None
                if value not in seen:
                    seen.append(value)


def inductor_advice(template: str, found: bool, *, smaller: bool = False) -> str:
    """The change in Inductor's terms for configs of one of its templates (`triton::mm for addmm
    (...)`): a template's configs are Inductor's (its config heuristics for xpu, scaled to the
    problem), not the user's, so the way in is its choices class (zeinspect.triton.inductor_choices),
    or a heuristic of the user's own, registered under the template's uid, `xpu` and the op
    (torch/_inductor/template_heuristics/registry.py: its registry is keyed so)."""
    uid, _, rest = template.partition(" for ")
    op = rest.split(" ", 1)[0] or uid.removeprefix("triton::")
    if smaller:
        keep = "Inductor offers the same configs with a smaller K block, which build without scratch: dropping these " \
               "is the change"
    elif found:
        keep = (f"to have Inductor build them with the change, register a heuristic of your own "
                f"(register_template_heuristic('{uid}', 'xpu', op_name='{op}'), torch._inductor.template_heuristics."
                "registry) whose configs carry it")
    else:
        keep = "no Triton lever builds them on every target: dropping them is the change"
    return (f"these are configs of Inductor's {uid} template for {op} on xpu: to drop the ones that do not build "
            "before Inductor compiles them, set torch._inductor.config.inductor_choices_class = "
            f"zeinspect.triton.inductor_choices(targets=...); {keep}")


def _least_most(values: list) -> list:
    """A cost over a group: [least, most] of the members that built ([] where none did)."""
    built = [v for v in values if v is not None]
    return [min(built), max(built)] if built else []


def _span(values: list) -> list:
    """A config's values over a group: [least, most] for numbers that differ, else each value once."""
    if len(values) > 1 and all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return [min(values), max(values)]
    return values
