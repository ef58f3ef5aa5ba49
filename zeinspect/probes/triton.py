"""The Triton front end: compile a `@triton.jit` kernel offline for Intel targets, no GPU.

PyPI's triton-xpu compiles to SPIR-V without a device once its backend does not build the
small C helper that only maps a SYCL architecture number to a name (it needs torch and
SYCL headers): `_OfflineXPUBackend` skips it and takes the target's capabilities from the
real compiler instead (`ocloc query CL_DEVICE_EXTENSIONS -device T`): with
cl_intel_subgroup_matrix_multiply_accumulate a `tl.dot` takes the DPAS path, without it
the FMA path.  Targets with the same capabilities share one Triton compile; each keeps its
TTGIR and SPIR-V on disk, and the SPIR-V is then audited like any other, with the build
flags Triton chose (its `grf_mode`).

With `stage=True` the SLM staging pass (levers.slm_staging) rewrites the TTGIR between Triton's
TTGIR and its lowering, and compilation resumes from the rewritten TTGIR.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, ToolchainError, UsageError
from ..inputs import Input
from ..inputs.kinds import InputKind
from ..inputs.triton_source import pointer_arguments
from ..levers.slm_staging import StagingResult
from ..model import Compiler, KernelReport, Status
from ..paths import build_cache_dir
from ..toolchain.knowledge import device_extensions, remembered
from ..toolchain.targets import TargetPlan
from . import triton_module

EXTENSIONS_WANTED = {
    "has_subgroup_matrix_multiply_accumulate": "cl_intel_subgroup_matrix_multiply_accumulate",
    "has_subgroup_matrix_multiply_accumulate_tensor_float32":
        "cl_intel_subgroup_matrix_multiply_accumulate_tensor_float32",
    "has_subgroup_2d_block_io": "cl_intel_subgroup_2d_block_io",
    "has_bfloat16_conversions": "cl_intel_bfloat16_conversions",
}
GRF_MODES = ("default", "small", "large", "auto")
SLM_BYTES = 65536  # every target in the default list offers 64 KiB of SLM per work-group


@dataclass(frozen=True)
class TritonKernel:
    """What to compile: `FILE.py:KERNEL` with its signature and constexpr values."""

    file: str
    kernel: str
    signature: dict
    constexprs: dict
    num_warps: int = 4
    threads_per_warp: int = 32
    grf_mode: str = "default"
    num_stages: int | None = None
    """Software pipelining depth; None: Triton's default."""

    @property
    def label(self) -> str:
        return f"{self.file}:{self.kernel}"


@dataclass(frozen=True)
class AutotuneConfig:
    """One `triton.Config` of a kernel's `@triton.autotune`, as the module builds it."""

    constexprs: dict
    num_warps: int
    num_stages: int | None
    grf_mode: str | None

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.constexprs.items()] + [f"num_warps={self.num_warps}"]
        parts += [f"num_stages={self.num_stages}"] if self.num_stages is not None else []
        parts += [f"grf_mode={self.grf_mode}"] if self.grf_mode else []
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {"constexprs": self.constexprs, "num_warps": self.num_warps, "num_stages": self.num_stages,
                "grf_mode": self.grf_mode}

    @classmethod
    def of(cls, config) -> AutotuneConfig:
        """From a `triton.Config` (a `grf_mode` among its kwargs is Triton-XPU's launch option)."""
        return cls(constexprs={k: v for k, v in config.kwargs.items() if k != "grf_mode"},
                   num_warps=config.num_warps, num_stages=config.num_stages, grf_mode=config.kwargs.get("grf_mode"))

    def applied_to(self, kernel: TritonKernel) -> TritonKernel:
        return dataclasses.replace(kernel, constexprs={**kernel.constexprs, **self.constexprs},
                                   num_warps=self.num_warps, num_stages=self.num_stages,
                                   grf_mode=self.grf_mode or kernel.grf_mode)


def parse_spec(spec: str) -> tuple[str, str]:
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:KERNEL, not {spec!r}")
    return path, name


def parse_pairs(text: str | None, what: str) -> dict:
    """NAME=VALUE pairs; in a signature a bare `*TYPE` is the type of every pointer (key `*`)."""
    out = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        if what == "signature" and part.startswith("*") and "=" not in part:
            out["*"] = part
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--{what}: expected NAME=VALUE pairs separated by commas, not {part!r}")
        out[key.strip()] = value.strip()
    return out


def constexpr_value(text: str):
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _triton():
    try:
        import triton
        import triton.backends.intel.compiler  # noqa: F401 - only triton-xpu has it
    except ImportError:
        raise ToolchainError("the Triton front end needs triton-xpu: pip install 'zeinspect[triton]'") from None
    return triton


def _install_offline_backend():
    """Register a subclass of Intel's backend that skips the SYCL-only helper."""
    triton = _triton()
    from triton.backends import backends
    from triton.backends.compiler import BaseBackend
    from triton.backends.intel import compiler as ic

    if getattr(backends["intel"].compiler, "_zeinspect_offline", False):
        return triton

    class _OfflineXPUBackend(ic.XPUBackend):
        _zeinspect_offline = True

        def __init__(self, target):
            BaseBackend.__init__(self, target)
            self.device_arch = ""  # nothing to look up: the capabilities come with the target
            self.properties = self.parse_target(target.arch)
            self.binary_ext = "spv"

    backends["intel"] = dataclasses.replace(backends["intel"], compiler=_OfflineXPUBackend)
    return triton


def capabilities(compiler: Compiler, target: str) -> dict:
    """What the real compiler says the target offers (kept with the toolchains)."""

    def ask() -> dict:
        found = device_extensions(compiler, target)
        if found is None:
            raise ToolchainError(f"{compiler.id} cannot list the extensions of {target}")
        extensions = set(found)
        caps: dict[str, object] = {flag: ext in extensions for flag, ext in EXTENSIONS_WANTED.items()}
        major = int(compiler.ips(target)[0].split(".")[0]) if compiler.ips(target) else 12
        caps["sub_group_sizes"] = [16, 32] if major >= 20 else [8, 16, 32]
        return caps

    return remembered("capabilities.json", f"{compiler.id}|{target}", ask)


@dataclass
class TritonBuild:
    """One Triton compile for a group of targets that share capabilities."""

    targets: list[str]
    caps: dict
    ttgir: str
    spirv: bytes
    metadata: dict
    staging: StagingResult | None = None
    artifacts: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _target(caps: dict, name: str, threads_per_warp: int):
    from triton.backends.compiler import GPUTarget

    return GPUTarget("xpu", {"name": name, **caps}, threads_per_warp)


def _options(kernel: TritonKernel) -> dict:
    if kernel.grf_mode not in GRF_MODES:
        raise UsageError(f"--grf-mode must be one of {', '.join(GRF_MODES)}")
    options = {"num_warps": kernel.num_warps, "threads_per_warp": kernel.threads_per_warp, "grf_mode": kernel.grf_mode}
    if kernel.num_stages is not None:
        options["num_stages"] = kernel.num_stages
    return options


def autotune_configs(kernel: TritonKernel, plan: TargetPlan) -> list[tuple[AutotuneConfig, tuple[str, ...]]]:
    """The configs of the kernel's `@triton.autotune` as the module builds them for each planned
    target (the offline driver answers for each, so a module that picks configs by the device
    gets each device's), each with the targets whose list has it, in first-seen order."""
    found: dict[str, tuple[AutotuneConfig, list[str]]] = {}
    for target in plan.targets:
        caps = capabilities(plan.compiler_for_ip[target.ip], target.name)
        obj = loaded_module(kernel.file, caps, target.name, kernel.threads_per_warp).kernel(kernel.kernel)
        configs = getattr(obj, "configs", None)
        if not configs:
            raise UsageError(f"{kernel.label} has no @triton.autotune configs")
        for c in configs:
            tuned = AutotuneConfig.of(c)
            found.setdefault(json.dumps(tuned.to_json(), sort_keys=True, default=str), (tuned, []))[1].append(
                target.name)
    return [(tuned, tuple(targets)) for tuned, targets in found.values()]


def screen_autotune(kernel: TritonKernel, config, *, policy: str = "jit", progress=None):
    """Every autotune config on every planned target whose config list has it: [(config,
    Collection)], in the module's order.

    Configs run side by side: Triton's own compiles one at a time (one MLIR context), each
    config's ocloc compiles (and its rebuilds) in parallel with the others', through the cache."""
    from ..toolchain.targets import plan_targets
    from .aot import resolve_compilers

    plan = plan_targets(config.targets, resolve_compilers(config))
    found = autotune_configs(kernel, plan)
    everywhere = tuple(t.name for t in plan.targets)
    return screen_configs(kernel, [c for c, _ in found], config, policy=policy, progress=progress,
                          targets=[None if ts == everywhere else ts for _, ts in found])


def screen_configs(kernel: TritonKernel, configs: list[AutotuneConfig], config, *, policy: str = "jit",
                   progress=None, targets: list[tuple[str, ...] | None] | None = None
                   ) -> list[tuple[AutotuneConfig, object]]:
    """The given configs on every planned target (or, per config, on `targets[i]`), side by side
    (see screen_autotune)."""
    from concurrent.futures import ThreadPoolExecutor

    done: list[AutotuneConfig] = []
    only = targets or [None] * len(configs)

    def one(item):
        c, on = item
        got = probe_triton(c.applied_to(kernel), dataclasses.replace(config, targets=on) if on else config,
                           stage=False, policy=policy, triton_lock=_TRITON_LOCK)
        if on:
            got.notes.append(f"in the module's configs for {', '.join(on)} only")
        done.append(c)
        if progress:
            progress(len(done), len(configs))
        return c, got

    with ThreadPoolExecutor(max_workers=max(1, len(configs))) as pool:
        return list(pool.map(one, zip(configs, only)))


_TRITON_LOCK = threading.Lock()


def _metadata(compiled) -> dict:
    meta = compiled.metadata._asdict() if hasattr(compiled.metadata, "_asdict") else dict(compiled.metadata)
    return {k: meta.get(k) for k in ("name", "build_flags", "shared", "num_warps", "threads_per_warp")}


def is_pointer(arg: str) -> bool:
    """Whether an argument is a pointer by its name (`a_ptr`, `out_ptr`, `X_ptr`): the
    convention of Triton's tutorials; kernels that do not follow it are read by use
    (inputs.triton_source)."""
    return "ptr" in arg.lower()


def pointers_by_use(fn) -> list[str]:
    """The arguments the kernel's source loads from, stores to or builds block pointers on."""
    source = getattr(fn, "src", None)
    found = pointer_arguments(source, [p.name for p in fn.params]) if isinstance(source, str) else None
    return found or []


def loaded_module(path: str, caps: dict, target_name: str, threads_per_warp: int):
    """The module at `path` as loaded for this target (triton_module), once per target."""
    key = (str(Path(path).resolve()), json.dumps(caps, sort_keys=True), target_name, threads_per_warp)
    if key not in _MODULES:
        if not Path(path).is_file():
            raise InputError("no such Triton source file", path=path)
        _install_offline_backend()
        _MODULES[key] = triton_module.load(path, _target(caps, target_name, threads_per_warp))
    return _MODULES[key]


_MODULES: dict = {}


def signature_for(fn, kernel: TritonKernel) -> tuple[dict, dict, list[str]]:
    """(signature, constexprs, notes): types as given, pointers (named *ptr*, or used as
    pointers in the source) from `*TYPE`, constexprs from --constexprs or their defaults in the
    source, other scalars i32 (said in the notes)."""
    signature, constexprs, defaulted = {}, {}, []
    used = pointers_by_use(fn)
    for param in fn.params:
        arg = param.name
        pointer = arg in used or is_pointer(arg)
        if arg in kernel.constexprs:
            signature[arg] = "constexpr"
            value = kernel.constexprs[arg]
            constexprs[arg] = constexpr_value(value) if isinstance(value, str) else value
        elif param.is_constexpr and param.has_default:
            signature[arg], constexprs[arg] = "constexpr", param.default
        elif param.is_constexpr:
            raise UsageError(f"{kernel.label}: constexpr {arg!r} needs a value in --constexprs")
        elif arg in kernel.signature:
            signature[arg] = kernel.signature[arg]
        elif pointer and "*" in kernel.signature:
            signature[arg] = kernel.signature["*"]
        elif pointer:
            raise UsageError(f"{kernel.label}: pointer {arg!r} needs a type: --signature '*fp16' (every pointer) "
                             f"or {arg}=*TYPE")
        else:
            signature[arg] = "i32"
            defaulted.append(arg)
    notes = [f"scalar arguments typed i32 by default: {', '.join(defaulted)}"] if defaulted else []
    unnamed = [a for a in used if not is_pointer(a) and a not in kernel.signature and a not in constexprs]
    if unnamed:
        notes.append(f"pointers by use (the kernel loads from or stores to them): {', '.join(unnamed)}")
    return signature, constexprs, notes


def compile_kernel(kernel: TritonKernel, caps: dict, target_name: str) -> tuple[str, bytes, dict]:
    """(TTGIR text, SPIR-V, metadata) of one Triton compile."""
    triton = _install_offline_backend()
    os.environ.setdefault("TRITON_CACHE_DIR", str(build_cache_dir() / "triton"))
    module = loaded_module(kernel.file, caps, target_name, kernel.threads_per_warp)
    fn = triton_module.jit_function(module.kernel(kernel.kernel))
    signature, constexprs, notes = signature_for(fn, kernel)
    src = triton.compiler.ASTSource(fn, signature, constexprs=constexprs)
    try:
        compiled = triton.compile(src, target=_target(caps, target_name, kernel.threads_per_warp),
                                  options=_options(kernel))
    except Exception as exc:  # noqa: BLE001 - Triton's own compile errors are the user's to read
        raise InputError(f"Triton could not compile it: {' '.join(str(exc).split())[:400]}", path=kernel.label) from None
    return compiled.asm["ttgir"], compiled.asm["spv"], {**_metadata(compiled), "notes": notes}


def compile_ttgir(ttgir: str, kernel: TritonKernel, caps: dict, target_name: str, name: str) -> tuple[bytes, dict]:
    """Resume Triton's pipeline from a TTGIR text (the staging pass's output)."""
    triton = _install_offline_backend()
    os.environ.setdefault("TRITON_CACHE_DIR", str(build_cache_dir() / "triton"))
    with tempfile.TemporaryDirectory(prefix="zeinspect-ttgir-") as tmp:
        path = Path(tmp) / f"{name}.ttgir"
        path.write_text(ttgir)
        try:
            compiled = triton.compile(str(path), target=_target(caps, target_name, kernel.threads_per_warp),
                                      options=_options(kernel))
        except Exception as exc:  # noqa: BLE001
            raise ToolchainError(f"{kernel.label}: Triton could not lower the staged TTGIR: "
                                 f"{' '.join(str(exc).split())[:400]}") from None
    return compiled.asm["spv"], _metadata(compiled)


def build(kernel: TritonKernel, plan: TargetPlan, *, stage: bool, artifacts_dir: Path) -> list[TritonBuild]:
    """Compile once per group of targets with the same capabilities; stage if asked."""
    from ..levers.slm_staging import stage as staging_pass

    groups: dict[str, TritonBuild] = {}
    for target in plan.targets:
        compiler = plan.compiler_for_ip[target.ip]
        caps = capabilities(compiler, target.name)
        key = json.dumps(caps, sort_keys=True)
        if key in groups:
            groups[key].targets.append(target.name)
            continue
        ttgir, spirv, meta = compile_kernel(kernel, caps, target.name)
        b = TritonBuild(targets=[target.name], caps=caps, ttgir=ttgir, spirv=spirv, metadata=meta,
                        notes=meta.pop("notes", []))
        if stage:
            result = staging_pass(ttgir, caps, slm_total=SLM_BYTES, shared_in_use=meta.get("shared") or 0)
            b.staging = result
            if result.changed:
                b.ttgir = result.ttgir
                b.spirv, b.metadata = compile_ttgir(result.ttgir, kernel, caps, target.name, meta["name"])
        groups[key] = b
    builds = list(groups.values())
    artifacts_dir.mkdir(parents=True, exist_ok=True)
    from ..fileio import atomic_write

    for b in builds:
        # The content's digest in the name: every config and shape keeps its own files.
        stem = (f"{Path(kernel.file).stem}.{kernel.kernel}.{b.targets[0]}"
                f"{'.staged' if b.staging and b.staging.changed else ''}.{hashlib.sha256(b.spirv).hexdigest()[:10]}")
        b.artifacts = {"ttgir": str(artifacts_dir / f"{stem}.ttgir"), "spirv": str(artifacts_dir / f"{stem}.spv")}
        atomic_write(Path(b.artifacts["ttgir"]), b.ttgir.encode())
        atomic_write(Path(b.artifacts["spirv"]), b.spirv)
    return builds


def as_input(b: TritonBuild) -> Input:
    """The kept SPIR-V as the input ocloc compiles: its path makes `reproduce:` runnable."""
    return Input(path=b.artifacts["spirv"], kind=InputKind.SPIRV, data=b.spirv)


LARGE_GRF_FLAG = "-cl-intel-256-GRF-per-thread"
GRF_FLAGS = (LARGE_GRF_FLAG, "-cl-intel-128-GRF-per-thread", "-cl-intel-enable-auto-large-GRF-mode")
LOAD_SPILL_LIMIT = 1000
BUILD_POLICIES = ("jit", "native", "first")


def policy_rebuilds(policy: str, flags: str, report: KernelReport) -> str | None:
    """Which of Triton-XPU's rebuild rules fires for this first build, or None.

    Read from triton-xpu 3.3.0b1 (`backends/intel/driver.c`, `compiler.py`): at load time
    (`jit`) a kernel built without a register-file flag whose spillMemSize is over 1,000 bytes
    is built again with the large register file; in the native-code path (`native`,
    TRITON_XPU_GEN_NATIVE_CODE) any "spilled" in ocloc's log without the large-GRF flag does
    the same.  `first` reports the first build only."""
    if report.status is not Status.OK:
        return None
    if policy == "jit" and not any(f in flags for f in GRF_FLAGS) and (report.spill_bytes or 0) > LOAD_SPILL_LIMIT:
        return (f"Triton's load-time rule: {report.spill_bytes} bytes of spill at {report.grf} registers, over "
                f"{LOAD_SPILL_LIMIT}, and no register-file flag: rebuilt with {LARGE_GRF_FLAG}")
    if policy == "native" and LARGE_GRF_FLAG not in flags and (
            report.log_spilled_regs is not None or any("spilled" in line for line in report.log)):
        return f"Triton's native-code rule: ocloc's log says the kernel spilled: rebuilt with {LARGE_GRF_FLAG}"
    return None


_LOOP_RESULTS = re.compile(r"= scf\.for .*? -> \((?P<types>.*)\)\s*(?::\s*\w+)?\s*\{")
_TENSOR = re.compile(r"tensor<(?P<shape>[0-9x]+)x(?P<elem>!tt\.ptr<[^>]+>|[a-z]+[0-9]*)")
_ELEM_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8}


def loop_carried(ttgir: str, lanes: int) -> dict | None:
    """Bytes per lane that the kernel's loops carry from one iteration to the next, split into
    pointer tensors and data: a K loop that carries tensors of pointers (`a_ptrs += ...`) holds
    8 bytes per element, four times an f16 tile.  None when no loop carries a tensor."""
    pointers = data = 0
    for m in _LOOP_RESULTS.finditer(ttgir):
        for t in _TENSOR.finditer(m.group("types")):
            elements = 1
            for dim in t.group("shape").split("x"):
                elements *= int(dim)
            is_pointer = t.group("elem").startswith("!tt.ptr")
            size = elements * (8 if is_pointer else _ELEM_BYTES.get(t.group("elem"), 4)) // max(1, lanes)
            pointers, data = (pointers + size, data) if is_pointer else (pointers, data + size)
    return None if not pointers and not data else {"pointer_bytes_per_lane": pointers, "data_bytes_per_lane": data}


def pointer_note(carried: dict | None) -> str | None:
    """Said where pointer tensors are a large share of what a loop carries (a spill's likely seat)."""
    if not carried or carried["pointer_bytes_per_lane"] < carried["data_bytes_per_lane"] / 2:
        return None
    return (f"the kernel's loops carry {carried['pointer_bytes_per_lane']} bytes per lane of pointer tensors beside "
            f"{carried['data_bytes_per_lane']} of data: block pointers or tensor descriptors (tl.make_block_ptr, "
            "tl.make_tensor_descriptor) would carry a few scalars instead (a rewrite of the source, not one of "
            "zeinspect's levers)")


def _with_launch_figures(report: KernelReport, b: TritonBuild) -> KernelReport:
    """Triton's shared memory is what the launch asks for; over the target's SLM it cannot launch."""
    shared = b.metadata.get("shared")
    if shared is None:
        return report
    if report.status is Status.OK and shared > SLM_BYTES:
        return report.replace(slm_bytes=shared, status=Status.SLM_OVERFLOW,
                              reason=f"asks for {shared} bytes of shared local memory per work-group at launch, over "
                                     f"the {SLM_BYTES} bytes a work-group can have")
    return report.replace(slm_bytes=shared)


def probe_triton(kernel: TritonKernel, config, *, stage: bool, artifacts_dir: Path | None = None, progress=None,
                 policy: str = "jit", triton_lock: threading.Lock | None = None):
    """Reports for a Triton kernel on the planned targets: Triton compiles, the SPIR-V is audited
    by the real ocloc with Triton's build flags, and rebuilt where Triton's own build policy
    would rebuild it (`policy_rebuilds`: the final build is reported, the first beside it).
    Returns a Collection."""
    from dataclasses import replace as dc_replace

    from ..toolchain.targets import plan_targets
    from .aot import probe, resolve_compilers
    from .results import Collection

    compilers = resolve_compilers(config)
    plan = plan_targets(config.targets, compilers)
    artifacts_dir = artifacts_dir or (build_cache_dir() / "triton-artifacts")
    out = Collection()
    with triton_lock or contextlib.nullcontext():
        builds = build(kernel, plan, stage=stage, artifacts_dir=artifacts_dir)
    for b in builds:
        flags = " ".join(x for x in (config.options, b.metadata.get("build_flags") or "") if x)
        sub = TargetPlan(targets=tuple(t for t in plan.targets if t.name in b.targets),
                         compiler_for_ip=plan.compiler_for_ip)
        got = probe([as_input(b)], dc_replace(config, options=flags), compilers=compilers, plan=sub,
                    progress=progress)
        rules = {r.target: why for r in got.reports if (why := policy_rebuilds(policy, flags, r))}
        final = {(r.target, r.kernel): r for r in got.reports}
        first = dict(final)
        if rules:
            again = probe([as_input(b)], dc_replace(config, options=f"{flags} {LARGE_GRF_FLAG}"), compilers=compilers,
                          plan=TargetPlan(targets=tuple(t for t in sub.targets if t.name in rules),
                                          compiler_for_ip=plan.compiler_for_ip), progress=progress)
            out.stats = out.stats + again.stats
            final.update({(r.target, r.kernel): r.replace(notes=r.notes + (rules[r.target],)) for r in again.reports})
        path = "DPAS" if b.caps.get("has_subgroup_matrix_multiply_accumulate") else "FMA"
        notes = [f"Triton {path} path, {b.metadata.get('num_warps')} warps x {b.metadata.get('threads_per_warp')} "
                 f"threads, {b.metadata.get('shared')} bytes of shared memory, build flags "
                 f"{b.metadata.get('build_flags') or '(none)'}",
                 f"TTGIR: {b.artifacts['ttgir']}", f"SPIR-V: {b.artifacts['spirv']}", *b.notes]
        lanes = (b.metadata.get("num_warps") or 4) * (b.metadata.get("threads_per_warp") or 32)
        carried = loop_carried(b.ttgir, lanes)
        extra = {"triton": {"path": path, "artifacts": b.artifacts, "metadata": b.metadata, "policy": policy,
                            "loop_carried": carried}}
        if b.staging is not None:
            notes.append(f"staging pass: {b.staging.describe()}")
            extra["triton"]["staging"] = {"changed": b.staging.changed, "form": b.staging.form,
                                          "dots": [d.__dict__ for d in b.staging.dots]}
        reports = []
        for key, r in final.items():
            own = dict(extra, triton=dict(extra["triton"]))
            if key[0] in rules:
                own["triton"]["first_build"] = first[key].to_json()
            said = pointer_note(carried) if r.uses_scratch or not r.built else None
            reports.append(_with_launch_figures(r, b).replace(input=kernel.label, extra=own,
                                                              notes=r.notes + tuple(notes) + ((said,) if said else ())))
        out.extend(got, reports=reports)
    return out
