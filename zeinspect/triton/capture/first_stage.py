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
from collections.abc import Iterator
from typing import Any


class Written(BaseException):  # noqa: N818 - not an error: the compile's end, once its TTIR is written
    """Raised once Triton has written a kernel's TTIR and metadata: nothing more is compiled.
    Not an Exception: Inductor logs every Exception of a compile as its failure."""


@contextlib.contextmanager
def first_stage_only() -> Iterator[dict]:
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
                out = make_ttir(module, metadata)
                metadata["name"] = entry["name"]
                entry["hash"] = metadata["hash"]
                return out

            stages["ttir"] = ttir

    def first_stage(src: Any, target: Any = None, options: Any = None) -> Any:
        entry.clear()
        entry["name"] = src.name
        try:
            saved_compile(src, target=target, options=options)
        except Exception:
            if "hash" not in entry:
                raise  # the front end failed: the config's own error
            # Past its TTIR, Triton reads a full binary back (CompiledKernel): there is none.
        name = entry["name"][:150] + ".json"  # Triton's own file name (compiler.py)
        entry["path"] = (get_cache_manager(entry["hash"]).get_group(name) or {}).get(name)
        raise Written

    environ = {k: os.environ.get(k) for k in ("TRITON_ALWAYS_COMPILE", "TRITON_STORE_BINARY_ONLY")}
    os.environ.update(TRITON_ALWAYS_COMPILE="1", TRITON_STORE_BINARY_ONLY="0")
    backends["intel"] = dataclasses.replace(saved_backend, compiler=FirstStage)
    triton.compile = first_stage
    try:
        yield entry
    finally:
        triton.compile, backends["intel"] = saved_compile, saved_backend
        for key, value in environ.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


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
