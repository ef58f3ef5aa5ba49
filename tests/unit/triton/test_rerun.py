"""triton.build.front_ends.Rerun: the front ends a warm screen needs again, batch by batch, in one
pool of workers across the batches.  Real worker processes (spawned, as in a screen) run a
stand-in for Triton's front end defined here: it says which process ran it, and dies in a worker
when asked to, so the pool's start, reuse, replacement and breakage are seen without Triton."""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass

import pytest

from zeinspect.triton.build import front_ends
from zeinspect.triton.build.front_ends import AUTOMATIC_FROM, Rerun


@dataclass(frozen=True)
class Kernel:
    kernel: str
    file: str = "entry.ttir"


def front_end(kernel: Kernel, caps: dict, target_name: str) -> tuple[str, bytes, dict]:
    """What Triton's front end gives, named after its request, with the process that ran it."""
    if kernel.kernel == "dies" and multiprocessing.parent_process() is not None:
        os._exit(1)  # a crash in a worker (Triton's native code); in the screening process it builds
    return f"{kernel.kernel}@{target_name}", kernel.kernel.encode(), {"pid": os.getpid()}


@pytest.fixture(autouse=True)
def stand_in(monkeypatch):
    monkeypatch.setattr(front_ends, "compile_kernel", front_end)


def batch(rerun: Rerun, names: list[str]) -> list[int]:
    """Submit a batch and take each result as the builds do: the pid of the process that ran each."""
    kernels = [Kernel(name) for name in names]
    rerun.submit([(k, {}, "bmg-g21") for k in kernels])
    got = [rerun.compile(k, {}, "bmg-g21") for k in kernels]
    assert [ttgir for ttgir, _, _ in got] == [f"{name}@bmg-g21" for name in names]  # each its own
    return [meta["pid"] for _, _, meta in got]


def test_one_pool_serves_the_batches_and_is_replaced_after_its_share():
    rerun = Rerun(2, recycle=2)
    try:
        first = batch(rerun, ["a", "b", "c"])
        second = batch(rerun, ["d"])  # 3 given, under 2 workers x 2: the same pool
        third = batch(rerun, ["e", "f"])  # 4 given: a new pool
    finally:
        rerun.close()
    assert os.getpid() not in first + second + third and rerun.from_workers == 6
    assert set(second) <= set(first)
    assert not set(third) & set(first + second)


def test_workers_start_once_the_screen_has_asked_for_enough():
    rerun = Rerun(None)
    size = AUTOMATIC_FROM // 2 + 1
    try:
        here = batch(rerun, [f"k{n}" for n in range(size)])  # fewer than AUTOMATIC_FROM so far
        there = batch(rerun, [f"m{n}" for n in range(size)])  # enough, counted over the screen
    finally:
        rerun.close()
    assert set(here) == {os.getpid()}
    assert os.getpid() not in there and rerun.from_workers == size


def test_a_dead_worker_costs_its_batch_the_pool_and_the_next_batch_has_a_new_one():
    rerun = Rerun(2)
    try:
        before = batch(rerun, ["a", "b"])
        broken = batch(rerun, ["dies", "c"])  # built here instead, all the same
        after = batch(rerun, ["d", "e"])
    finally:
        rerun.close()
    assert os.getpid() not in before and broken[0] == os.getpid()
    assert os.getpid() not in after and not set(after) & set(before)


def test_a_batch_that_needs_none_lets_the_idle_workers_go():
    rerun = Rerun(2)
    try:
        batch(rerun, ["a"])
        assert rerun.pool is not None
        rerun.submit([])
        assert rerun.pool is None
    finally:
        rerun.close()
