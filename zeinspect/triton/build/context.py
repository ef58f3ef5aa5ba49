"""Triton with the offline Intel backend in place: how every compile and every module load runs.

`offline()` puts the offline backend (triton.offline.compiler), its libdevice link
(triton.offline.link) and a Triton cache folder of the process's own in place and, when the outermost use
ends, gives the process back as it found it (the prune hook runs inside the user's own Triton
process).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

from ..load import loader
from ..offline.compiler import offline_backend_class, triton_module
from ..offline.link import LinkingLlvm

_offline_lock = threading.Lock()


_offline_depth = 0


_saved: dict[str, Any] = {}
_own_cache: list[Any] = []


def _process_triton_cache() -> str:
    """This process's Triton cache folder: made once, removed at its exit."""
    if not _own_cache:
        _own_cache.append(tempfile.TemporaryDirectory(prefix="zeinspect-triton-cache-"))
    return str(_own_cache[0].name)


@contextlib.contextmanager
def offline() -> Iterator[Any]:
    """Triton with the offline Intel backend and zeinspect's cache folder, for the duration;
    the outermost exit restores the backends registry, the backend's `llvm` (triton.offline.link),
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
            # make_llir's libdevice link, without parsing libdevice where it brings no function (triton.offline.link)
            intel_compiler.llvm = LinkingLlvm(intel_compiler.llvm)
            # A Triton cache of this process's own, removed when it ends: the user's is never
            # written unless they ask, and zeinspect keeps each build's TTGIR and SPIR-V once, in
            # its build cache (triton.build.warm); Triton's copy of them (and of its LLVM IR)
            # there was a second and third, uncounted by the cache's bound (issue 62).
            os.environ["TRITON_CACHE_DIR"] = _process_triton_cache()
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
