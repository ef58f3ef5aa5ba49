"""One Triton compile of a kernel, for the targets that share what Triton's lowering reads.

The target's capabilities come from the real compiler (`ocloc query CL_DEVICE_EXTENSIONS
-device T`, and the sub-group sizes a kernel can require there): with
cl_intel_subgroup_matrix_multiply_accumulate a `tl.dot` takes the DPAS path, without it the FMA
path.  Targets with the same capabilities share one Triton compile, run with the offline backend
in place (triton.build.context.offline, triton.offline.compiler); each is staged with the SLM
pass when asked (triton.build.staging), and keeps its TTGIR and SPIR-V on disk where they are
wanted (triton.build.warm says where they are kept otherwise).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...cache import BuildCache
from ...errors import InputError, ToolchainError, UsageError, ZeinspectError
from ...fileio import atomic_write
from ...hardware import slm_per_work_group
from ...inputs import Input
from ...inputs.kinds import InputKind
from ...model import Compiler
from ...paths import build_cache_dir
from ...toolchain.knowledge import device_extensions, remembered, sub_group_sizes
from ...toolchain.targets import TargetPlan
from ..load.module import jit_function
from ..load.signature import signature_for
from ..model.kernel import IR_SUFFIX, LAUNCH_OPTIONS, TRITON_GRF_MODES, TritonKernel, known_grf_mode
from ..model.launch import Launch
from ..offline.compiler import gpu_target
from .context import offline
from .errors import classify, compile_error_text, def_line
from .modules import launches, loaded_module
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
    spirv: bytes | None
    """None: not at hand (a SPIR-V no file holds, which the build cache does not keep: warm)."""
    spirv_digest: str
    metadata: dict
    staging: StagingResult | None = None
    artifacts: dict = field(default_factory=dict)
    """Where its TTGIR and SPIR-V are kept as files, or would be (artifact_stem)."""
    written: bool = False
    """Whether those files are there (keep_files: written, or found whole)."""
    notes: list[str] = field(default_factory=list)
    entry: str | None = None
    """Its front end's cache entry (triton.build.warm), where that holds the TTGIR it was built
    from; None for a staged build."""
    screened: Any = None
    """Its reports (a probes.results.Collection), where it was audited from the cache as it was
    built, its SPIR-V not at hand (triton.probes.audit.build_many)."""


def _options(kernel: TritonKernel) -> dict:
    if kernel.grf_mode not in GRF_MODES:
        raise UsageError(f"--grf-mode must be one of {', '.join(GRF_MODES)}")
    options: dict[str, Any] = {"num_warps": kernel.num_warps, "threads_per_warp": kernel.threads_per_warp,
                               "grf_mode": kernel.grf_mode}
    if kernel.num_stages is not None:
        options["num_stages"] = kernel.num_stages
    # A registered Triton lever's option that is no field of the request (triton.model.kernel).
    options.update(kernel.options)
    return options


def _metadata(compiled: Any, kernel: TritonKernel) -> dict:
    """What the report keeps of Triton's metadata: the kernel's name, build flags and SLM, and
    the options as Triton built with them (a registered Triton lever's among them)."""
    meta = compiled.metadata._asdict() if hasattr(compiled.metadata, "_asdict") else dict(compiled.metadata)
    keys = ("name", "build_flags", "shared", "num_warps", "threads_per_warp", *(k for k, _ in kernel.options))
    return {k: meta.get(k) for k in keys}


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
        fn = jit_function(module.kernel(kernel.kernel))
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
            text = compile_error_text(exc, def_line(fn))
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
"""How a build gets its front end's result: compile_kernel, or a worker's (triton.build.front_ends)."""


def build(kernel: TritonKernel, plan: TargetPlan, *, stage: bool, artifacts_dir: Path,
          cache: BuildCache | None = None, front_end: FrontEnd | None = None, files: bool = True,
          fresh: bool = False) -> list[TritonBuild]:
    """Compile once per group of targets with the same capabilities; stage if asked.  With a
    cache, the front end's result is kept and taken back without loading the module
    (triton.build.warm says what it is keyed by).  `files`: every build's TTGIR and SPIR-V
    written as files (a single kernel's screen, whose reports name them); without, a build takes
    its SPIR-V from its file where there is one, else leaves it out (TritonBuild.spirv is None:
    triton.probes.audit audits it from the cache, or has it made again).  `fresh`: the front end
    runs though the cache holds its result (the SPIR-V was needed and is not kept), and the entry
    is written again."""
    from . import warm
    from .staging import stage as staging_pass

    builds = []
    artifacts_dir.mkdir(parents=True, exist_ok=True)
    artifacts_dir = artifacts_dir.resolve()  # once: each resolve is a walk of the path's folders
    for group in target_groups(plan):
        caps, name = group.caps, group.targets[0]

        def staged_form(ttgir: str, meta: dict, ip: str = group.ip, caps: dict = caps) -> StagingResult | None:
            return staging_pass(ttgir, caps, slm_total=slm_per_work_group(ip),
                                shared_in_use=meta.get("shared") or 0) if stage else None

        k = warm.key(kernel, caps, name) if cache is not None else None
        got = None if fresh else warm.get(cache, k)
        spirv: bytes | None = None
        result = None
        if got is not None:
            digest, meta = got.spirv_sha256, got.meta
            where = artifact_paths(kernel, name, False, digest, artifacts_dir)
            spirv = _kept_file(where[1], digest)
            found = got.ttgir if got.ttgir is not None else _kept_file(where[0], got.ttgir_sha256)
            ttgir = found.decode() if isinstance(found, bytes) else found or ""
            result = staged_form(ttgir, meta) if found is not None else None
            # Not at hand, or its own files asked for (a staged build's are the staged SPIR-V's):
            # the front end makes them again.
            if found is None or (spirv is None and files and not (result is not None and result.changed)):
                got = None
        if got is None:
            ttgir, spirv, meta = (front_end or compile_kernel)(kernel, caps, name)
            digest = hashlib.sha256(spirv).hexdigest()
            warm.put(cache, k, meta, ttgir, digest)
            result = staged_form(ttgir, meta)
        built = meta.pop("kernel", kernel)
        if kernel.file.endswith(IR_SUFFIX):  # kept by its TTIR's content: this file is the one asked for
            built = dataclasses.replace(built, file=kernel.file)
        b = TritonBuild(targets=list(group.targets), caps=caps, ttgir=ttgir, spirv=spirv, spirv_digest=digest,
                        metadata=meta, notes=meta.pop("notes", []), entry=k)
        b.artifacts = _named(artifact_paths(kernel, name, False, digest, artifacts_dir))
        if result is not None:
            b.staging = result
            if result.changed:
                _staged(b, result.ttgir, warm.staged_key(k, result.ttgir), built, name,
                        _Keeping(kernel, artifacts_dir, cache, files, fresh))
        if files:
            keep_files(b, cache)
        builds.append(b)
    return builds


@dataclass(frozen=True)
class _Keeping:
    """How `build` keeps what it makes (its arguments of that name)."""

    kernel: TritonKernel
    artifacts_dir: Path
    cache: BuildCache | None
    files: bool
    fresh: bool


def _staged(b: TritonBuild, ttgir: str, sk: str | None, built: TritonKernel, name: str, how: _Keeping) -> None:
    """The build made from the staged TTGIR (Triton's later stages), kept as the front end's is."""
    from . import warm

    b.ttgir, b.entry = ttgir, None  # the front end's TTGIR stays in its entry: no file will hold it
    again = None if how.fresh else warm.get(how.cache, sk)
    spirv: bytes | None = None
    if again is not None:
        digest, b.metadata = again.spirv_sha256, again.meta
        for kept_only in ("notes", "kernel"):
            b.metadata.pop(kept_only, None)
        spirv = _kept_file(artifact_paths(how.kernel, name, True, digest, how.artifacts_dir)[1], digest)
        if spirv is None and how.files:
            again = None
    if again is None:
        spirv, b.metadata = compile_ttgir(ttgir, built, b.caps, name)
        digest = hashlib.sha256(spirv).hexdigest()
        warm.put(how.cache, sk, {**b.metadata, "notes": [], "kernel": built}, "", digest)
    b.spirv, b.spirv_digest = spirv, digest
    b.artifacts = _named(artifact_paths(how.kernel, name, True, digest, how.artifacts_dir))


def artifact_paths(kernel: TritonKernel, target: str, staged: bool, digest: str, artifacts_dir: Path
                   ) -> tuple[Path, Path]:
    """Where a build's TTGIR and SPIR-V are kept as files, or would be (in `artifacts_dir`, as
    resolved by the caller: the reports name them by absolute path)."""
    stem = artifact_stem(kernel, target, staged, digest)
    return artifacts_dir / f"{stem}.ttgir", artifacts_dir / f"{stem}.spv"


def _named(paths: tuple[Path, Path]) -> dict:
    return {"ttgir": str(paths[0]), "spirv": str(paths[1])}


def _kept_file(path: Path, digest: str) -> bytes | None:
    """A build's TTGIR or SPIR-V from its file, when that is there as it was written (keep_files
    touches the files a command's reports name, which the cache's bound then keeps: a file read
    here and not named again may go)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == digest else None


def keep_files(b: TritonBuild, cache: BuildCache | None) -> None:
    """A build's TTGIR and SPIR-V as files (the ones its reports name), written unless there
    already (the name holds the SPIR-V's digest), and touched if they are; its front end's entry
    then keeps its TTGIR no more (each artifact stored once).  A build whose SPIR-V is not at
    hand writes none (its maker builds it again first: triton.probes.audit)."""
    from . import warm

    if b.spirv is None:
        return
    for path, data in ((Path(b.artifacts["ttgir"]), b.ttgir.encode()), (Path(b.artifacts["spirv"]), b.spirv)):
        try:
            os.utime(path)
        except OSError:
            atomic_write(path, data)
    b.written = True
    warm.in_files(cache, b.entry)


def artifacts_home() -> Path:
    """Where builds' files go unless the command names a folder: the build cache's, whose bound
    counts them (app.cache.ARTIFACTS)."""
    return build_cache_dir() / "triton-artifacts"


ARTIFACT_NAME_HEAD = 40
"""The characters of a kernel's name an artifact's file name keeps (Inductor's run past 200)."""


def artifact_stem(kernel: TritonKernel, target: str, staged: bool, spirv_digest: str) -> str:
    """A build's artifact file name, without its suffix: the head of the kernel's name (what a
    reader looks for), a digest of its file and name (what keeps two kernels apart), the target
    and the content's digest (every config and shape keeps its own files).  It never grows with
    the kernel's name: the whole name is in the report and the metadata."""
    who = hashlib.sha256(f"{kernel.file}:{kernel.kernel}".encode()).hexdigest()[:8]
    head = re.sub(r"[^A-Za-z0-9_]", "_", kernel.kernel[:ARTIFACT_NAME_HEAD])
    return f"{head}.{who}.{target}{'.staged' if staged else ''}.{spirv_digest[:10]}"


def as_input(b: TritonBuild) -> Input:
    """The SPIR-V as the input ocloc compiles: its path (the artifact's) makes `reproduce:`
    runnable where the file is kept; without its bytes, it is known by its digest alone."""
    if b.spirv is None:
        return Input(path=b.artifacts["spirv"], kind=InputKind.SPIRV, data=b"", digest=b.spirv_digest)
    return Input(path=b.artifacts["spirv"], kind=InputKind.SPIRV, data=b.spirv)
