"""glibc's allocator, held to one arena in zeinspect's own processes.

glibc gives each thread that allocates an arena of its own (up to 8 per core).  Triton's
compiles (LLVM, MLIR) free what they allocate, but with other threads beside them (the
compiler threads of a batched screen, MLIR's own thread pool) the freed memory stays split
over arenas: a Triton cache of 67 entries screened on two targets peaked at 446 MB, and at
197 MB with one arena, in the same 51 s (bench/triton_cache.py).  The CLI's process and the
Triton front-end workers (triton.build.front_ends) are limited; compilers start with the default.
"""

from __future__ import annotations

MALLOC_ARENAS = 1
M_ARENA_MAX = -8  # glibc's malloc.h


def limit_arenas() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(M_ARENA_MAX, MALLOC_ARENAS)
    except (OSError, AttributeError):
        pass  # not glibc: its allocator has its own rules
