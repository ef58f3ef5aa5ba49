"""How dumping compiles are batched (probes.explain._batches): IGC names a build's dumps by its
module's bytes, so a batch holds each module once; batches keep every worker busy."""

from __future__ import annotations

from zeinspect.inputs import Input
from zeinspect.probes.executor import MULTI_MAX_BYTES, MULTI_MAX_JOBS
from zeinspect.probes.explain import _batches, _Job
from zeinspect.settings import Settings

from ..fakes import FAKE_COMPILER


def _item(module: bytes, ip: str, spirv: bool = True) -> tuple[Settings, _Job]:
    inp = Input(path="m.spv", kind="spirv" if spirv else "opencl", data=module)
    return Settings(targets=("bmg-g21",)), _Job(inp, ip, FAKE_COMPILER, (ip,), "", "", None, module, spirv)


def test_the_same_module_on_several_ips_is_never_twice_in_one_batch(monkeypatch):
    monkeypatch.setattr("zeinspect.toolchain.knowledge.has_multi", lambda compiler: True)
    items = [_item(bytes([n]) * 1000, ip) for n in range(6) for ip in ("12.55.8", "20.1.0", "12.70.4")]
    batches = _batches(list(range(len(items))), items, workers=2)
    assert sorted(n for b in batches for n in b) == list(range(len(items)))
    for batch in batches:
        modules = [items[n][1].data for n in batch]
        assert len(set(modules)) == len(modules)
    assert len(batches) >= 4 and all(len(b) > 1 for b in batches)  # two per worker, each worth a process


def test_batches_hold_at_most_their_jobs_and_bytes_and_what_a_list_cannot_carry_is_alone(monkeypatch):
    monkeypatch.setattr("zeinspect.toolchain.knowledge.has_multi", lambda compiler: True)
    big = MULTI_MAX_BYTES // 3
    items = [_item(n.to_bytes(4, "little") * (big // 4), "12.55.8") for n in range(12)]
    items += [_item(n.to_bytes(4, "little") * 250, "12.55.8") for n in range(100, 100 + 3 * MULTI_MAX_JOBS)]
    items.append(_item(b"__kernel void k() {}", "12.55.8", spirv=False))
    batches = _batches(list(range(len(items))), items, workers=2)
    assert sorted(n for b in batches for n in b) == list(range(len(items)))
    assert all(len(b) <= MULTI_MAX_JOBS and sum(len(items[n][1].data) for n in b) <= MULTI_MAX_BYTES for b in batches)
    assert [len(items) - 1] in batches  # OpenCL C: built alone
