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

import dataclasses
import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, ToolchainError, UsageError
from ..inputs import Input
from ..inputs.kinds import InputKind
from ..levers.slm_staging import StagingResult
from ..model import Compiler
from ..paths import build_cache_dir
from ..toolchain.knowledge import device_extensions, remembered
from ..toolchain.targets import TargetPlan

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

    @property
    def label(self) -> str:
        return f"{self.file}:{self.kernel}"


def parse_spec(spec: str) -> tuple[str, str]:
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:KERNEL, not {spec!r}")
    return path, name


def parse_pairs(text: str | None, what: str) -> dict:
    out = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
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


def load_kernel(path: str, name: str):
    """The JITFunction `name` from the Python file at `path` (the user's own code runs)."""
    p = Path(path)
    if not p.is_file():
        raise InputError("no such Triton source file", path=path)
    _triton()
    module_name = f"zeinspect_triton_{hashlib.sha256(str(p.resolve()).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(module_name, p)
    if spec is None or spec.loader is None:
        raise InputError("cannot be loaded as Python", path=path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's file failed to import: say so in one line
        raise InputError(f"failed to import: {exc.__class__.__name__}: {exc}"[:300], path=path) from None
    fn = getattr(module, name, None)
    if fn is None or not hasattr(fn, "arg_names"):
        known = [k for k, v in vars(module).items() if hasattr(v, "arg_names")]
        raise InputError(f"has no @triton.jit kernel {name!r} (kernels: {', '.join(known) or 'none'})", path=path)
    return fn


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


def _target(caps: dict, name: str, threads_per_warp: int):
    from triton.backends.compiler import GPUTarget

    return GPUTarget("xpu", {"name": name, **caps}, threads_per_warp)


def _options(kernel: TritonKernel) -> dict:
    if kernel.grf_mode not in GRF_MODES:
        raise UsageError(f"--grf-mode must be one of {', '.join(GRF_MODES)}")
    return {"num_warps": kernel.num_warps, "threads_per_warp": kernel.threads_per_warp, "grf_mode": kernel.grf_mode}


def _metadata(compiled) -> dict:
    meta = compiled.metadata._asdict() if hasattr(compiled.metadata, "_asdict") else dict(compiled.metadata)
    return {k: meta.get(k) for k in ("name", "build_flags", "shared", "num_warps", "threads_per_warp")}


def compile_kernel(kernel: TritonKernel, caps: dict, target_name: str) -> tuple[str, bytes, dict]:
    """(TTGIR text, SPIR-V, metadata) of one Triton compile."""
    triton = _install_offline_backend()
    os.environ.setdefault("TRITON_CACHE_DIR", str(build_cache_dir() / "triton"))
    fn = load_kernel(kernel.file, kernel.kernel)
    signature = {}
    for arg in fn.arg_names:
        if arg in kernel.constexprs:
            signature[arg] = "constexpr"
        elif arg in kernel.signature:
            signature[arg] = kernel.signature[arg]
        else:
            raise UsageError(f"{kernel.label}: argument {arg!r} needs a type in --signature or a value in --constexprs")
    constexprs = {k: constexpr_value(v) if isinstance(v, str) else v for k, v in kernel.constexprs.items()}
    src = triton.compiler.ASTSource(fn, signature, constexprs=constexprs)
    try:
        compiled = triton.compile(src, target=_target(caps, target_name, kernel.threads_per_warp),
                                  options=_options(kernel))
    except Exception as exc:  # noqa: BLE001 - Triton's own compile errors are the user's to read
        raise InputError(f"Triton could not compile it: {' '.join(str(exc).split())[:400]}", path=kernel.label) from None
    return compiled.asm["ttgir"], compiled.asm["spv"], _metadata(compiled)


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
        b = TritonBuild(targets=[target.name], caps=caps, ttgir=ttgir, spirv=spirv, metadata=meta)
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
        stem = f"{Path(kernel.file).stem}.{kernel.kernel}.{b.targets[0]}{'.staged' if b.staging and b.staging.changed else ''}"
        b.artifacts = {"ttgir": str(artifacts_dir / f"{stem}.ttgir"), "spirv": str(artifacts_dir / f"{stem}.spv")}
        atomic_write(Path(b.artifacts["ttgir"]), b.ttgir.encode())
        atomic_write(Path(b.artifacts["spirv"]), b.spirv)
    return builds


def as_input(kernel: TritonKernel, b: TritonBuild) -> Input:
    return Input(path=f"{kernel.label}[{','.join(b.targets)}]", kind=InputKind.SPIRV, data=b.spirv)


def probe_triton(kernel: TritonKernel, config, *, stage: bool, artifacts_dir: Path | None = None, progress=None):
    """Reports for a Triton kernel on the planned targets: Triton compiles, the SPIR-V is audited
    by the real ocloc with Triton's build flags.  Returns a Collection."""
    from dataclasses import replace as dc_replace

    from ..toolchain.targets import plan_targets
    from .aot import probe, resolve_compilers
    from .results import Collection

    compilers = resolve_compilers(config)
    plan = plan_targets(config.targets, compilers)
    artifacts_dir = artifacts_dir or (build_cache_dir() / "triton-artifacts")
    out = Collection()
    for b in build(kernel, plan, stage=stage, artifacts_dir=artifacts_dir):
        flags = " ".join(x for x in (config.options, b.metadata.get("build_flags") or "") if x)
        sub = TargetPlan(targets=tuple(t for t in plan.targets if t.name in b.targets),
                         compiler_for_ip=plan.compiler_for_ip)
        got = probe([as_input(kernel, b)], dc_replace(config, options=flags), compilers=compilers, plan=sub,
                    progress=progress)
        path = "DPAS" if b.caps.get("has_subgroup_matrix_multiply_accumulate") else "FMA"
        notes = [f"Triton {path} path, {b.metadata.get('num_warps')} warps x {b.metadata.get('threads_per_warp')} "
                 f"threads, {b.metadata.get('shared')} bytes of shared memory, build flags "
                 f"{b.metadata.get('build_flags') or '(none)'}",
                 f"TTGIR: {b.artifacts['ttgir']}", f"SPIR-V: {b.artifacts['spirv']}"]
        extra = {"triton": {"path": path, "artifacts": b.artifacts, "metadata": b.metadata}}
        if b.staging is not None:
            notes.append(f"staging pass: {b.staging.describe()}")
            extra["triton"]["staging"] = {"changed": b.staging.changed, "form": b.staging.form,
                                          "dots": [d.__dict__ for d in b.staging.dots]}
        out.extend(got, reports=[r.replace(input=kernel.label, notes=r.notes + tuple(notes), extra=extra)
                                 for r in got.reports])
    return out
