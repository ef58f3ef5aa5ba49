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


def inductor_choices(*, targets: tuple[str, ...] = TRITON_TARGETS, max_spill_bytes: int | None = None,
                     compiler: str | None = None, policy: str = "jit") -> Callable[[], Any]:
    """A factory for `torch._inductor.config.inductor_choices_class`: Inductor's own way in to
    change its template choices before it compiles and benchmarks them
    (torch/_inductor/choices.py, InductorChoices.get_template_configs: the choices of one
    problem, each template config generated as Python, none compiled yet).

    Each config of a Triton template (max-autotune's GEMM templates) goes through Triton's front
    end to its TTIR, offline (zeinspect's Triton cache, never the user's), and is screened for
    `targets` with the real compilers; a config that does not build there (over the per-thread
    scratch cap, say) or cannot launch, or spills more than `max_spill_bytes` (None: any spill
    is kept), is dropped before Inductor compiles or benchmarks it.  It never drops every config
    of a problem: if all fail, the least bad one is kept, with a warning.  The ATen choice is
    never touched."""
    from torch._inductor.choices import InductorChoices

    class ZeinspectChoices(InductorChoices):  # type: ignore[misc]
        def uuid(self) -> str:  # part of Inductor's cache key: a different screen is a different choice
            return f"zeinspect:{','.join(targets)}:{max_spill_bytes}:{compiler}:{policy}"

        def get_template_configs(self, *args: Any, **kwargs: Any) -> list:
            choices = super().get_template_configs(*args, **kwargs)
            return _kept(choices, _Screen.of(self, targets, compiler, policy), max_spill_bytes)

    return ZeinspectChoices


class _Screen:
    """The settings and build session of one choices object (its problems share the build cache)."""

    def __init__(self, targets: tuple[str, ...], compiler: str | None, policy: str) -> None:
        from ...app.gate import settings
        from ...app.session import open_session

        self.targets = tuple(targets)
        self.config = settings({"targets": self.targets, "compiler": compiler, "triton_policy": policy})
        self.session = open_session(self.config)

    @classmethod
    def of(cls, owner: Any, targets: tuple[str, ...], compiler: str | None, policy: str) -> _Screen:
        screen = owner.__dict__.get("_zeinspect_screen")
        if screen is None:
            screen = owner.__dict__["_zeinspect_screen"] = cls(targets, compiler, policy)
        return screen


def _kept(choices: list, screen: _Screen, max_spill_bytes: int | None) -> list:
    """Inductor's template choices without those its Triton configs' screen rules out (inductor_choices).
    A config that could not be screened is kept: what is not judged is never dropped."""
    from torch._inductor.select_algorithm import TritonTemplateCaller

    from ..build.context import offline
    from ..judge import pruned
    from .library import Screener

    triton = [c for c in choices if isinstance(c, TritonTemplateCaller)]
    if not triton:
        return choices
    with offline():
        specs = [(c, _first_stage(c)) for c in triton]
        screener = Screener(screen.config, screen.session)
        screener.screen_all([s for _, s in specs if s is not None], None)
    judged = [(c, got) for c, s in specs if s is not None
              and not isinstance(got := screener.done.get(id(s)), str) and got is not None and got.reports]
    if not judged:
        return choices
    kept, best = pruned(judged, max_spill_bytes if max_spill_bytes is not None else 1 << 62)
    if best is not None:
        warnings.warn(f"zeinspect: every Triton config of {triton[0].name} fails on "
                      f"{', '.join(screen.targets)}; keeping the least bad one", stacklevel=2)
        kept = [best]
    dropped = {id(judged[i][0]) for i in range(len(judged)) if i not in kept}
    return [c for c in choices if id(c) not in dropped]


def _first_stage(choice: Any) -> Any:
    """A template config's kernel through Triton's front end to its TTIR (triton.capture.first_stage),
    as a Specialization to screen; None where it has no Triton module or its front end failed
    (it is kept: what is not judged is never dropped)."""
    import json
    from pathlib import Path

    from torch._inductor.codecache import PyCodeCache

    from ..capture.first_stage import Written, first_stage_only
    from ..model.kernel import IR_SUFFIX, entry_kernel
    from ..model.specialization import Specialization

    bmreq = getattr(choice, "bmreq", None)
    if bmreq is None:
        return None
    try:
        module = PyCodeCache.load_by_key_path(bmreq.module_cache_key, bmreq.module_path, set_sys_modules=False)
        kernel = getattr(module, bmreq.kernel_name)
        with first_stage_only() as entry:
            try:
                kernel._precompile_config(kernel.configs[0])
            except Written:
                pass
        meta = Path(entry["path"])
        return Specialization(entry_kernel(meta.with_suffix(IR_SUFFIX), json.loads(meta.read_bytes())))
    except Exception:  # noqa: BLE001 - not judged here (kept): Inductor's own compile says what is wrong with it
        return None
