"""Every environment variable zeinspect reads, declared once: name, type, default, what it does.

Nothing reads `os.environ` at import time: `value(name)` reads the variable when it is asked
for, so a test (or the pytest plugin, or a long-lived process) that sets one sees it take
effect.  The docs' environment reference is generated from `ENVIRONMENT`, and a test fails
when the package reads a ZEINSPECT_ variable this table does not declare.

Variables that give a run setting are declared with the setting, in `zeinspect.settings.SETTINGS`
(its name, parser, default and help), which registers them here (`register`); they are read by
`zeinspect.settings.resolve` only, below the gate configuration and the command line.  The
others, declared here, say where things live, tune a mechanism, or are hooks for the
project's own tests and benchmarks.

The compiler's own variables (IGC_*, NEO's debug keys, the SYCL runtime's) are not here: they
are inputs of a compile, classified by `zeinspect.toolchain.environment`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


def _flag(text: str) -> bool:
    """On unless 0, false, no, off or empty: the spelling of every on/off variable here."""
    return text.strip().lower() not in ("", "0", "false", "no", "off")


@dataclass(frozen=True)
class EnvVar:
    name: str
    parse: Callable[[str], Any]
    default: Any
    help: str
    setting: str | None = None
    """The run setting it gives (`zeinspect.settings`), if any."""
    audience: str = "user"
    """user: documented for users; test: a hook for the project's own tests and benchmarks;
    internal: set by zeinspect in a process it starts."""
    type_name: str = ""
    """What kind of value it takes (the reference table's column); derived from `parse` when empty."""

    def __post_init__(self) -> None:
        if not self.type_name:
            name = {str: "text", int: "integer", float: "number", _flag: "flag"}.get(self.parse, "text")
            object.__setattr__(self, "type_name", name)


_DECLARED: tuple[EnvVar, ...] = (
    # Where things live.
    EnvVar("ZEINSPECT_CACHE_DIR", str, None, "The build cache's folder (default $XDG_CACHE_HOME/zeinspect/builds)."),
    EnvVar("ZEINSPECT_CACHE_MAX_SIZE", str, "5G",
           "The build cache's bound (500M, 5G; 0: none): at the end of each command the entries and Triton "
           "artifacts written longest ago are removed until it fits, never one the command used."),
    EnvVar("ZEINSPECT_TOOLCHAIN_DIR", str, None,
           "Where `toolchain fetch` installs compilers and what zeinspect learns of each is kept "
           "(default $XDG_CACHE_HOME/zeinspect/toolchains)."),
    EnvVar("ZEINSPECT_OCLOC", str, None, "Use this ocloc and no other (like $CC)."),
    EnvVar("ZEINSPECT_ZE_LOADER", str, None, "The Level Zero loader library to open (default libze_loader.so.1)."),
    EnvVar("ZEINSPECT_DEBIAN_MIRROR", str, None,
           "The Debian mirror `toolchain fetch` downloads from (default: the one apt's sources name)."),
    EnvVar("ZEINSPECT_DEBIAN_SUITE", str, "sid", "The Debian suite `toolchain fetch` takes the compiler stack from."),
    EnvVar("ZEINSPECT_APT_ETC", str, "/etc/apt", "The apt configuration folder whose sources name the mirror."),
    # Bounds and mechanisms.
    EnvVar("ZEINSPECT_SCHEDULER_TIMEOUT", float, 10.0, "Seconds to wait for a Dask scheduler to answer."),
    EnvVar("ZEINSPECT_MAX_DECOMPRESSED", int, 1 << 30, "The largest a compressed device image may decompress to."),
    EnvVar("ZEINSPECT_LOAD_TIMEOUT", float, 60.0, "Seconds a Triton module may take to load (in a child process)."),
    EnvVar("ZEINSPECT_FETCH_BATCH", int, 256, "Entries asked of a shared build cache in one request."),
    EnvVar("ZEINSPECT_DEBUG", _flag, False, "Show a traceback instead of the one-line internal error."),
    EnvVar("ZEINSPECT_COLLECT_ONLY", _flag, False,
           "The pytest plugin's `audit_test` collects without compiling (every case skips)."),
    # Set by zeinspect itself in the command `triton --run` runs, and in a `pytest --zeinspect-triton`
    # session for its xdist workers (triton.capture).
    EnvVar("ZEINSPECT_TRITON_CAPTURE", str, None,
           "Where the launches are written (set by `triton --run` and `pytest --zeinspect-triton`).",
           audience="internal"),
    EnvVar("ZEINSPECT_TRITON_CAPTURE_TARGET", str, None,
           "The target the offline driver answers for (set by `triton --run` and `pytest --zeinspect-triton`).",
           audience="internal"),
    EnvVar("ZEINSPECT_TRITON_CAPTURE_FRONT_END", _flag, True,
           "Off: `triton --run` records launches without taking each through Triton's front end in the "
           "command (the benchmark's baseline for what the front end costs there; the screen then rebuilds each "
           "kernel from its module, with the static loader).", audience="test"),
    # Hooks for the project's own tests and benchmarks.
    EnvVar("ZEINSPECT_RUNTIME_FAULT", str, None, "Inject a fault into the Level Zero probe (tests).", audience="test"),
    EnvVar("ZEINSPECT_REQUIRE_TOOLCHAINS", _flag, False,
           "Tests fail instead of skipping when a compiler is missing (`make test` sets it).", audience="test"),
    EnvVar("ZEINSPECT_REALWORLD", str, None, "Where the real-world modules are (tests).", audience="test"),
    EnvVar("ZEINSPECT_UPDATE_SCREENSHOT", _flag, False, "The browser test rewrites docs/ screenshots.",
           audience="test"),
    EnvVar("ZEINSPECT_WHEELS", str, None, "A folder of downloaded wheels for the benchmarks.", audience="test"),
    EnvVar("ZEINSPECT_FULL_MATRIX", _flag, False, "Tests run the whole target matrix, not a sample.",
           audience="test"),
)

BY_NAME: dict[str, EnvVar] = {v.name: v for v in _DECLARED}
"""Every variable zeinspect reads: those declared here, then the settings' (zeinspect.settings
registers them when it is imported)."""
ENVIRONMENT: list[EnvVar] = list(_DECLARED)
"""The same, in declaration order (the docs' reference table)."""


def register(var: EnvVar) -> None:
    """Declare a variable from the module that owns what it gives (a run setting's)."""
    if var.name in BY_NAME:
        ENVIRONMENT.remove(BY_NAME[var.name])
    BY_NAME[var.name] = var
    ENVIRONMENT.append(var)


def unregister(name: str) -> None:
    var = BY_NAME.pop(name, None)
    if var is not None:
        ENVIRONMENT.remove(var)


def value(name: str, environ: Mapping[str, str] | None = None) -> Any:
    """The variable's value, parsed, or its default when unset or empty.  A value that does not
    parse is the default too: an environment is not a place for a hard error to come from."""
    var = BY_NAME[name]
    text = (os.environ if environ is None else environ).get(name)
    if text is None or text == "":
        return var.default
    try:
        return var.parse(text)
    except ValueError:
        return var.default


def given(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the variable is set to something."""
    return bool((os.environ if environ is None else environ).get(name))
