"""The compiler's environment: the variables that change what ocloc, IGC and the driver build.

A compile's result depends on its module, target, options, compiler, and on these variables.
They are part of every compile's cache key and of every report (docs/how-it-works.md,
"The compiler's environment").  Three kinds:

- **IGC's flags** (`IGC_<flag>`): IGC reads each of its registry keys from the environment
  as IGC_<name> (igc_flags.h).  Release builds honour many of them (`IGC_ExtraOCLOptions`,
  `IGC_VISAOptions`, thresholds, and the shader dumps `explain` uses), and a name zeinspect
  cannot classify might be one of them, so every `IGC_` variable counts.
- **NEO's debug keys**: ocloc and the Level Zero driver are NEO's; a release build reads its
  debug keys (CamelCase names, `ProductFamilyOverride`) only when `NEOReadDebugKeys` is 1.  So
  `NEOReadDebugKeys` counts, and, while it is on, every CamelCase variable.
- **The SYCL runtime's build options** (`SYCL_PROGRAM_COMPILE_OPTIONS`, its append form, and
  the two for link options): read by the SYCL runtime, not by ocloc.  They change how the
  runtime builds a SPIR-V image at run time; zeinspect applies the runtime's rule to such
  images (inputs.sycl_image.runtime_options) and never hands them to ocloc.

A compile runs with the caller's environment minus every such variable, plus the ones its
settings name: nothing reaches a compiler that its cache key and its report do not show.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping

SYCL_OPTIONS = ("SYCL_PROGRAM_COMPILE_OPTIONS", "SYCL_PROGRAM_APPEND_COMPILE_OPTIONS",
                "SYCL_PROGRAM_LINK_OPTIONS", "SYCL_PROGRAM_APPEND_LINK_OPTIONS")
NEO_SWITCH = "NEOReadDebugKeys"
_NEO_KEY = re.compile(r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+")
"""NEO's debug keys are CamelCase (`SetCommandStreamReceiver`); no system variable is."""

Environment = tuple[tuple[str, str], ...]
"""A compile's variables, sorted by name: what its cache key and its report carry."""


def _on(value: str | None) -> bool:
    return (value or "").strip() not in ("", "0")


def kind_of(name: str, environ: Mapping[str, str]) -> str | None:
    """'igc', 'neo', 'sycl' or None (a variable that changes no build)."""
    if name.startswith("IGC_"):
        return "igc"
    if name == NEO_SWITCH or (_on(environ.get(NEO_SWITCH)) and _NEO_KEY.fullmatch(name)):
        return "neo"
    if name in SYCL_OPTIONS:
        return "sycl"
    return None


def of(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of `environ` that change what a compile builds."""
    return {k: v for k, v in environ.items() if kind_of(k, environ) is not None}


def normal(pairs: Mapping[str, str] | Iterable[tuple[str, str]]) -> Environment:
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    return tuple(sorted((str(k), str(v)) for k, v in items))


def for_compiler(environment: Environment) -> Environment:
    """What reaches ocloc's process: the SYCL runtime's variables are the runtime's, not ocloc's."""
    return tuple((k, v) for k, v in environment if k not in SYCL_OPTIONS)


def process(environment: Environment | Mapping[str, str] = (), extra: Mapping[str, str] | None = None) -> dict:
    """The environment a compiler process gets: the caller's, without any variable that could
    change the build, then `environment` (the run's) and `extra` (a probe's own: dump folders)."""
    base = {k: v for k, v in os.environ.items() if kind_of(k, os.environ) is None}
    given = dict(environment.items() if isinstance(environment, Mapping) else environment)
    return {**base, **given, **(extra or {})}


def sycl_options(environment: Environment) -> dict[str, str]:
    """The SYCL runtime's option variables the run sets (name -> value)."""
    return {k: v for k, v in environment if k in SYCL_OPTIONS}


def describe(environment: Environment) -> str:
    """`IGC_ExtraOCLOptions=-ze-opt-large-register-file, ...` (empty: none)."""
    return ", ".join(f"{k}={v}" for k, v in environment)


def shell_prefix(environment: Environment) -> str:
    """The variables as a shell command's prefix (`env -i` is not used: the rest of the caller's
    environment changes no build)."""
    import shlex

    return "".join(f"{k}={shlex.quote(v)} " for k, v in for_compiler(environment))
