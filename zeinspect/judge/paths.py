"""The paths of one kernel compared, and the build's declared intent checked on each.

probes.paths says which path the runtime takes on each target (a native image, a fat binary's
generic_ir member, a SPIR-V image compiled at the first launch).  Two questions follow:

- *Inferred intent* (`differences`): where a kernel's native builds and JIT builds disagree in
  register file, SIMD width, stack calls or scratch (spill and private memory), the build did
  not ask the same of both.  The finding names what the JIT build's options asked for, as in
  vLLM's kernels, whose AOT link step alone carried `-cl-intel-256-GRF-per-thread`
  (vllm-xpu-kernels#348): the native images use 256 registers, the SPIR-V image asks for none
  and spills where it is compiled.
- *Declared intent* (`judge_intent`): the gate configuration's `intent:` rules (model.IntentRule)
  say what every path of every target must do; a path that misses one is an INTENT finding,
  which fails the gate unless the ratchet accepts it (`KERNEL TARGETS intent # reason`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .. import names
from ..model import (
    AUTO_GRF_WORDS,
    LARGE_GRF_WORDS,
    Compiler,
    IntentRule,
    KernelReport,
    RunPath,
    Status,
    Verdict,
    option_words,
)
from .audit import Judgement
from .ratchet import Ratchet, find_waiver, kernel_matches, targets_match


@dataclass(frozen=True)
class PathDifference:
    """One kernel of one product whose native and JIT builds disagree on one aspect."""

    product: str
    kernel: str
    via: str
    """The JIT path compared with the native images (model.RunPath's value)."""
    aspect: str
    """`grf`, `simd`, `stack_calls` or `scratch`."""
    native: tuple[int, ...]
    jit: tuple[int, ...]
    text: str

    def to_json(self) -> dict:
        return {"product": self.product, "kernel": self.kernel, "via": self.via, "aspect": self.aspect,
                "native": list(self.native), "jit": list(self.jit), "text": self.text}


def product_label(report: KernelReport) -> str:
    origin = report.origin
    if origin is None:
        return report.input
    return origin.file + (f"({origin.member})" if origin.member else "")


def _targets(reports: Iterable[KernelReport]) -> str:
    return ", ".join(sorted({r.target for r in reports}))


def asked_register_file(reports: Iterable[KernelReport]) -> str:
    """What a JIT build's options asked of the register file, in words, with the option."""
    words = option_words(*(r.options for r in reports))
    large = sorted(words & set(LARGE_GRF_WORDS))
    if large:
        return f"256 registers ({large[0]})"
    auto = sorted(words & set(AUTO_GRF_WORDS))
    if auto:
        return f"IGC's choice ({auto[0]})"
    return "none"


def _scratch(r: KernelReport) -> int:
    return r.shown_scratch_bytes


def _jit_side(jit: list[KernelReport], value: Callable[[list[KernelReport]], str]) -> str:
    """How the JIT builds came out, the targets that run them first."""
    served = [r for r in jit if r.path_taken]
    compared = [r for r in jit if not r.path_taken]
    parts = []
    for group, what in ((served, "on targets served by JIT"), (compared, "built for comparison on")):
        if group:
            worst = max(group, key=_scratch)
            spill = f", {_scratch(worst):,} B of scratch" if _scratch(worst) else ", no scratch"
            parts.append(f"{what} {_targets(group)}: {value(group)}{spill}")
    return "; ".join(parts)


def differences(reports: list[KernelReport]) -> list[PathDifference]:
    """Every kernel whose native builds and builds of one JIT path disagree, per product: one
    finding per JIT path and aspect."""
    groups: dict[tuple[str, str], list[KernelReport]] = {}
    for r in reports:
        if r.path is not None and r.status is Status.OK and r.applicable:
            groups.setdefault((product_label(r), r.kernel), []).append(r)
    out = []
    for (product, kernel), group in groups.items():
        native = [r for r in group if r.path is RunPath.NATIVE]
        for kind in (RunPath.SPIRV, RunPath.GENERIC_IR, RunPath.NATIVE_IR):
            jit = [r for r in group if r.path is kind]
            # Like with like where both were built on a target (a JIT build made beside the native
            # code to be compared): two architectures differ for reasons of their own.
            common = {r.target for r in native} & {r.target for r in jit}
            if native and jit and (not common or _differ([r for r in native if r.target in common],
                                                          [r for r in jit if r.target in common])):
                out += _compared(product, kernel, native, jit, kind)
    return out


def _differ(native: list[KernelReport], jit: list[KernelReport]) -> bool:
    by_target = {r.target: r for r in native}
    return any((r.grf, r.simd, r.stack_calls, bool(_scratch(r))) !=
               (n.grf, n.simd, n.stack_calls, bool(_scratch(n))) for r in jit if (n := by_target.get(r.target)))


def _compared(product: str, kernel: str, native: list[KernelReport], jit: list[KernelReport], kind: RunPath
              ) -> list[PathDifference]:
    via, short, out = kind.built_from, names.short(kernel), []
    n_grf, j_grf = _values(native, "grf"), _values(jit, "grf")
    n_simd, j_simd = _values(native, "simd"), _values(jit, "simd")
    if n_grf and j_grf and n_grf != j_grf:
        out.append(PathDifference(product, kernel, kind.value, "grf", n_grf, j_grf, (
            f"{short}: native images use {_join(n_grf)} registers ({_targets(native)}); the {via}'s options ask "
            f"for {asked_register_file(jit)}: " + _jit_side(jit, lambda g: f"{_join(_values(g, 'grf'))} registers"))))
    if n_simd and j_simd and n_simd != j_simd:
        out.append(PathDifference(product, kernel, kind.value, "simd", n_simd, j_simd, (
            f"{short}: native images are SIMD{_join(n_simd)} ({_targets(native)}); the {via}'s builds: "
            + _jit_side(jit, lambda g: f"SIMD{_join(_values(g, 'simd'))}"))))
    n_calls, j_calls = {r.stack_calls for r in native}, {r.stack_calls for r in jit}
    if n_calls != j_calls and len(n_calls) == len(j_calls) == 1:
        made = "make" if True in j_calls else "make no"
        out.append(PathDifference(product, kernel, kind.value, "stack_calls", tuple(sorted(map(int, n_calls))),
                                  tuple(sorted(map(int, j_calls))), (
            f"{short}: native images make {'' if True in n_calls else 'no '}stack calls ({_targets(native)}); the "
            f"{via}'s builds {made} stack calls (each reserves a call stack in scratch)")))
    n_scratch, j_scratch = _scratch_values(native), _scratch_values(jit)
    if (n_grf == j_grf and n_simd == j_simd) and bool(max(n_scratch)) != bool(max(j_scratch)):
        out.append(PathDifference(product, kernel, kind.value, "scratch", n_scratch, j_scratch, (
            f"{short}: in the same shape, native images use {_join(n_scratch)} B of scratch and the {via}'s "
            f"builds {_join(j_scratch)} B (the JIT path is built by the driver's compiler, with the image's "
            "options)")))
    return out


def _values(reports: list[KernelReport], field: str) -> tuple[int, ...]:
    return tuple(sorted({v for r in reports if (v := getattr(r, field)) is not None}))


def _scratch_values(reports: list[KernelReport]) -> tuple[int, ...]:
    return tuple(sorted({_scratch(r) for r in reports}))


def _join(values: tuple[int, ...]) -> str:
    return "/".join(f"{v:,}" for v in values)


def _where(r: KernelReport) -> str:
    via = f"{r.path.value} path" if r.path is not None else "build"
    compared = " (a comparison build: the runtime does not take this path there)" if r.path_taken is False else ""
    return f"{names.short(r.kernel)} on {r.target}, {via}{compared} ({r.input})"


def _misses(rule: IntentRule, r: KernelReport) -> list[str]:
    out = []
    if rule.grf is not None and r.grf is not None and r.grf != rule.grf:
        asked = f"; its options ask for {asked_register_file([r])}" if r.path is not None and r.path.jit else ""
        spill = f", {_scratch(r):,} B of scratch" if _scratch(r) else ""
        out.append(f"has {r.grf} registers{spill}, the intent is {rule.grf}{asked}")
    if rule.sub_group is not None and r.simd is not None and r.simd != rule.sub_group:
        out.append(f"is SIMD{r.simd}, the intent is sub-group size {rule.sub_group}")
    return out


def judge_intent(reports: list[KernelReport], rules: tuple[IntentRule, ...], ratchet: Ratchet,
                 compilers: list[Compiler]) -> list[Judgement]:
    """An INTENT finding for every path of every target that misses a rule (LISTED where the
    ratchet accepts it); a `native_on` target where a kernel has no native image is one too."""
    out = []

    def finding(r: KernelReport, what: str, rule: IntentRule) -> None:
        waiver = find_waiver(ratchet, r, compilers)
        text = f"{_where(r)} {what} (intent `{rule.kernels}`)"
        if waiver is not None:
            out.append(Judgement(Verdict.LISTED, f"{text}: accepted by {ratchet.path} line {waiver.lineno}: "
                                 f"{waiver.reason}", r))
        else:
            out.append(Judgement(Verdict.INTENT, text, r))

    for rule in rules:
        matched = [r for r in reports if r.status is Status.OK and r.applicable and kernel_matches(rule.kernels, r.kernel)]
        for r in matched:
            for miss in _misses(rule, r):
                finding(r, miss, rule)
        for target in rule.native_on:
            here = [r for r in matched if targets_match(target, r, compilers)]
            if matched and not here:
                out.append(Judgement(Verdict.INTENT, f"intent `{rule.kernels}`: native_on {target}, a target this "
                                     "run did not build: name it among the targets to check it"))
            native = {(product_label(r), r.kernel) for r in here if r.path is RunPath.NATIVE}
            for r in here:
                if r.path_taken and (product_label(r), r.kernel) not in native:
                    via = r.path.built_from if r.path is not None and r.path.jit else "module"
                    finding(r, f"has no native image: the driver compiles its {via} at the first launch", rule)
    return out


def taken_counts(reports: list[KernelReport]) -> dict[str, int]:
    """(kernel, target) pairs of shipped products by the path the runtime takes there."""
    out: dict[str, set] = {}
    for r in reports:
        if r.path is not None and r.path_taken:
            out.setdefault(r.path.value, set()).add((product_label(r), r.kernel, r.target))
    return {via: len(pairs) for via, pairs in sorted(out.items())}
