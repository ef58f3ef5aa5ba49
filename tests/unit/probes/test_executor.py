"""The cache in front of any executor: hits never reach the backend, twins compile once."""

from __future__ import annotations

from zeinspect.cache import BuildCache
from zeinspect.inputs import Input
from zeinspect.levers import DEFAULT_SHAPE
from zeinspect.probes.executor import CachedExecutor, Job

from ..fakes import FAKE_COMPILER, FakeBackend, figures


def job(ip: str, source: bytes = b"__kernel void k() {}") -> Job:
    inp = Input(path="k.cl", kind="opencl", data=source)
    return Job(inp, source, inp.kind, ip, FAKE_COMPILER, "", "", DEFAULT_SHAPE)


def test_identical_jobs_compile_once_and_a_second_run_is_served_from_the_cache(tmp_path):
    backend = FakeBackend(lambda j: [figures(spill=64)])
    jobs = [job("12.55.8"), job("12.55.8"), job("20.1.0")]
    first = CachedExecutor(backend, BuildCache(tmp_path))
    got = first.run(jobs)
    assert [c.figures[0].spill_bytes for c in got] == [64, 64, 64]
    assert len(backend.ran) == 2 and first.stats().shared == 1 and first.stats().cache_hits == 0
    again = CachedExecutor(FakeBackend(lambda j: None), BuildCache(tmp_path))
    got = again.run(jobs)
    assert all(c.from_cache for c in got) and again.stats().cache_hits == 2 and again.stats().compiles == 0


def test_results_stream_to_on_result_and_none_are_kept(tmp_path):
    seen = {}
    executor = CachedExecutor(FakeBackend(lambda j: [figures()]), BuildCache(None))
    kept = executor.run([job("12.55.8"), job("20.1.0")], on_result=lambda i, c: seen.setdefault(i, c))
    assert sorted(seen) == [0, 1] and kept == [None, None]


def test_a_different_module_or_ip_is_a_different_job():
    assert job("12.55.8").key != job("20.1.0").key
    assert job("12.55.8").key != job("12.55.8", b"__kernel void j() {}").key
    assert job("12.55.8").key == job("12.55.8").key
