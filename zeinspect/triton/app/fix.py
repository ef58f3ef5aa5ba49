"""Shapes for Triton kernels: the staging pass, register file, threads per warp and warps per
program (triton.model.levers.TRITON_LEVERS), searched in the same order as OpenCL
kernels (judge.shapes); the choice is triton.judge's.
"""

from __future__ import annotations

from typing import Any

from ...judge.shapes import Cell, CellState, cell_of
from ...levers.base import How, grid
from ...model import WHOLE_MODULE
from ...probes.results import Collection, Progress
from ...probes.session import Session
from ...settings import Settings
from ..judge import TritonRow, TritonSearch
from ..model.kernel import TritonKernel
from ..model.levers import TRITON_LEVERS, TritonShape
from ..model.part import triton_part
from ..model.specialization import Specialization
from ..probes.audit import probe_triton


def written_shape(kernel: TritonKernel) -> TritonShape:
    """The shape a kernel is built in as launched: each launch-option lever's value, no staging."""
    return TritonShape(**{lv.name: kernel.option(lv.name, lv.default) for lv in TRITON_LEVERS.of(How.TRITON_OPTION)})


def launched_shape(spec: Specialization) -> TritonShape:
    """The shape a specialization was built in: its launch options, staged where it was (a suite
    gated with `--zeinspect-lever stage=1` builds and judges only staged specializations)."""
    return written_shape(spec.kernel).replace(stage=spec.staged)


def one_lever_at_a_time(written: TritonShape) -> list[TritonShape]:
    """Each lever alone, in registry order (the staging pass, the register file, threads per warp,
    warps), each of its settings the kernel is not launched with: the fix loop's first round on
    many specializations, where the first of these that cleans is the change to make."""
    return [written.replace(**{lv.name: value}) for lv in TRITON_LEVERS
            for value in lv.settings(getattr(written, lv.name)) if value != getattr(written, lv.name)]


def add_row(search: TritonSearch, shape: TritonShape, got: Collection | str, written: TritonShape | None = None) -> None:
    """A shape's build (its reports on every target, or why it did not build) as a row of `search`;
    `written`: the shape it was launched in, where not its kernel's written shape (launched_shape)."""
    written = written or written_shape(search.kernel)
    row = TritonRow(shape=shape, as_written=shape == written, written=written)
    if isinstance(got, str):
        row.cells = [Cell(target, CellState.FAILED, None, got) for target in search.targets]
    else:
        row.cells = [cell_of(r.target, r, shape, TRITON_LEVERS) for r in got.reports if r.kernel != WHOLE_MODULE] or \
            [Cell(r.target, CellState.FAILED, r, r.reason or "") for r in got.reports]
        for r in got.reports:
            part = triton_part(r)
            if part is not None and part.staging:
                search.staging[shape.describe()] = part.staging
        search.compiler_ids += [c.id for c in got.compilers if c.id not in search.compiler_ids]
    search.rows.append(row)


def search_triton(kernel: TritonKernel, config: Settings, session: Session, *,
                  progress: Progress | None = None) -> TritonSearch:
    """Every shape of the levers, built one after another (a kernel named as FILE.py:KERNEL)."""
    result = TritonSearch(kernel=kernel, targets=tuple(config.targets))
    for shape in grid(TRITON_LEVERS, TritonShape, written_shape(kernel)):
        # Every launch-option lever sets the request's own field; the staging pass runs in the probe.
        add_row(result, shape, probe_triton(kernel.with_options(shape.launch()), config, session, stage=shape.stage,
                                            progress=progress))
    return result


def config_values(spec: Specialization) -> dict:
    """A specialization's config as a K-block sibling is compared on: its constexprs, an Inductor
    template's config, and its launch options."""
    k = spec.kernel
    return {**k.constexprs, **spec.config, "num_warps": k.num_warps, "num_stages": k.num_stages,
            "threads_per_warp": k.threads_per_warp, "grf_mode": k.grf_mode, "staged": spec.staged}


def kin(spec: Specialization) -> tuple:
    """What the configs of one kernel share, and a K-block sibling must too: an Inductor template
    on one problem (its configs are kernels of their own), else the kernel and its signature."""
    if spec.template:
        return ("template", spec.template)
    return ("kernel", spec.label, tuple(sorted((k, str(v)) for k, v in spec.kernel.signature.items())))


def k_block_sibling(spec: Specialization, clean: list[Specialization]) -> tuple[str, int, Specialization] | None:
    """The clean config of the same kernel that differs from `spec` only in a smaller K block
    (triton.judge.smaller_k_block): its K block's name and value, and the config."""
    from ..judge import smaller_k_block

    return smaller_k_block(config_values(spec), [(config_values(c), c) for c in clean if kin(c) == kin(spec)])


def with_smaller_k_block(searched: dict, spec: Specialization, clean: list[Specialization],
                         names: dict[int, str], got_of: Any) -> dict | None:
    """The record of `spec` changed to a smaller K block (k_block_sibling), where a clean config of
    the same kernel differs from it in that alone; `searched` is the record of its own levers,
    `got_of(spec)` a specialization's screen.  The figures are that config's own."""
    from ..judge import result_of

    hit = k_block_sibling(spec, clean)
    if hit is None:
        return None
    name, block, sibling = hit
    own = "no lever of its own build builds it" if not searched["found"] else \
        f"no lever of its own build cleans it (the least scratch with {searched['triton'] or 'the config as launched'})"
    return {**searched, "shape": launched_shape(spec).to_json(), "found": True, "cleans": True,
            "why": f"{own}; the same config with {name}={block} ({names[id(sibling)]}) builds without scratch on "
                   f"every target: use it instead (a smaller K block, the last lever)",
            "triton": f"{name}={block}", "k_block": {"name": name, "value": block, "row": names[id(sibling)]},
            "results": {r.target: result_of(r) for r in got_of(sibling).reports}}
