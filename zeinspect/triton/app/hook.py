"""zeinspect for Triton authors: an autotune prune hook that drops configs offline.

    import zeinspect.triton

    @triton.autotune(configs=get_autotune_config(), key=["M", "N", "K"],
                     prune_configs_by={"early_config_prune": zeinspect.triton.prune_configs(
                         targets=("arl-s", "bmg-g21"), max_spill_bytes=0, signature="*fp16")})
    @triton.jit
    def matmul_kernel(...): ...

Triton calls the hook before it benchmarks; the hook compiles each config for the named
targets with the real compilers (no GPU; the build cache makes a second call free) and keeps
the configs that neither overflow the scratch cap, nor ask for more shared local memory
than a work-group has, nor spill more than `max_spill_bytes`.
"""

from __future__ import annotations

import inspect
import sys
import warnings
from collections.abc import Callable
from typing import Any

from ...hardware import TRITON_TARGETS
from ..model.argtypes import type_of


def prune_configs(*, targets: tuple[str, ...] = TRITON_TARGETS, max_spill_bytes: int = 0,
                  signature: str = "", kernel: str | None = None, compiler: str | None = None,
                  policy: str = "jit") -> Callable[..., list]:
    """An `early_config_prune` function for `@triton.autotune(prune_configs_by=...)`.

    It drops the configs that, on any of `targets`, overflow the per-thread scratch cap, ask
    for more shared local memory than a work-group has (they cannot launch), do not build, or
    spill more than `max_spill_bytes`.  Units: bytes per hardware thread, as the zebin and
    Level Zero's spillMemSize give them; Triton-XPU's own `n_spills` is that same figure in
    bytes (CUDA's `n_spills` counts 4-byte registers, so a CUDA threshold of N is 4N here).
    The figures are those of the build Triton-XPU ends with (`policy`: `jit` load-time rules,
    `native`, or `first`).  It never drops every config: if all fail it keeps the least bad
    one and warns.

    `signature` types what the launch arguments do not say (`*fp16` for every pointer, or
    NAME=TYPE pairs); tensors' dtypes and Python scalars are read from the launch arguments.
    `kernel` (`FILE.py:NAME`) names the kernel when the hook is not called by Triton's
    Autotuner (which it otherwise finds as its caller)."""

    def prune(configs: list, named_args: dict, **kwargs: Any) -> list:
        from ...app.gate import settings
        from ...app.session import open_session
        from ..build.context import offline
        from ..judge import pruned
        from ..model.kernel import AutotuneConfig, TritonKernel, parse_pairs
        from ..probes.screen import screen_configs

        path, name = _kernel(kernel, sys._getframe(1))
        given = parse_pairs(signature, "signature")
        for arg, value in {**named_args, **kwargs}.items():
            typed = type_of(value)
            if typed is not None and arg not in given:
                given[arg] = typed
        base = TritonKernel(file=path, kernel=name, signature=given, constexprs={})
        config = settings({"targets": tuple(targets), "compiler": compiler, "triton_policy": policy})
        # offline(): the user's process gets its backends, TRITON_CACHE_DIR and sys.modules back.
        with offline():
            screen = screen_configs(base, [AutotuneConfig.of(c) for c in configs], config, open_session(config))
        kept, best = pruned(screen, max_spill_bytes)
        if best is None:
            return [configs[i] for i in kept]
        warnings.warn(f"zeinspect: every config of {name} fails on {', '.join(targets)}; keeping the least bad "
                      f"one ({screen[best][0].describe()})", stacklevel=2)
        return [configs[best]]

    return prune


def _kernel(spec: str | None, caller: Any) -> tuple[str, str]:
    """(file, name) of the kernel: from `spec`, or from the Autotuner that called the hook."""
    if spec:
        path, _, name = spec.rpartition(":")
        return path, name
    tuner = caller.f_locals.get("self") if caller is not None else None
    fn = getattr(tuner, "fn", None)
    while fn is not None and not hasattr(fn, "arg_names"):
        fn = getattr(fn, "fn", None)
    if fn is None:
        raise TypeError("zeinspect.triton.prune_configs: not called by a Triton Autotuner; pass kernel='FILE.py:NAME'")
    return inspect.getsourcefile(fn.fn) or "", fn.fn.__name__
