"""A new Triton lever, defined and registered in this file alone, runs through every part that
uses Triton levers: the shape search and its record, the launch spelling and `fix`'s summary
line, a gate entry that sets it, the gate's read-back of a recorded decision, and Triton's own
compile (the value reaches `triton.compile`: the metadata Triton returns says it built with it).

The lever is Triton-XPU's `enable_fp_fusion` option (XPUOptions has it; zeinspect ships no
lever for it, so no other file of zeinspect knows it).  The search runs on a fake probe, one
answer per shape, spilling unless fusion is off: the grid is 96 shapes, and what is proven is
the search's plumbing, not Triton's.  The compiles at the end are real.
"""

from __future__ import annotations

import pytest
import yaml

from zeinspect.levers import Shape
from zeinspect.levers.base import How, Lever
from zeinspect.model import KernelReport, Source, Status
from zeinspect.probes.results import Collection
from zeinspect.settings import Settings

triton = pytest.importorskip("triton")

from zeinspect.triton import app as triton_app  # noqa: E402
from zeinspect.triton import judge as triton_judge  # noqa: E402
from zeinspect.triton.app import fix as triton_fix  # noqa: E402
from zeinspect.triton.model.gate import parse_entries  # noqa: E402
from zeinspect.triton.model.kernel import TritonKernel  # noqa: E402
from zeinspect.triton.model.levers import TRITON_LEVERS, TritonShape  # noqa: E402
from zeinspect.triton.model.part import triton_part  # noqa: E402
from zeinspect.triton.probes.audit import probe_triton  # noqa: E402

FP_FUSION = Lever(
    name="enable_fp_fusion", how=How.TRITON_OPTION, default=True, settings=lambda written: (True, False),
    cost=lambda value, written: int(value is False), describe=lambda value: f"fp fusion {'on' if value else 'off'}",
    spelling=lambda value, written: None if value else "enable_fp_fusion=False", parse=bool,
)

KERNEL_SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def fma_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    z = tl.load(z_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * y + z, mask=mask)
'''


@pytest.fixture
def lever():
    TRITON_LEVERS.register(FP_FUSION)
    yield FP_FUSION
    TRITON_LEVERS.unregister(FP_FUSION.name)


@pytest.fixture
def kernel_file(tmp_path):
    path = tmp_path / "fma.py"
    path.write_text(KERNEL_SOURCE)
    return path


def _kernel(path) -> TritonKernel:
    return TritonKernel(file=str(path), kernel="fma_kernel", signature={"x_ptr": "*fp32", "y_ptr": "*fp32",
                        "z_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32"}, constexprs={"BLOCK": 128})


def _fake_probe(seen: list):
    """A probe that spills unless fusion is off, and records each request it was given."""
    def probe(kernel, config, session, *, stage, progress=None):
        seen.append(kernel)
        spill = 0 if kernel.option("enable_fp_fusion", True) is False else 512
        report = KernelReport(input=kernel.label, kernel=kernel.kernel, target="arl-s", ip="12.74.4",
                              compiler="fake", shape=Shape(), status=Status.OK, source=Source.AOT, simd=16,
                              grf=128, spill_bytes=spill, private_bytes=0, scratch_space_bytes=spill)
        return Collection(reports=[report])
    return probe


def test_the_new_triton_lever_is_searched_recorded_and_spelt(lever, kernel_file, monkeypatch):
    seen: list[TritonKernel] = []
    monkeypatch.setattr(triton_fix, "probe_triton", _fake_probe(seen))
    search = triton_fix.search_triton(_kernel(kernel_file), Settings(targets=("arl-s",)), session=None)

    # Every shape of the grid was built with both of the new lever's settings, passed as a Triton option.
    assert {k.option("enable_fp_fusion") for k in seen} == {True, False}
    assert len(search.rows) == len(seen) == 2 * sum(k.option("enable_fp_fusion") is False for k in seen)
    winner = search.winner
    assert winner is not None and winner.shape.enable_fp_fusion is False and not winner.scratch_targets
    # The cheapest clean shape: nothing else departs from the written one.
    assert winner.shape == TritonShape(enable_fp_fusion=False)

    record = triton_judge.record(search)
    assert record["shape"]["enable_fp_fusion"] is False and record["cleans"]
    assert "enable_fp_fusion=False" in record["triton"]
    from zeinspect.triton.plugin import _describe_fix

    assert "enable_fp_fusion False" in _describe_fix("fma.py:fma_kernel", record)[0]
    assert "fp fusion off" in winner.shape.describe()


def test_the_gate_reads_the_new_lever_from_an_entry_and_from_a_recorded_decision(lever, kernel_file, tmp_path,
                                                                                 monkeypatch):
    gate = tmp_path / "gate.yaml"
    [entry] = parse_entries([{"kernel": f"{kernel_file}:fma_kernel", "enable_fp_fusion": False}], tmp_path,
                            str(gate))
    assert entry.kernel.option("enable_fp_fusion") is False

    # A decision `fix` recorded (its shape as record() writes it) is what the audit builds.
    [plain] = parse_entries([{"kernel": f"{kernel_file}:fma_kernel"}], tmp_path, str(gate))
    shapes = tmp_path / "shapes.yaml"
    shapes.write_text(yaml.safe_dump({"triton": {plain.kernel.label: {
        "shape": TritonShape(enable_fp_fusion=False).to_json()}}}))
    seen: list[TritonKernel] = []
    monkeypatch.setattr(triton_app, "probe_triton", _fake_probe(seen))
    triton_app.gate_reports(plain, Settings(targets=("arl-s",)), None, str(shapes), None)
    assert [k.option("enable_fp_fusion") for k in seen] == [False]


def test_without_the_lever_registered_a_gate_entry_naming_it_is_refused(kernel_file, tmp_path):
    from zeinspect.errors import InputError

    with pytest.raises(InputError, match="unknown setting 'enable_fp_fusion'"):
        parse_entries([{"kernel": f"{kernel_file}:fma_kernel", "enable_fp_fusion": False}], tmp_path, "gate.yaml")


def test_the_new_lever_reaches_tritons_compile(lever, kernel_file, sid_compiler):
    from zeinspect.app.session import open_session

    config = Settings(targets=("arl-s",), compiler=sid_compiler.id)
    session = open_session(config)
    kernel = _kernel(kernel_file)
    on = probe_triton(kernel, config, session, stage=False).reports
    off = probe_triton(kernel.with_options({"enable_fp_fusion": False}), config, session, stage=False).reports
    assert [r.status for r in on + off] == [Status.OK, Status.OK], [r.reason for r in on + off]
    # Triton's own metadata (its options as it compiled) carries the value the lever set.
    assert triton_part(off[0]).metadata["enable_fp_fusion"] is False
    assert "enable_fp_fusion" not in triton_part(on[0]).metadata
