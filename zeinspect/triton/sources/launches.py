"""A run's launches, read: what a captured command launched (triton.capture's lines), as the
specializations a library screen builds; and the protocol every source of them follows (a
capture, a Triton cache: triton.sources.cache).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from ...ledger import Part
from ..model.kernel import DTYPE_PREFIX, IR_SUFFIX, LAUNCH_OPTIONS, TRITON_GRF_MODES, TritonKernel, entry_kernel


@dataclass
class Specialization:
    kernel: TritonKernel
    launches: int = 0
    """How often it was launched (a capture) or found (copies in a Triton cache)."""
    sites: list[str] = field(default_factory=list)
    devices: set[str] = field(default_factory=set)
    origin: str | None = None
    """The kernel's Python file where `kernel.file` is not it (a cache entry's TTIR names it)."""
    tag: str | None = None
    """What else sets it apart where its constexprs are not known (a cache entry's folder)."""
    graph: str | None = None
    """The torch.compile graph Inductor generated it for, in a capture (triton.capture.inductor); None
    for a kernel the command launched itself."""
    problem: str | None = None
    """Why it cannot be screened, known when it was captured (its front end failed in the run)."""
    staged: bool = False
    """Built with the SLM staging pass between Triton's TTGIR and its lowering (`--stage`)."""

    @property
    def describe(self) -> str:
        """What sets it apart, as a row names it: its constexprs and warps."""
        values = ", ".join(f"{k}={str(v).removeprefix(DTYPE_PREFIX)}"
                           for k, v in sorted(self.kernel.constexprs.items()))
        return ", ".join(x for x in (values, f"num_warps={self.kernel.num_warps}", self.tag) if x)

    @property
    def label(self) -> str:
        """`FILE.py:KERNEL`: by its Python file also where it is built from the run's TTIR."""
        return f"{self.origin}:{self.kernel.kernel}" if self.origin and self.graph is None else self.kernel.label

    @property
    def title(self) -> str:
        """The kernel and what sets this specialization apart, as notes and incidents name it."""
        return f"{self.label} [{self.describe}]"

    @property
    def types(self) -> str:
        """Its pointers' types, as the launch's tensors gave them."""
        return ", ".join(f"{k}:{v}" for k, v in self.kernel.signature.items() if str(v).startswith("*"))


@dataclass
class Capture:
    """What a command launched (triton.capture): the source of a library screen."""

    KIND: ClassVar[str] = "capture"
    command: list[str]
    exit_code: int | None
    timed_out: bool
    specializations: list[Specialization]
    problems: list[str] = field(default_factory=list)
    """Lines that did not read, and what the capture could not install."""
    incidents: list[str] = field(default_factory=list)
    xpu: StandIn | None = None
    """What the stand-in XPU device answered (triton.capture.xpu), if the command imported torch."""
    parts: list[Part] = field(default_factory=list)
    """What the capture declares beside its specializations (each declared as it is screened)."""
    DECLARED_BY: ClassVar[str] = "launches the command made"

    @property
    def label(self) -> str:
        """The ledger's input: the command."""
        return " ".join(self.command)[:200]

    @property
    def launches(self) -> int:
        return sum(s.launches for s in self.specializations if s.graph is None)

    @property
    def devices(self) -> set[str]:
        return {d for s in self.specializations for d in s.devices}

    def summary(self) -> str:
        launched = [s for s in self.specializations if s.graph is None]
        generated = [s for s in self.specializations if s.graph is not None]
        kernels = len({s.label for s in launched})
        status = ("timed out" if self.timed_out else "crashed" if self.exit_code is not None and self.exit_code < 0
                  else f"exit {self.exit_code}")
        text = (f"captured {self.launches} launches of {kernels} kernels ({len(launched)} "
                f"specializations) from `{' '.join(self.command)[:120]}` ({status}; the command's own status, "
                "not the screen's)")
        if generated:
            graphs = len({s.graph for s in generated})
            text += (f"; torch.compile: Inductor generated {len({(s.graph, s.kernel.kernel) for s in generated})} "
                     "Triton kernels "
                     f"({len(generated)} autotune configs) for xpu in {graphs} graph{'s' if graphs > 1 else ''}, "
                     "all screened (nothing generated runs here)")
        if self.specializations and "xpu" not in self.devices:
            text += (f"; its tensors were on {', '.join(sorted(self.devices)) or 'no device'}, not an Intel GPU: "
                     "a library that picks values by device took its other branch")
        if self.xpu is not None:
            text += f"; {self.xpu.summary()}"
        return text

    def where(self, spec: Specialization) -> str:
        """Where a specialization came from, for its note."""
        if spec.graph is not None:
            return (f"generated by Inductor for xpu (graph {spec.graph}), compiled from "
                    f"{', '.join(spec.sites[:3]) or '?'}")
        return f"launched {spec.launches} times ({spec.types}), from {', '.join(spec.sites[:3]) or '?'}"

    def to_json(self) -> dict:
        return {"command": self.command, "exit_code": self.exit_code, "timed_out": self.timed_out,
                "launches": self.launches, "devices": sorted(self.devices), "summary": self.summary(),
                "xpu": self.xpu.to_json() if self.xpu is not None else None,
                "specializations": [{"kernel": s.kernel.kernel if s.graph else s.label, "values": s.describe,
                                     "ttir": s.kernel.file if s.kernel.file.endswith(IR_SUFFIX) else None,
                                     "not_screened": s.problem,
                                     "launches": s.launches,
                                     "signature": s.kernel.signature, "constexprs": s.kernel.constexprs,
                                     "num_warps": s.kernel.num_warps, "attrs": [list(a) for a in s.kernel.attrs],
                                     "sites": s.sites, "devices": sorted(s.devices), "inductor_graph": s.graph}
                                    for s in self.specializations]}


@dataclass
class StandIn:
    """What torch.xpu answered the command for, and what it read (triton.capture.xpu's lines)."""

    target: str
    name: str
    answered: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    tensors: str = "host"
    """Where tensors put on xpu were: `host`, on zeinspect's host XPU device (triton.capture.host_xpu);
    `cpu`, CPU tensors that said they were on xpu (when the host device could not be built)."""

    @classmethod
    def of(cls, records: list[dict]) -> StandIn | None:
        head = next((r for r in records if "xpu_target" in r), None)
        if head is None:
            return None
        out = cls(str(head["xpu_target"]), str(head.get("xpu_name")), tensors=str(head.get("xpu_tensors", "cpu")))
        for r in records:
            if "xpu" in r and str(r["xpu"]) not in out.answered:
                out.answered.append(str(r["xpu"]))
            if "xpu_refused" in r and str(r["xpu_refused"]) not in out.refused:
                out.refused.append(str(r["xpu_refused"]))
        return out

    def summary(self) -> str:
        read = ", ".join(self.answered) or "nothing"
        where = ("tensors on xpu in host memory, computed on the CPU" if self.tensors == "host"
                 else "tensors on the CPU")
        text = f"torch.xpu stood in for {self.name} ({self.target}), {where}; the command read: {read}"
        if self.refused:
            text += f"; XPU-only calls it could not answer: {', '.join(self.refused)}"
        return text

    def to_json(self) -> dict:
        return {"target": self.target, "name": self.name, "answered": self.answered, "refused": self.refused,
                "tensors": self.tensors}


class Source(Protocol):
    """Where a library screen's specializations come from: a capture, or a Triton cache (triton.sources.cache)."""

    KIND: ClassVar[str]
    """Its key in the JSON document."""
    specializations: list[Specialization]
    problems: list[str]
    incidents: list[str]
    """Internal errors, each kept to the part of the source it happened on."""
    parts: list[Part]
    """What it declares beside its specializations (a cache's entries that did not read)."""
    DECLARED_BY: ClassVar[str]

    @property
    def label(self) -> str: ...

    def summary(self) -> str: ...

    def where(self, spec: Specialization) -> str: ...

    def to_json(self) -> dict: ...


def read_launches(command: list[str], code: int | None, timed_out: bool, lines: list[str]) -> Capture:
    """The capture's lines (one JSON launch each) as specializations, identical ones counted."""
    reader = LaunchReader()
    for line in lines:
        reader.feed(line)
    return reader.capture(command, code, timed_out)


class LaunchReader:
    """Launch lines read one at a time into specializations.  A line seen before is a launch of
    the specialization it was the first time (the same kernel, values, site and devices): a
    library's run repeats a few lines thousands of times, and those are counted, not parsed."""

    def __init__(self) -> None:
        self.found: dict[str, Specialization] = {}
        self.seen: dict[str, Specialization] = {}
        self.problems: list[str] = []
        self.lost: list[str] = []
        """Launch lines that did not read: launches lost, their kernels unknown (unread)."""
        self.xpu: list[dict] = []
        self.n = 0

    def feed(self, line: str) -> None:
        self.n += 1
        spec = self.seen.get(line)
        if spec is not None:
            spec.launches += 1
            return
        n = self.n
        try:
            record = json.loads(line)
        except ValueError:
            self.problems.append(f"capture line {n} does not read (cut short?)")
            self.lost.append(f"capture line {n} does not read (cut short?)")
            return
        if isinstance(record, dict) and {"xpu", "xpu_target", "xpu_refused"} & set(record):
            self.xpu.append(record)  # what the stand-in XPU answered, or could not (triton.capture.xpu)
            if "error" in record:
                self.problems.append(str(record["error"]))
            return
        if not isinstance(record, dict) or "error" in record:
            self.problems.append(str(record["error"]) if isinstance(record, dict)
                                 else f"capture line {n} is not a launch")
            return
        try:
            spec = (_generated if "inductor" in record else _specialization)(self.found, record)
        except (KeyError, TypeError, ValueError, OSError) as exc:
            self.problems.append(f"capture line {n} is not a launch ({exc.__class__.__name__}: {exc})"[:200])
            self.lost.append(self.problems[-1])
            return
        self.seen[line] = spec
        spec.launches += 1
        if record.get("site") and record["site"] not in spec.sites:
            spec.sites.append(record["site"])
        spec.devices.update(record.get("devices") or ["no tensor"])

    def capture(self, command: list[str], code: int | None, timed_out: bool) -> Capture:
        got = Capture(list(command), code, timed_out, list(self.found.values()), list(self.problems),
                      xpu=StandIn.of(self.xpu))
        got.parts += [Part(got.label, f"{got.label} (launch {n + 1} lost)", None, got.DECLARED_BY, unread=why)
                      for n, why in enumerate(self.lost)]
        return got


def _specialization(found: dict[str, Specialization], record: dict) -> Specialization:
    """The specialization a launch record is one of, made at its first launch: identical launches
    are one, keyed by what the kernel is built from (a library's run launches the same few
    kernels thousands of times: no object is made per launch).  It is built from the TTIR the
    run's own front end wrote (triton.capture.first_stage: the function that ran, with its globals),
    its values kept to name it; or it says why its front end failed there."""
    num_warps, threads, grf = record.get("num_warps") or 4, record.get("threads_per_warp") or 32, _grf(
        record.get("grf_mode"))
    attrs = record.get("attrs", [])
    key = repr((record["file"], record["kernel"], sorted(record["signature"].items()),
                sorted(record["constexprs"].items()), num_warps, threads, grf, record.get("num_stages"), attrs))
    spec = found.get(key)
    if spec is None:
        kernel = TritonKernel(
            file=record["file"], kernel=record["kernel"], signature=dict(record["signature"]),
            constexprs=dict(record["constexprs"]), num_warps=num_warps, threads_per_warp=threads, grf_mode=grf,
            num_stages=record.get("num_stages"), options_given=frozenset(LAUNCH_OPTIONS),
            attrs=tuple((tuple(k), v) for k, v in attrs))
        origin, problem = None, record.get("front_end")
        if record.get("ttir"):
            meta_path = Path(record["ttir"])
            try:
                built = entry_kernel(meta_path.with_suffix(IR_SUFFIX), json.loads(meta_path.read_bytes()))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                problem = f"the TTIR its run wrote does not read ({exc.__class__.__name__}: {exc})"[:300]
            else:
                kernel = dataclasses.replace(built, signature=kernel.signature, constexprs=kernel.constexprs,
                                             attrs=kernel.attrs)
                origin = record["file"]
        spec = found[key] = Specialization(kernel, origin=origin, problem=problem)
    return spec


def _generated(found: dict[str, Specialization], record: dict) -> Specialization:
    """A kernel config Inductor generated for xpu in the command (triton.capture.inductor): its Triton
    cache entry (TTIR and metadata), screened as a cache entry is; named by the command's line
    that ran the compiled code, its graph and its config."""
    meta_path = Path(record["inductor"])
    key = repr(("inductor", str(meta_path)))
    spec = found.get(key)
    if spec is None:
        meta = json.loads(meta_path.read_bytes())
        config = ", ".join(f"{k}={v}" for k, v in (record.get("config") or {}).items() if k != "num_warps")
        site = str(record.get("site") or "")
        graph = str(record.get("graph") or "?")
        spec = found[key] = Specialization(
            entry_kernel(meta_path.with_suffix(IR_SUFFIX), meta), origin=site.rpartition(":")[0] or None,
            tag=f"Inductor graph {graph}" + (f", {config}" if config else ""), graph=graph)
    return spec


def _grf(value: Any) -> str:
    return value if value in TRITON_GRF_MODES else "default"
