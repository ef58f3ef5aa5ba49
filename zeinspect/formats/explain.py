"""`zeinspect explain` in text and JSON: per kernel, the lines that spill and how full the
register file is, a column per target.  Pure.

Text: per kernel two lines per target (totals, or "no spill", and the peak line's live GRFs
against the register file), the hottest lines ranked by weight, then the source annotated
with a gutter per target (`spills/fills live-GRFs`).  It fits 100 columns: the listing has a
gutter for up to 4 targets (with more, the 4 with the most spill traffic, and a note).
Kernels without line information get counts per ISA block.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from .. import names
from ..inputs.isa import KernelIsa, LineFigures, SpilledVariable
from ..probes.explain import ExplainResult, Explanation
from .common import safe

TOP_LINES = 10
WIDTH = 100
WEIGHT_NOTE = "weight = (spill + fill messages) x 8^loop depth: a heuristic for ranking lines, not a measured cost"


Key = tuple[str, int]
"""(file, line); file "" where the dump names none and the input is not source."""


@dataclass
class KernelView:
    """One kernel on every explained target, line by line."""

    input: str
    kernel: str
    explanations: list[Explanation] = field(default_factory=list)
    by_line: dict[Key, dict[str, LineFigures]] = field(default_factory=dict)
    sources: dict[str, list[str]] = field(default_factory=dict)

    @property
    def spills(self) -> bool:
        return any(e.isa.spilling for e in self.explanations)

    def weight(self, key: Key) -> int:
        return sum(x.weight for x in self.by_line.get(key, {}).values())

    def hottest(self, count: int = TOP_LINES) -> list[Key]:
        ranked = sorted((k for k in self.by_line if self.weight(k)), key=lambda k: (-self.weight(k), k))
        return ranked[:count]

    def text_of(self, key: Key) -> str:
        source = self.sources.get(key[0], [])
        if 0 < key[1] <= len(source):
            return source[key[1] - 1]
        return next((x.text for x in self.by_line.get(key, {}).values() if x.text), "")

    def files(self) -> list[str]:
        """Files with lines, the hottest line's first, then by how many lines they have."""
        count: dict[str, int] = {}
        for f, _ in self.by_line:
            count[f] = count.get(f, 0) + 1
        first = self.hottest(1)
        return sorted(count, key=lambda f: (not first or f != first[0][0], -count[f], f))

    def listing_range(self, file: str) -> range:
        numbers = [n for f, n in self.by_line if f == file]
        return range(min(numbers), max(numbers) + 1) if numbers else range(0)


def key_of(x: LineFigures) -> Key:
    return (x.file or "", x.line or 0)


def where(x: LineFigures, main: str | None = None) -> str:
    """`line 20`, or `standard.py:40` for a line in another file than the kernel's own."""
    if x.line is None:
        return f"block {x.block}"
    if x.file and x.file != main:
        return f"{x.file.rsplit('/', 1)[-1]}:{x.line}"
    return f"line {x.line}"


def kernel_views(result: ExplainResult) -> list[KernelView]:
    views: dict[tuple[str, str], KernelView] = {}
    for e in result.explanations:
        view = views.setdefault((e.input, e.isa.kernel), KernelView(e.input, e.isa.kernel))
        view.explanations.append(e)
        for x in e.isa.lines:
            if x.line is not None:
                view.by_line.setdefault(key_of(x), {})[e.target] = x
                if x.file and x.file in result.sources:
                    view.sources[x.file] = result.sources[x.file]
    return list(views.values())


def spill_figures(isa: KernelIsa) -> str:
    """`spill size 2752 bytes, 72 spill and 60 fill messages`, or `no spill`."""
    if isa.spilling:
        return f"spill size {isa.spill_size or 0} bytes, {isa.spills} spill and {isa.fills} fill messages"
    return "no spill"


def traffic(isa: KernelIsa) -> str | None:
    """`scratch traffic: 3200 B per iteration of its innermost loop (depth 1)`, or None: none."""
    cost = isa.cost()
    if not any(cost.messages.values()):
        return None
    if not cost.in_loops:
        return "scratch traffic: outside loops only (paid once, not per iteration)"
    return f"scratch traffic: {cost.per_iteration} B per iteration of its innermost loop (depth {cost.depth})"


def shape_figures(isa: KernelIsa, main: str | None = None) -> str:
    """`SIMD32, 128 GRF, 576 instructions; peak 116 of 128 GRFs live on line 22 (12 free)`."""
    shape = f"SIMD{isa.simd or '?'}, {isa.grf or '?'} GRF, {isa.instructions or '?'} instructions"
    peak = isa.peak
    if peak is not None and isa.grf:
        shape += (f"; peak {peak.pressure} of {isa.grf} GRFs live on {where(peak, main)} "
                  f"({isa.grf - (peak.pressure or 0)} free)")
    return shape


def target_summary(e: Explanation, main: str | None = None) -> list[str]:
    """The spill figures (or "no spill"), the shape and the peak line, and the scratch traffic's cost."""
    lines = [f"{e.target} ({e.ip}): {spill_figures(e.isa)}", f"  {safe(shape_figures(e.isa, main))}"]
    moved = traffic(e.isa)
    return lines + ([f"  {moved}"] if moved else [])


CELL = 13


def _cell(x: LineFigures | None) -> str:
    if x is None:
        return " " * CELL
    messages = f"{x.spills}/{x.fills}" if x.spills or x.fills else ""
    return f"{messages:>{CELL - 4}}{x.pressure if x.pressure is not None else '':>4}"


def _blocks(e: Explanation) -> list[str]:
    out = [f"  {e.target}: no line information: counts per ISA block below; build OpenCL C with -g (explain "
           "does), or the SYCL image with debug information (-g), to see source lines"]
    out.append(f"    {'block':<12} {'depth':>5} {'spills':>6} {'fills':>6} {'bytes':>7} {'weight':>8}")
    for x in [x for x in e.isa.lines if x.spills or x.fills][:TOP_LINES]:
        out.append(f"    {safe(x.block or '-'):<12} {x.depth:>5} {x.spills:>6} {x.fills:>6} {x.bytes_moved:>7} "
                   f"{x.weight:>8}")
    return out


def variable_groups(e: Explanation, main: str | None = None) -> list[tuple[str, list[SpilledVariable]]]:
    """Spilled variables grouped by the lines whose messages move them, largest group first,
    as (where, variables): `moved on lines 16, 20, 24` / `have no scratch slot`."""
    groups: dict[tuple, list] = {}
    for v in e.isa.spilled_variables:
        groups.setdefault((v.offset is None, tuple(key_of(x) for x in v.lines)), []).append(v)
    lines_of = {key_of(x): x for v in e.isa.spilled_variables for x in v.lines}
    out = []
    for (no_slot, keys), members in sorted(groups.items(), key=lambda kv: (kv[0][0], -sum(v.bytes for v in kv[1]))):
        if no_slot:
            place = "have no scratch slot"
        elif keys:
            lines = [lines_of[k] for k in keys]
            said = [where(x, main) for x in lines]
            said = [w.removeprefix("line ") for w in said]
            place = f"moved on line{'s' if len(lines) > 1 else ''} " + ", ".join(said)
        else:
            place = "moved by no message"
        out.append((place, members))
    return out


def variables_text(where: str, members: list[SpilledVariable]) -> str:
    names = ", ".join(v.name for v in members[:3]) + (", ..." if len(members) > 3 else "")
    return (f"{len(members)} spilled variable{'s' if len(members) != 1 else ''} "
            f"({sum(v.bytes for v in members)} B: {names}) {where}")


LISTED_TARGETS = 4


def listed_targets(view: KernelView) -> list[str]:
    """The targets the text listing has a gutter for: all of them up to 4 (100 columns), else
    the 4 with the most spill traffic (then the fullest register files), in the plan's order."""
    if len(view.explanations) <= LISTED_TARGETS:
        return [e.target for e in view.explanations]
    ranked = sorted(view.explanations, key=lambda e: (-e.isa.weight,
                                                      -((e.isa.peak.pressure or 0) / (e.isa.grf or 1)
                                                        if e.isa.peak else 0)))
    keep = {e.target for e in ranked[:LISTED_TARGETS]}
    return [e.target for e in view.explanations if e.target in keep]


def _listing(view: KernelView, file: str) -> list[str]:
    targets = listed_targets(view)
    head = f"{'line':>5} |" + "|".join(f"{t[:CELL]:^{CELL}}" for t in targets) + "| source"
    sub = f"{'':>5} |" + "|".join(f"{'spl/fill':>{CELL - 4}}{'GRF':>4}" for _ in targets) + "|"
    room = max(20, WIDTH - len(sub) - 1)
    out = [f"  {safe(file) or '(no file named)'}", head, sub]
    for n in view.listing_range(file):
        cells = view.by_line.get((file, n), {})
        out.append(f"{n:>5} |" + "|".join(_cell(cells.get(t)) for t in targets) + "| "
                   + safe(view.text_of((file, n)).rstrip())[:room])
    return out


def main_file(view: KernelView) -> str | None:
    files = view.files()
    return files[0] if files else None


ISA_ROWS = 40


def _isa(e: Explanation, main: str | None) -> list[str]:
    """The ISA of the target's hottest line (its peak line when nothing spills), each
    instruction with the GRFs occupied while it runs."""
    rows = [x for x in e.isa.lines if x.line is not None or not e.isa.has_lines]
    spilling = [x for x in rows if x.weight]
    focus = max(spilling, key=lambda x: x.weight) if spilling else e.isa.peak
    if focus is None:
        return []
    mine = [i for i in e.isa.listing if i.line is focus]
    why = "hottest" if spilling else "peak register pressure"
    out = [f"  ISA of {safe(where(focus, main))} on {e.target} ({why}; GRF = registers occupied while it runs):"]
    for i in mine[:ISA_ROWS]:
        code = " ".join(i.text.partition("//")[0].split())
        mark = f"[{i.moves}] " if i.moves else ""
        out.append(f"    {i.live:>4}  {safe(mark + code)[:WIDTH - 10]}")
    if len(mine) > ISA_ROWS:
        out.append(f"          ... and {len(mine) - ISA_ROWS} more instructions (--json --isa lists them all)")
    return out


def text(result: ExplainResult, *, isa: bool = False) -> str:
    out = []
    views = kernel_views(result)
    for view in views:
        main = main_file(view)
        out.append(f"kernel {safe(names.short(view.kernel))} ({safe(view.input)})")
        if names.short(view.kernel) != view.kernel:
            out.append(f"  symbol {safe(view.kernel)}")
        out += [f"  {row}" for e in view.explanations for row in target_summary(e, main)]
        for e in view.explanations:
            if e.isa.spilling and not e.isa.has_lines:
                out += _blocks(e)
        for e in view.explanations:
            out += [f"  {e.target}: {safe(variables_text(*group))}" for group in variable_groups(e, main)]
        if not view.by_line:
            continue
        hottest = view.hottest() if view.spills else []
        if hottest:
            out.append("  hottest lines (spill/fill messages per target, loop depth):")
            for key in hottest:
                cells = view.by_line[key]
                # Targets with the same counts together: `245/186 tgllp adl-s; 244/187 dg2-g10 ...`.
                same: dict[str, list[str]] = {}
                for t, x in cells.items():
                    if x.spills or x.fills:
                        same.setdefault(f"{x.spills}/{x.fills}", []).append(t)
                figures = "; ".join(f"{counts} {' '.join(ts)}" for counts, ts in same.items())
                depth = max(x.depth for x in cells.values())
                place = where(next(iter(cells.values())), main)
                head = f"    {safe(place):<10} weight {view.weight(key):>7}  depth {depth}  "
                out += textwrap.wrap(safe(figures), WIDTH, initial_indent=head, subsequent_indent=" " * len(head),
                                     break_on_hyphens=False)
                out.append(f"               {safe(view.text_of(key).strip())[:WIDTH - 15]}")
        for file in view.files():
            out.append("")
            out += _listing(view, file)
        if len(listed_targets(view)) < len(view.explanations):
            out.append(f"  (listing: the {LISTED_TARGETS} of {len(view.explanations)} targets with the most spill "
                       "traffic; -t chooses; --html and --json have all)")
        if isa:
            for e in view.explanations:
                out.append("")
                out += _isa(e, main)
        out.append("")
    if any(view.spills for view in views):
        out.append(WEIGHT_NOTE)
    out.append("GRF = registers live while the line's busiest instruction runs (liveness over IGC's final ISA)")
    for failure in result.failures:
        out.append(f"FAILED: {safe(failure)}")
    for note in result.notes:
        out.append(f"note: {safe(note)}")
    return "\n".join(out) + "\n"


def section(result: ExplainResult, prefix: str = "") -> str:
    """The text view under another command's output (`kernel --explain`, `triton --explain`)."""
    return f"\n== {prefix}which lines spill (zeinspect explain)\n" + text(result)


def _line_json(x: LineFigures) -> dict:
    return {"file": x.file, "line": x.line, "block": x.block, "source": x.text, "spills": x.spills,
            "fills": x.fills, "bytes": x.bytes_moved, "loop_depth": x.depth, "weight": x.weight,
            "live_grfs": x.pressure}


def document(result: ExplainResult, *, with_isa: bool = False) -> dict:
    """`with_isa`: each report also lists every instruction with its line and live GRFs."""
    reports = []
    for e in result.explanations:
        isa = e.isa
        peak = isa.peak
        reports.append({
            "input": e.input, "target": e.target, "ip": e.ip, "compiler": e.compiler, "kernel": isa.kernel,
            "kernel_short": names.short(isa.kernel),
            "has_lines": isa.has_lines, "passes": e.passes,
            "totals": {"spill_size": isa.spill_size or 0, "zebin_spill_size": e.zebin_spill,
                       "agrees_with_zebin": e.agrees_with_zebin, "spills": isa.spills, "fills": isa.fills,
                       "grf": isa.grf, "simd": isa.simd, "instructions": isa.instructions,
                       "spill_refs": isa.spill_refs, "peak_live_grfs": peak.pressure if peak else None,
                       "peak_file": peak.file if peak else None, "peak_line": peak.line if peak else None,
                       "headroom_grfs": isa.grf - (peak.pressure or 0) if peak and isa.grf else None},
            "cost": isa.cost().to_json(),
            "lines": [_line_json(x) for x in sorted(isa.lines, key=lambda x: (x.line is None, x.file or "",
                                                                             x.line or 0))],
            "variables": [{"name": v.name, "bytes": v.bytes, "scratch_offset": v.offset,
                           "lines": [{"file": x.file, "line": x.line, "block": x.block} for x in v.lines]}
                          for v in isa.spilled_variables],
        })
        if with_isa:
            reports[-1]["instructions"] = [{"file": i.line.file, "line": i.line.line, "block": i.line.block,
                                            "live_grfs": i.live, "moves": i.moves, "text": i.text}
                                           for i in isa.listing]
    return {"schema": "zeinspect.explain/1", "compilers": [c.to_json() for c in result.compilers],
            "weight": WEIGHT_NOTE, "reports": reports, "failures": result.failures, "notes": result.notes,
            "incidents": result.incidents}
