"""Triton's own pipeline to its first stage, in the captured command's process: a kernel's TTIR
and metadata written into the capture's Triton cache, as Triton writes its entries, and nothing
compiled past it (no device here; zeinspect's screen builds the rest from the TTIR, as it
screens any cache entry: triton.sources.cache).

Both ways a captured command compiles go through it: the kernels its own code launches
(triton.capture, at Triton's pre-compile hook, with the JITFunction that really ran, its real
globals, signature, constexprs and specialization attributes) and those torch.compile
generates (triton.capture.inductor).  It imports Triton and the standard library only: it runs in the
user's process.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


class Written(BaseException):  # noqa: N818 - not an error: the compile's end, once its TTIR is written
    """Raised once Triton has written a kernel's TTIR and metadata: nothing more is compiled.
    Not an Exception: Inductor logs every Exception of a compile as its failure."""


@contextlib.contextmanager
def first_stage_only() -> Iterator[dict]:
    """_first_stage_only, one at a time in a process (_STAGE_LOCK)."""
    with _STAGE_LOCK, _first_stage_only() as entry:
        yield entry


@contextlib.contextmanager
def _first_stage_only() -> Iterator[dict]:
    """triton.compile, within: Triton's own pipeline to its TTIR, written to Triton's cache (the
    capture's) as Triton writes its entries, then Written (`entry` says where the last one went).

    Triton's compile() runs (its options, hash and files are its own) with the Intel backend's
    stages after `ttir` removed; the TTIR stage also names the kernel in the metadata (later
    stages do that).  Each compile runs (TRITON_ALWAYS_COMPILE: a cache hit would not say
    where its entry is), and keeps its TTIR (not TRITON_STORE_BINARY_ONLY)."""
    import dataclasses

    import triton
    from triton.backends import backends
    from triton.runtime.cache import get_cache_manager

    saved_compile, saved_backend = triton.compile, backends["intel"]
    entry: dict[str, Any] = {}

    class FirstStage(saved_backend.compiler):  # type: ignore[misc, name-defined]
        def add_stages(self, stages: dict, options: Any, *rest: Any) -> None:
            super().add_stages(stages, options, *rest)
            for later in [k for k in stages if k != "ttir"]:
                del stages[later]
            make_ttir = stages["ttir"]

            def ttir(module: Any, metadata: dict) -> Any:
                # A specialization made before but for LAUNCH_ONLY options: its TTIR as a text
                # (Triton's cache writes a module as its text).
                out = module.text if isinstance(module, _Made) else make_ttir(module, metadata)
                if "made" in entry:
                    _MADE[entry["made"]][2] = str(out)
                metadata["name"] = entry["name"]
                entry["hash"] = metadata["hash"]
                return out

            stages["ttir"] = ttir

    def first_stage(src: Any, target: Any = None, options: Any = None) -> Any:
        entry.clear()
        entry["name"] = src.name
        # An ASTSource (not an IR file): its TTIR reused where it can be, unless Triton is asked
        # to snapshot the module's locations (USE_IR_LOC: it needs the module, not its text).
        reusing = hasattr(src, "fn") and not os.environ.get("USE_IR_LOC")
        if reusing:
            src.make_ir = _reused(src, src.make_ir, target, entry)
        try:
            saved_compile(src, target=target, options=options)
        except Exception:
            if "hash" not in entry:
                raise  # the front end failed: the config's own error
            # Past its TTIR, Triton reads a full binary back (CompiledKernel): there is none.
        finally:
            if reusing:
                del src.make_ir  # the source as it was (Triton's own method)
        name = entry["name"][:150] + ".json"  # Triton's own file name (compiler.py)
        entry["path"] = (get_cache_manager(entry["hash"]).get_group(name) or {}).get(name)
        raise Written

    from triton.compiler import code_generator

    saved_file_line = code_generator.get_jit_fn_file_line
    environ = {k: os.environ.get(k) for k in ("TRITON_ALWAYS_COMPILE", "TRITON_STORE_BINARY_ONLY")}
    os.environ.update(TRITON_ALWAYS_COMPILE="1", TRITON_STORE_BINARY_ONLY="0")
    backends["intel"] = dataclasses.replace(saved_backend, compiler=FirstStage)
    triton.compile = first_stage
    code_generator.get_jit_fn_file_line = _file_line(saved_file_line)
    try:
        yield entry
    finally:
        triton.compile, backends["intel"] = saved_compile, saved_backend
        code_generator.get_jit_fn_file_line = saved_file_line
        for key, value in environ.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


LAUNCH_ONLY = ("num_warps", "num_stages")
"""Options neither Triton's code generator nor make_ttir reads unless the kernel asks
(`tl.extra.intel.num_warps()` reads num_warps; a loop's own `num_stages=` is the source's): the
autotune configs of one kernel that differ only in these have the same TTIR."""
_MADE: OrderedDict[str, list] = OrderedDict()
"""The TTIR made, by source and options but LAUNCH_ONLY: [the function (kept alive: its id is in
the key), the LAUNCH_ONLY values the code generator read, the TTIR text].  The last few only: a
kernel's configs compile one after another."""
_MADE_KEPT = 64


class _Reads:
    """A kernel's options, as the code generator reads them: the names it read are kept."""

    def __init__(self, options: Any) -> None:
        self._options, self.names = options, set[str]()

    def __getattr__(self, name: str) -> Any:
        self.names.add(name)
        return getattr(self._options, name)


@dataclass(frozen=True)
class _Made:
    """make_ir's answer for a specialization whose TTIR was made before: the TTIR stage writes it."""

    text: str


_STAGE_LOCK = threading.RLock()
"""Held by first_stage_only: Triton's compile and backend swapped for the process, one at a time
(the capture's launches, Inductor's compiles and the prune hook may each be in a thread)."""
_LINES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""JITFunction -> its file and first line (a function's source does not change during a run)."""


def _file_line(file_line: Any) -> Any:
    """Triton's get_jit_fn_file_line, once per function: it reads and tokenizes the function's
    source (inspect.getsourcelines) at every call the code generator makes, a sixth of the code
    generator's time on fla-core; a function's source does not change during a run."""
    def once(fn: Any) -> Any:
        try:
            kept = _LINES.get(fn)
            if kept is None:
                kept = _LINES[fn] = file_line(fn)
            return kept
        except TypeError:  # not weakly referable: asked as Triton asks it
            return file_line(fn)

    return once


def _reused(src: Any, make_ir: Any, target: Any, entry: dict) -> Any:
    """`src.make_ir` that runs Triton's code generator and make_ttir once for specializations that
    differ only in options neither reads (LAUNCH_ONLY), and gives the others the TTIR made.

    The code generator is Python in the user's process, most of the front end's cost there: an
    autotuned kernel's configs often differ only in warps and stages (fla-core's 572
    specializations are 69 such sources).  The key is Triton's own source hash (its function,
    signature, attributes and constants: its cache's key) with the other options and the target;
    Triton's compile() runs for each as before (its options, hash, metadata and files are its own),
    and the TTIR it writes is the one make_ttir made for the first (tests/integration/triton/
    test_first_stage.py: the text equals a compile of its own)."""
    def made(options: Any, codegen_fns: Any, module_map: Any, context: Any) -> Any:
        from triton.compiler.compiler import get_cache_invalidating_env_vars

        values = {k: v for k, v in sorted(vars(options).items()) if k not in LAUNCH_ONLY}
        # Triton's cache key but the launch-only options (its environment variables too:
        # make_ttir reads TRITON_INTEL_RAISE_BLOCK_POINTER), and the function itself: a source
        # hash does not cover the values of the globals it reads, which may differ between two
        # functions of the same text (Triton itself compiles each JITFunction afresh).
        key = (f"{src.hash()}-{id(src.fn)}-{target!r}-{values!r}-"
               f"{sorted(get_cache_invalidating_env_vars().items())}")
        hit = _MADE.get(key)
        if hit is not None and hit[0] is src.fn and hit[2] is not None and \
                all(getattr(options, k) == v for k, v in hit[1].items()):
            _MADE.move_to_end(key)
            return _Made(hit[2])
        reads = _Reads(options)
        module = make_ir(reads, codegen_fns, module_map, context)
        _MADE[key] = [src.fn, {k: getattr(options, k) for k in LAUNCH_ONLY if k in reads.names}, None]
        entry["made"] = key  # the TTIR stage records what make_ttir makes of it
        while len(_MADE) > _MADE_KEPT:
            _MADE.popitem(last=False)
        return module

    return made


def through_front_end(jit: Any, compile_args: dict, options: dict, target: Any) -> dict:
    """One launch's specialization through Triton's front end to its TTIR, as JITFunction.run
    would compile it (the same ASTSource: the function, its signature, constexprs and
    specialization attributes; the same options): {"ttir": its metadata file} or, when the
    front end fails, {"front_end": why} (one line: the specialization's finding, never an
    exception in the user's code)."""
    import triton
    from triton.compiler import ASTSource

    src = ASTSource(jit, compile_args["signature"], compile_args["constants"], compile_args["configs"][0])
    with first_stage_only() as entry:
        try:
            triton.compile(src, target=target, options=options)
        except Written:
            return {"ttir": entry.get("path")} if entry.get("path") else {"front_end": "Triton wrote no cache entry"}
        except Exception as exc:  # noqa: BLE001 - the front end's error is the specialization's finding
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            return {"front_end": f"Triton's front end for xpu: {exc.__class__.__name__}: "
                                 f"{lines[-1] if lines else ''}"[:400]}
    return {"front_end": "Triton compiled it whole (no first stage met)"}
