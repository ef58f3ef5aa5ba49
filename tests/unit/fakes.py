"""Fakes for the unit tier: a compiler that is never run and an executor that compiles nothing.

The figures a fake compile returns are chosen by the test; what is under test is what the
layers above make of them (reports, verdicts, ranking, views), not what IGC decides.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zeinspect.levers import Shape
from zeinspect.model import Compiler, KernelFigures, KernelReport, Source, Status
from zeinspect.probes.executor import Compiled, Job
from zeinspect.probes.results import CompileStats

FAKE_COMPILER = Compiler(id="ocloc-0.0.1/igc-0.0.1", path="/nonexistent/ocloc", ocloc_version="26.27.1",
                         igc_version="2.40.0", targets=("tgllp", "dg2-g10", "bmg-g21"),
                         ip_map=(("tgllp", ("12.0.0",)), ("dg2-g10", ("12.55.8",)), ("bmg-g21", ("20.1.0",))))


def figures(name: str = "k", *, spill: int = 0, private: int = 0, slot: int | None = None, grf: int = 128,
            simd: int = 16) -> KernelFigures:
    return KernelFigures(name=name, simd=simd, grf=grf, spill_bytes=spill, private_bytes=private, slm_bytes=0,
                         scratch_space_bytes=slot or (spill + private), largest_scratch_slot=slot or (spill + private))


def report(kernel: str = "k", target: str = "dg2-g10", *, ip: str = "12.55.8", spill: int = 0, private: int = 0,
           grf: int = 128,
           status: Status = Status.OK, input: str = "k.cl", **extra) -> KernelReport:
    return KernelReport(input=input, kernel=kernel, target=target, ip=ip, compiler=FAKE_COMPILER.id, shape=Shape(),
                        status=status, source=Source.AOT, simd=16, grf=grf, spill_bytes=spill, private_bytes=private,
                        scratch_space_bytes=spill + private, **extra)


@dataclass
class FakeBackend:
    """An Executor that answers each job with the figures `answer(job)` gives, and counts."""

    answer: callable
    ran: list[Job] = field(default_factory=list)

    def run(self, jobs, progress, on_result):
        for i, job in enumerate(jobs):
            self.ran.append(job)
            kernels = self.answer(job)
            failed = kernels is None
            on_result(i, Compiled(None, 1 if failed else 0, "Build failed." if failed else "Build succeeded.\n",
                                  None if failed else b"zebin", ["k"], False, ["ocloc"], None if failed else kernels,
                                  None if failed else (1, 60)))
            if progress:
                progress(i + 1, len(jobs))

    def stats(self) -> CompileStats:
        return CompileStats(compiles=len(self.ran))
