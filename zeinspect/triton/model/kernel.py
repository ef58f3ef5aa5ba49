"""What a Triton kernel request is: `FILE.py:KERNEL`, its signature, constexprs and launch options.

The request as given (a command line, a gate entry, a cache entry's metadata); the signature
it leaves open is completed where the module is loaded (triton.load.signature).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ...errors import UsageError
from ...model import GrfMode
from ...pairs import parse_pairs
from .argtypes import DTYPE_PREFIX
from .launch import Launch

LAUNCH_OPTIONS = ("num_warps", "threads_per_warp", "grf_mode", "num_stages")
TRITON_GRF_MODES = tuple(mode.triton for mode in GrfMode)
"""The register-file modes of the installed triton-xpu (3.3.0b1: XPUOptions.grf_mode)."""

__all__ = ["AutotuneConfig", "TritonKernel", "constexpr_value", "parse_pairs", "parse_spec"]


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
    options_given: frozenset[str] = frozenset(LAUNCH_OPTIONS)
    """The launch options above that were asked for; the others are as the module's own code
    launches the kernel (triton.load.discover), where it does."""
    attrs: tuple = ()
    """Triton's specialization attributes of the arguments, as a launch gave them (argument path,
    [[attribute, value], ...]: `tt.divisibility` 16 for an aligned pointer or a multiple of 16),
    from a captured run (triton.capture); empty: none (as Triton's own default)."""
    options: tuple[tuple[str, Any], ...] = ()
    """Other Triton compile options, (name, value) pairs sorted by name: those a registered
    Triton lever (triton.model.levers) sets that are not fields above.  Passed to Triton's options
    as they are, so a new launch-option lever needs no field here."""

    @property
    def label(self) -> str:
        return f"{self.file}:{self.kernel}"

    def option(self, name: str, default: Any = None) -> Any:
        """A Triton option's value in this request: its field, or among `options`."""
        if name in _FIELDS:
            return getattr(self, name)
        return dict(self.options).get(name, default)

    def with_options(self, values: dict[str, Any]) -> TritonKernel:
        """The request with these Triton options set: in its own field where it has one, else
        among `options`."""
        fields = {k: v for k, v in values.items() if k in _FIELDS}
        others = {**dict(self.options), **{k: v for k, v in values.items() if k not in _FIELDS}}
        return dataclasses.replace(self, **fields, options=tuple(sorted(others.items())))

    def as_launched(self, launch: Launch | None) -> tuple[TritonKernel, list[str]]:
        """The request with the launch options it leaves open taken from the module's own launch,
        and a note for each."""
        if launch is None:
            return self, []
        changes: dict[str, Any] = {}
        options = dict(launch.options)
        if "warp_size" in options and "threads_per_warp" not in options:
            options["threads_per_warp"] = options.pop("warp_size")
        for name in LAUNCH_OPTIONS:
            if name not in self.options_given and name in options and options[name] is not None:
                changes[name] = options[name]
        if not changes:
            return self, []
        said = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in changes.items())
        notes = [f"launch options {said}: {launch.describe()}"]
        return dataclasses.replace(self, **changes), notes


_FIELDS = frozenset(f.name for f in dataclasses.fields(TritonKernel)) - {"options"}


@dataclass(frozen=True)
class AutotuneConfig:
    """One `triton.Config` of a kernel's `@triton.autotune`, as the module builds it."""

    constexprs: dict
    num_warps: int
    num_stages: int | None
    grf_mode: str | None
    notes: tuple[str, ...] = field(default=(), compare=False)
    """What of the config Triton-XPU ignores offline (maxnreg, pre_hook, num_ctas), one line each."""
    unusable: str | None = field(default=None, compare=False)
    """Why the config cannot be built here (a value that comes from a package not installed)."""

    def describe(self) -> str:
        parts = [f"{k}={v}" for k, v in self.constexprs.items()] + [f"num_warps={self.num_warps}"]
        parts += [f"num_stages={self.num_stages}"] if self.num_stages is not None else []
        parts += [f"grf_mode={self.grf_mode}"] if self.grf_mode else []
        return ", ".join(parts)

    def to_json(self) -> dict:
        return {"constexprs": self.constexprs, "num_warps": self.num_warps, "num_stages": self.num_stages,
                "grf_mode": self.grf_mode}

    @classmethod
    def of(cls, config: Any) -> AutotuneConfig:
        """From a `triton.Config`, read as Triton-XPU reads it: a `grf_mode` among its kwargs is
        its launch option; maxnreg is CUDA's (XPUOptions has none), a pre_hook runs at launch, and
        more than one CTA per program is NVIDIA's clusters: each is said, not built."""
        from .placeholder import Placeholder

        constexprs = {k: v for k, v in config.kwargs.items() if k != "grf_mode"}
        notes = []
        if getattr(config, "maxnreg", None) is not None:
            notes.append(f"maxnreg={config.maxnreg} ignored: a CUDA option Triton-XPU does not have")
        if getattr(config, "pre_hook", None) is not None:
            notes.append("pre_hook not run: it runs at launch, before the kernel, and does not change its build")
        if getattr(config, "num_ctas", 1) not in (1, None):
            notes.append(f"num_ctas={config.num_ctas} ignored: Triton-XPU builds one CTA per program")
        unknown = [k for k, v in constexprs.items() if isinstance(v, Placeholder)]
        unusable = (f"{', '.join(unknown)} comes from {constexprs[unknown[0]].__name__.split('.')[0]}, which is not "
                    "installed here" if unknown else None)
        return cls(constexprs=constexprs, num_warps=config.num_warps, num_stages=config.num_stages,
                   grf_mode=config.kwargs.get("grf_mode"), notes=tuple(notes), unusable=unusable)

    def applied_to(self, kernel: TritonKernel) -> TritonKernel:
        return dataclasses.replace(kernel, constexprs={**kernel.constexprs, **self.constexprs},
                                   num_warps=self.num_warps, num_stages=self.num_stages,
                                   grf_mode=self.grf_mode or kernel.grf_mode)


def known_grf_mode(kernel: TritonKernel) -> tuple[TritonKernel, list[str]]:
    """A register-file word the installed Triton-XPU does not know (newer ones spell counts,
    '256') is passed to its options unchanged and selects no register-file flag: built as its
    default, and said."""
    if kernel.grf_mode in TRITON_GRF_MODES:
        return kernel, []
    import triton

    return dataclasses.replace(kernel, grf_mode="default"), [
        f"grf_mode={kernel.grf_mode!r} is not a mode triton-xpu {triton.__version__} knows "
        f"({', '.join(TRITON_GRF_MODES)}): it builds with its default register file"]


def parse_spec(spec: str) -> tuple[str, str]:
    path, sep, name = spec.rpartition(":")
    if not sep or not path or not name:
        raise UsageError(f"expected FILE.py:KERNEL, not {spec!r}")
    return path, name


def constexpr_value(text: str) -> Any:
    if text in ("True", "False"):
        return text == "True"
    if text.startswith(DTYPE_PREFIX):
        import triton.language as tl

        return tl.dtype(text[len(DTYPE_PREFIX):])
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def is_pointer(arg: str) -> bool:
    """Whether an argument is a pointer by its name (`a_ptr`, `out_ptr`, `X_ptr`): the
    convention of Triton's tutorials; kernels that do not follow it are read by use
    (triton.load.source)."""
    return "ptr" in arg.lower()


IR_SUFFIX = ".ttir"
"""A request whose file is Triton's IR (a cache entry's TTIR, triton.sources.cache) is built from it:
the IR already holds the signature, the constexprs' values and the specialization attributes."""

CARRIED_OPTIONS = ("enable_fp_fusion", "default_dot_input_precision")
"""Options beside the launch options that a re-screen of a Triton cache entry keeps: they change
the lowering and mean the same to every backend."""


def entry_kernel(ttir: object, meta: dict) -> TritonKernel:
    """The kernel a Triton cache entry's TTIR (its path) and metadata make: built from the TTIR,
    with the entry's launch options (triton.sources.cache)."""
    target = meta["target"] if isinstance(meta.get("target"), dict) else {}
    threads = meta.get("threads_per_warp") or target.get("warp_size") or 32
    grf = meta.get("grf_mode")
    return TritonKernel(file=str(ttir), kernel=str(meta["name"]), signature={}, constexprs={},
                        num_warps=int(meta["num_warps"]), threads_per_warp=int(threads),
                        grf_mode=grf if grf in TRITON_GRF_MODES else "default",
                        num_stages=meta.get("num_stages"), options_given=frozenset(LAUNCH_OPTIONS),
                        options=tuple(sorted((k, meta[k]) for k in CARRIED_OPTIONS if k in meta)))
