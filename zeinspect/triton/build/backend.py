"""Triton-XPU offline: its Intel backend without a device, and one compile of a kernel.

PyPI's triton-xpu compiles to SPIR-V without a device once its backend does not build the
small C helper that only maps a SYCL architecture number to a name (it needs torch and
SYCL headers): `_OfflineXPUBackend` skips it and takes the target's capabilities from the
real compiler instead (`ocloc query CL_DEVICE_EXTENSIONS -device T`): with
cl_intel_subgroup_matrix_multiply_accumulate a `tl.dot` takes the DPAS path, without it
the FMA path.  Targets with the same capabilities share one Triton compile; each keeps its
TTGIR and SPIR-V on disk.

`offline()` is how every compile runs: it puts the offline backend and zeinspect's Triton
cache folder in place and, when the outermost use ends, gives the process back as it found
it (the prune hook runs inside the user's own Triton process).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import inspect
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...cache import BuildCache
from ...errors import InputError, ToolchainError, UsageError, ZeinspectError
from ...fileio import atomic_write
from ...hardware import DEVICES, TRITON_ARCH, Device, ip_for_name, slm_per_work_group
from ...inputs import Input
from ...inputs.kinds import InputKind
from ...model import Compiler
from ...paths import build_cache_dir
from ...toolchain.knowledge import device_extensions, remembered, sub_group_sizes
from ...toolchain.targets import TargetPlan
from ..load import loader
from ..load.discover import Launch
from ..model.kernel import IR_SUFFIX, LAUNCH_OPTIONS, TRITON_GRF_MODES, TritonKernel, known_grf_mode, signature_for
from ..offline.link import LinkingLlvm
from ..load.memo import Memo, file_key
from .staging import StagingResult

EXTENSIONS_WANTED = {
    "has_subgroup_matrix_multiply_accumulate": "cl_intel_subgroup_matrix_multiply_accumulate",
    "has_subgroup_matrix_multiply_accumulate_tensor_float32":
        "cl_intel_subgroup_matrix_multiply_accumulate_tensor_float32",
    "has_subgroup_2d_block_io": "cl_intel_subgroup_2d_block_io",
    "has_bfloat16_conversions": "cl_intel_bfloat16_conversions",
}
COMPILE_CAPABILITIES = (*EXTENSIONS_WANTED, "sub_group_sizes")
"""What Triton-XPU's lowering reads of a target (compiler.py make_ttgir: the smallest sub-group
size, 2D block IO, DPAS, bf16 conversions); the rest of its properties only answer the module."""
GRF_MODES = TRITON_GRF_MODES

TRITON_LOCK = threading.Lock()
"""Triton's own compiles run one at a time in a process (one MLIR context); ocloc's do not."""


def triton_module() -> Any:
    try:
        import triton
        import triton.backends.intel.compiler  # noqa: F401 - only triton-xpu has it
    except ImportError:
        raise ToolchainError("the Triton front end needs triton-xpu: pip install 'zeinspect[triton]'") from None
    return triton


_offline_lock = threading.Lock()
_offline_depth = 0
_saved: dict[str, Any] = {}


@contextlib.contextmanager
def offline() -> Iterator[Any]:
    """Triton with the offline Intel backend and zeinspect's cache folder, for the duration;
    the outermost exit restores the backends registry, the backend's `llvm` (triton.link),
    TRITON_CACHE_DIR and the modules the loader put in sys.modules."""
    global _offline_depth
    triton = triton_module()
    from triton.backends import backends

    with _offline_lock:
        if _offline_depth == 0:
            from triton.backends.intel import compiler as intel_compiler

            _saved.update(backend=backends["intel"], cache=os.environ.get("TRITON_CACHE_DIR"),
                          llvm=intel_compiler.llvm)
            backends["intel"] = dataclasses.replace(backends["intel"], compiler=offline_backend_class())
            # make_llir's libdevice link, without parsing libdevice where it brings no function (triton.link)
            intel_compiler.llvm = LinkingLlvm(intel_compiler.llvm)
            # zeinspect's own Triton cache, always: the user's is never written unless they ask.
            os.environ["TRITON_CACHE_DIR"] = str(build_cache_dir() / "triton")
            loader.register_modules()
        _offline_depth += 1
    try:
        yield triton
    finally:
        with _offline_lock:
            _offline_depth -= 1
            if _offline_depth == 0:
                from triton.backends.intel import compiler as intel_compiler

                backends["intel"] = _saved.pop("backend")
                intel_compiler.llvm = _saved.pop("llvm")
                cache = _saved.pop("cache")
                if cache is None:
                    os.environ.pop("TRITON_CACHE_DIR", None)
                else:
                    os.environ["TRITON_CACHE_DIR"] = cache
                loader.unregister_modules()


_BACKEND_CLASS: list[type] = []


def offline_backend_class() -> type:
    """A subclass of Intel's backend that skips the SYCL-only helper (made once)."""
    if not _BACKEND_CLASS:
        from triton.backends.compiler import BaseBackend
        from triton.backends.intel import compiler as ic

        class _OfflineXPUBackend(ic.XPUBackend):  # type: ignore[misc, name-defined]
            _zeinspect_offline = True

            def __init__(self, target: Any) -> None:
                BaseBackend.__init__(self, target)
                self.device_arch = ""  # nothing to look up: the capabilities come with the target
                self.properties = self.parse_target(target.arch)
                self.binary_ext = "spv"

        _BACKEND_CLASS.append(_OfflineXPUBackend)
    return _BACKEND_CLASS[0]


def capabilities(compiler: Compiler, target: str) -> dict:
    """What the real compiler says the target offers: its extensions (`ocloc query
    CL_DEVICE_EXTENSIONS`) and the sub-group sizes a kernel can require there (a probe
    compile, toolchain.knowledge.sub_group_sizes); kept with the toolchains."""

    def ask() -> dict:
        found = device_extensions(compiler, target)
        if found is None:
            raise ToolchainError(f"{compiler.id} cannot list the extensions of {target}")
        extensions = set(found)
        caps: dict[str, object] = {flag: ext in extensions for flag, ext in EXTENSIONS_WANTED.items()}
        sizes = sub_group_sizes(compiler, target)
        if sizes is None:
            raise ToolchainError(f"{compiler.id} builds no sub-group size for {target}")
        caps["sub_group_sizes"] = list(sizes)
        caps["has_fp64"] = "cl_khr_fp64" in extensions
        return caps

    return remembered("capabilities-2.json", f"{compiler.id}|{target}", ask)


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


def gpu_target(caps: dict, name: str, threads_per_warp: int) -> Any:
    """The target as Triton-XPU's driver builds it for a device (driver.py get_current_target:
    the device's capability dict, with `arch` from its arch parser): the compiler's
    capabilities, and the part's figures of the device table (hardware.DEVICES)."""
    from triton.backends.compiler import GPUTarget

    return GPUTarget("xpu", {"name": name, "arch": TRITON_ARCH.get(name, ""), **caps, **_device_figures(caps, name)},
                     threads_per_warp)


def _device_figures(caps: dict, name: str) -> dict:
    part = DEVICES.get(name)
    if part is None:
        return {}
    return {"max_work_group_size": part.max_work_group_size, "max_shared_mem": slm_per_work_group(ip_for_name(name)),
            "max_num_sub_groups": part.max_work_group_size // min(caps.get("sub_group_sizes") or [16]),
            "gpu_subslice_count": part.xe_cores}


def device_properties(caps: dict, name: str) -> dict:
    """What `driver.active.utils.get_device_properties()` answers for the target (Triton-XPU's
    driver.c, from zeDeviceGetProperties and its compute and memory properties)."""
    part = DEVICES.get(name) or Device(8, 2000, 2000, 128)
    return {"max_shared_mem": slm_per_work_group(ip_for_name(name)), "multiprocessor_count": part.xe_cores,
            "sm_clock_rate": part.core_clock_mhz, "mem_clock_rate": part.mem_clock_mhz,
            "mem_bus_width": part.mem_bus_width, "max_work_group_size": part.max_work_group_size,
            "sub_group_sizes": tuple(caps.get("sub_group_sizes") or ())}


def _options(kernel: TritonKernel) -> dict:
    if kernel.grf_mode not in GRF_MODES:
        raise UsageError(f"--grf-mode must be one of {', '.join(GRF_MODES)}")
    options: dict[str, Any] = {"num_warps": kernel.num_warps, "threads_per_warp": kernel.threads_per_warp,
                               "grf_mode": kernel.grf_mode}
    if kernel.num_stages is not None:
        options["num_stages"] = kernel.num_stages
    # A registered Triton lever's option that is no field of the request (triton.kernel).
    options.update(kernel.options)
    return options


def _metadata(compiled: Any, kernel: TritonKernel) -> dict:
    """What the report keeps of Triton's metadata: the kernel's name, build flags and SLM, and
    the options as Triton built with them (a registered Triton lever's among them)."""
    meta = compiled.metadata._asdict() if hasattr(compiled.metadata, "_asdict") else dict(compiled.metadata)
    keys = ("name", "build_flags", "shared", "num_warps", "threads_per_warp", *(k for k, _ in kernel.options))
    return {k: meta.get(k) for k in keys}


MEMO_SIZE = 64
"""Modules (per file and target) kept loaded at once; a library's screen loads each once per target."""
_MODULES = Memo(MEMO_SIZE, on_drop=lambda m: loader.forget(m.namespace.get("__name__")))
_OWN = Memo(MEMO_SIZE, on_drop=lambda own: loader.forget(*(m.__name__ for m in own.values())))
"""(package root, target) -> the package's modules loaded so far: shared by the modules of a package."""


def loaded_module(path: str, caps: dict, target_name: str, threads_per_warp: int) -> loader.LoadedModule:
    """The module at `path` as loaded for this target (triton.loader), once per target and
    version of the file."""
    key = (*file_key(path), json.dumps(caps, sort_keys=True), target_name, threads_per_warp)
    if key not in _MODULES:
        if not Path(path).is_file():
            raise InputError("no such Triton source file", path=path)
        root = str(loader.package_root(Path(path).resolve())[0])
        own = _OWN.setdefault((root, *key[3:]), {})
        with offline():
            _MODULES[key] = loader.load(path, gpu_target(caps, target_name, threads_per_warp),
                                        device_properties(caps, target_name), own)
    return _MODULES[key]


_CANNOT = (
    (re.compile(r"make_tensor_descriptor|tensor_descriptor|TensorDescriptor|_experimental_descriptor"
                r"|'tensor' object has no attribute '(load|store)'"),
     "uses tensor descriptors (TMA, tl.make_tensor_descriptor), which this Triton does not have"),
    (re.compile(r"\bcuda\b|nvidia|\bptx\b|inline_asm", re.I), "uses an NVIDIA-only intrinsic"),
    (re.compile(r"\bhip\b|\bamd\b|cdna|\bmfma\b", re.I), "takes a path for AMD (CDNA) GPUs only"),
)


def compile_error_text(exc: BaseException, first_line: int | None = None) -> str:
    """Triton's compile error as one line: the kernel line it is on and its message, without the
    dozen lines of source Triton's CompilationError prints before them (the message is taken
    from the error that caused it where Triton's own is empty).  `first_line`: the kernel's
    first source line, since Triton numbers lines from there."""
    where = None
    lineno = getattr(getattr(exc, "node", None), "lineno", None) if hasattr(exc, "src") else None
    if isinstance(lineno, int):
        where = f"line {lineno + first_line - 1}" if first_line else f"line {lineno} of the kernel"
    current: BaseException | None = exc
    for _ in range(8):
        if current is None:
            break
        message = getattr(current, "error_message", None) if hasattr(current, "src") else str(current).strip()
        if message:
            return f"{where}: {message}" if where else str(message)
        current = current.__cause__
    return where or type(exc).__name__


def _def_line(fn: Any) -> int | None:
    """The file line of a JIT function's `def` (Triton numbers its error lines from there: it
    drops the decorators from the source it compiles)."""
    try:
        lines, start = inspect.getsourcelines(fn.fn)
    except (AttributeError, OSError, TypeError):
        return None
    return next((start + i for i, line in enumerate(lines) if re.match(r"\s*(async\s+)?def\b", line)), None)


def classify(message: str) -> str:
    """A compile failure in one line: what the installed Triton or the Intel backend lacks."""
    text = " ".join(message.split())
    for pattern, why in _CANNOT:
        if pattern.search(text):
            return f"{why}: {text[:200]}"
    return text[:300]


_LAUNCHES = Memo(1024)


def _launch_spec(caps: dict, target_name: str, threads_per_warp: int) -> dict:
    target = gpu_target(caps, target_name, threads_per_warp)
    return {"name": target_name, "target": dict(target.arch), "threads_per_warp": threads_per_warp,
            "properties": device_properties(caps, target_name)}


def _kept(path: str, spec: dict) -> Path:
    digest = hashlib.sha256(Path(path).read_bytes() + json.dumps([DISCOVER_VERSION, spec],
                                                                 sort_keys=True).encode()).hexdigest()
    return build_cache_dir() / "triton-launches" / f"{digest}.json"


def prime_launches(paths: list[str], caps: dict, target_name: str, threads_per_warp: int) -> None:
    """Find how each module's own host code launches its kernels on this target (triton.discover),
    all the modules not yet known in one child, and keep the answers in the build cache with
    the module's bytes."""
    spec = _launch_spec(caps, target_name, threads_per_warp)
    todo = []
    for path in paths:
        key = (*file_key(path), json.dumps(caps, sort_keys=True), target_name, threads_per_warp)
        if key in _LAUNCHES:
            continue
        try:
            _LAUNCHES[key] = {k: Launch(**v) for k, v in json.loads(_kept(path, spec).read_text()).items()}
        except (OSError, ValueError, TypeError):
            todo.append((path, key))
    if not todo:
        return
    from ..load.discover import discover

    found = discover([p for p, _ in todo], [spec], loader.load_timeout())
    for path, key in todo:
        launches = found.get(key[0], {}).get(target_name, {})
        _LAUNCHES[key] = launches
        try:
            atomic_write(_kept(path, spec), json.dumps({k: dataclasses.asdict(v) for k, v in launches.items()}).encode())
        except OSError:
            pass  # a read-only cache only costs the next run a discovery


def launches(path: str, caps: dict, target_name: str, threads_per_warp: int) -> dict[str, Launch]:
    """kernel name -> how the module's own host code launches it on this target."""
    prime_launches([path], caps, target_name, threads_per_warp)
    return _LAUNCHES[(*file_key(path), json.dumps(caps, sort_keys=True), target_name, threads_per_warp)]


DISCOVER_VERSION = 1




def compile_kernel(kernel: TritonKernel, caps: dict, target_name: str) -> tuple[str, bytes, dict]:
    """(TTGIR text, SPIR-V, metadata) of one Triton compile."""
    if kernel.file.endswith(IR_SUFFIX):
        from ..offline.libdevice import retarget

        try:
            ttir = Path(kernel.file).read_text(errors="replace")
        except OSError as exc:
            raise InputError(f"cannot be read: {exc.strerror or exc}", path=kernel.file) from None
        ttir, notes = retarget(ttir, kernel.file)
        with tempfile.TemporaryDirectory(prefix="zeinspect-ttir-") as tmp:
            path = Path(kernel.file)
            if notes:  # the retargeted IR, in a file of its own (the cache is only read)
                path = Path(tmp) / f"kernel{IR_SUFFIX}"
                path.write_text(ttir)
            compiled = _compile_ir(path, kernel, caps, target_name, "Triton could not build its TTIR")
        return compiled.asm["ttgir"], compiled.asm["spv"], {**_metadata(compiled, kernel), "notes": notes,
                                                            "kernel": kernel}
    with offline() as triton:
        asked: list[Launch | None] = []

        def launch() -> Launch | None:
            if not asked:
                asked.append(launches(kernel.file, caps, target_name, kernel.threads_per_warp).get(kernel.kernel))
            return asked[0]

        if set(LAUNCH_OPTIONS) - kernel.options_given:
            kernel, said = kernel.as_launched(launch())
        else:
            said = []
        kernel, unknown_mode = known_grf_mode(kernel)
        said += unknown_mode
        module = loaded_module(kernel.file, caps, target_name, kernel.threads_per_warp)
        fn = loader.jit_function(module.kernel(kernel.kernel))
        signature, constexprs, notes = signature_for(fn, kernel, launch)
        notes = said + notes
        src = triton.compiler.ASTSource(fn, signature, constexprs=constexprs,
                                        attrs={tuple(path): value for path, value in kernel.attrs} or None)
        try:
            compiled = triton.compile(src, target=gpu_target(caps, target_name, kernel.threads_per_warp),
                                      options=_options(kernel))
        except Exception as exc:  # noqa: BLE001 - Triton's own compile errors are the user's to read
            needed = module.unbound_needed(str(exc))
            if needed is not None:  # a global the kernel reads is a statement that did not run
                raise InputError(f"{kernel.kernel}: {needed}", path=kernel.file) from None
            text = compile_error_text(exc, _def_line(fn))
            raise InputError(f"Triton could not compile it: {classify(text)}", path=kernel.label) from None
    # The request as built (its launch options resolved): a staged TTGIR is lowered with the same.
    return compiled.asm["ttgir"], compiled.asm["spv"], {**_metadata(compiled, kernel), "notes": notes, "kernel": kernel}


def compile_ttgir(ttgir: str, kernel: TritonKernel, caps: dict, target_name: str) -> tuple[bytes, dict]:
    """Resume Triton's pipeline from a TTGIR text (the staging pass's output)."""
    with tempfile.TemporaryDirectory(prefix="zeinspect-ttgir-") as tmp:
        path = Path(tmp) / "kernel.ttgir"  # Triton reads the kernel's name from the module, not the file's
        path.write_text(ttgir)
        compiled = _compile_ir(path, kernel, caps, target_name, "Triton could not lower the staged TTGIR",
                               error=ToolchainError)
    return compiled.asm["spv"], _metadata(compiled, kernel)


def _compile_ir(path: Path, kernel: TritonKernel, caps: dict, target_name: str, failed: str,
                error: type[ZeinspectError] = InputError) -> Any:
    """Triton's pipeline from an IR file (its stage is the suffix: `.ttir`, `.ttgir`)."""
    with offline() as triton:
        try:
            return triton.compile(str(path), target=gpu_target(caps, target_name, kernel.threads_per_warp),
                                  options=_options(kernel))
        except Exception as exc:  # noqa: BLE001 - Triton's own errors, said in one line
            raise error(f"{kernel.label}: {failed}: {' '.join(str(exc).split())[:400]}") from None


@dataclass(frozen=True)
class TargetGroup:
    """Targets that share a Triton compile: what Triton's lowering reads of them is the same."""

    caps: dict
    targets: tuple[str, ...]
    """The first names the compile (Triton's target name); the others share it."""
    ip: str
    """The first target's IP (its SLM size, for staging)."""


def target_groups(plan: TargetPlan) -> list[TargetGroup]:
    """The plan's targets, grouped by the capabilities Triton's lowering reads."""
    groups: dict[str, TargetGroup] = {}
    for target in plan.targets:
        caps = capabilities(plan.compiler_for_ip[target.ip], target.name)
        key = json.dumps({k: v for k, v in caps.items() if k in COMPILE_CAPABILITIES}, sort_keys=True)
        had = groups.get(key)
        groups[key] = TargetGroup(caps, (*had.targets, target.name), had.ip) if had else \
            TargetGroup(caps, (target.name,), target.ip)
    return list(groups.values())


FrontEnd = Callable[[TritonKernel, dict, str], tuple[str, bytes, dict]]
"""How a build gets its front end's result: compile_kernel, or a worker's (triton.front_ends)."""


def build(kernel: TritonKernel, plan: TargetPlan, *, stage: bool, artifacts_dir: Path,
          cache: BuildCache | None = None, front_end: FrontEnd | None = None) -> list[TritonBuild]:
    """Compile once per group of targets with the same capabilities; stage if asked.  With a
    cache, the front end's result is kept and taken back without loading the module
    (triton.warm says what it is keyed by)."""
    from . import warm
    from .staging import stage as staging_pass

    builds = []
    for group in target_groups(plan):
        caps, name = group.caps, group.targets[0]
        k = warm.key(kernel, caps, name) if cache is not None else None
        kept = warm.get(cache, k)
        if kept is None:
            ttgir, spirv, meta = (front_end or compile_kernel)(kernel, caps, name)
            warm.put(cache, k, ttgir, spirv, meta)
        else:
            ttgir, spirv, meta = kept
        built = meta.pop("kernel", kernel)
        if kernel.file.endswith(IR_SUFFIX):  # kept by its TTIR's content: this file is the one asked for
            built = dataclasses.replace(built, file=kernel.file)
        b = TritonBuild(targets=list(group.targets), caps=caps, ttgir=ttgir, spirv=spirv, metadata=meta,
                        notes=meta.pop("notes", []))
        if stage:
            result = staging_pass(ttgir, caps, slm_total=slm_per_work_group(group.ip),
                                  shared_in_use=meta.get("shared") or 0)
            b.staging = result
            if result.changed:
                b.ttgir = result.ttgir
                b.spirv, b.metadata = compile_ttgir(result.ttgir, built, caps, name)
        builds.append(b)
    artifacts_dir.mkdir(parents=True, exist_ok=True)
    for b in builds:
        stem = artifact_stem(kernel, b.targets[0], bool(b.staging and b.staging.changed), b.spirv)
        b.artifacts = {"ttgir": str(artifacts_dir / f"{stem}.ttgir"), "spirv": str(artifacts_dir / f"{stem}.spv")}
        atomic_write(Path(b.artifacts["ttgir"]), b.ttgir.encode())
        atomic_write(Path(b.artifacts["spirv"]), b.spirv)
    return builds


ARTIFACT_NAME_HEAD = 40
"""The characters of a kernel's name an artifact's file name keeps (Inductor's run past 200)."""


def artifact_stem(kernel: TritonKernel, target: str, staged: bool, spirv: bytes) -> str:
    """A build's artifact file name, without its suffix: the head of the kernel's name (what a
    reader looks for), a digest of its file and name (what keeps two kernels apart), the target
    and the content's digest (every config and shape keeps its own files).  It never grows with
    the kernel's name: the whole name is in the report and the metadata."""
    who = hashlib.sha256(f"{kernel.file}:{kernel.kernel}".encode()).hexdigest()[:8]
    head = re.sub(r"[^A-Za-z0-9_]", "_", kernel.kernel[:ARTIFACT_NAME_HEAD])
    return f"{head}.{who}.{target}{'.staged' if staged else ''}.{hashlib.sha256(spirv).hexdigest()[:10]}"


def as_input(b: TritonBuild) -> Input:
    """The kept SPIR-V as the input ocloc compiles: its path makes `reproduce:` runnable."""
    return Input(path=b.artifacts["spirv"], kind=InputKind.SPIRV, data=b.spirv)
