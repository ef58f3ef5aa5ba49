"""Which build-option spelling each compiler accepts for each register-file mode.

Spellings differ between IGC generations and are not all documented, so they are
established, not assumed: for each mode the candidates are tried on a tiny kernel for a
target with a large register file, and the first one that builds *and* gives the
expected `grf_count` in .ze_info is kept.  The result is cached with the compiler's
identity.  Observed on 2026-11-30: IGC 1.0.12504 accepts `-ze-opt-large-register-file`
and `-cl-intel-256-GRF-per-thread` but no explicit 128 or automatic mode; IGC 2.40
accepts those plus `-cl-intel-128-GRF-per-thread`, `-ze-exp-register-file-size 256`,
and the automatic mode only as an internal option.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ..errors import UsageError
from ..hardware import LARGE_GRF_PROBE_IPS
from ..model import Compiler, GrfMode, KernelReport
from ..toolchain.ocloc import Flags, compile_argv
from ..toolchain.run import run_tool
from .base import BuildOptions, CliOption, How, Lever

PROBE_KERNEL = "__kernel void zeinspect_probe(__global float* x) { x[get_global_id(0)] += 1.0f; }\n"
PROBE_IPS = LARGE_GRF_PROBE_IPS

# mode -> candidates of (where, option text, grf_count expected or None for "builds")
CANDIDATES: dict[str, list[tuple[str, str, int | None]]] = {
    GrfMode.LARGE: [("options", "-ze-opt-large-register-file", 256), ("options", "-cl-intel-256-GRF-per-thread", 256),
            ("options", "-ze-exp-register-file-size 256", 256)],
    GrfMode.SMALL: [("options", "-cl-intel-128-GRF-per-thread", 128), ("options", "-ze-exp-register-file-size 128", 128),
            ("internal", "-cl-intel-128-GRF-per-thread", 128)],
    GrfMode.AUTO: [("options", "-ze-intel-enable-auto-large-GRF-mode", None),
             ("internal", "-ze-intel-enable-auto-large-GRF-mode", None)],
}


GrfSpelling = BuildOptions


def grf_spelling(compiler: Compiler, mode: str) -> BuildOptions:
    """The options that select `mode` on this compiler; UsageError if it has none."""
    if mode == GrfMode.DEFAULT:
        return BuildOptions()
    if mode not in CANDIDATES:
        raise UsageError(f"unknown register file mode {mode!r} (default, 128, 256, auto)")
    from ..toolchain.knowledge import remembered

    found = BuildOptions(**remembered("levers.json", f"{compiler.id}|{mode}",
                                      lambda: _establish(compiler, mode).__dict__))
    if found.note == "unsupported":
        raise UsageError(f"{compiler.id} has no build option for register file mode {mode!r}")
    return found


def _probe_ip(compiler: Compiler) -> str | None:
    return next((ip for ip in PROBE_IPS if compiler.knows(ip)), None)


def _try(compiler: Compiler, ip: str, where: str, text: str) -> int | None:
    """grf_count of the probe kernel built with this option, or None if it did not build."""
    from ..inputs.zebin import read_zebin

    with tempfile.TemporaryDirectory(prefix="zeinspect-lever-") as tmp:
        src = Path(tmp) / "probe.cl"
        src.write_text(PROBE_KERNEL)
        internal = [] if compiler.zebin_by_default else ["-cl-intel-allow-zebin"]
        options = []
        if text and where == "options":
            options.append(text)
        elif text:
            internal.append(text)
        argv = compile_argv(compiler, str(src), ip, out_dir=str(Path(tmp) / "out"), output="probe",
                            flags=Flags(" ".join(options), " ".join(internal)))
        run = run_tool(argv, cwd=tmp, timeout=120)
        if run.returncode != 0:
            return None
        for out in sorted((Path(tmp) / "out").glob("probe*")):
            if out.suffix in (".spv", ".gen", ".dbg"):
                continue
            try:
                zebin = read_zebin(out.read_bytes(), "probe")
            except Exception:  # noqa: BLE001 - any unreadable output means "not this spelling"
                return None
            return zebin.kernels[0].grf if zebin.kernels else None
    return None


def _establish(compiler: Compiler, mode: str) -> BuildOptions:
    ip = _probe_ip(compiler)
    if ip is None:
        return BuildOptions(note="unsupported")
    for where, text, expected in CANDIDATES[mode]:
        grf = _try(compiler, ip, where, text)
        if grf is not None and (expected is None or grf == expected):
            return BuildOptions(options=text if where == "options" else "",
                               internal_options=text if where == "internal" else "")
    if mode == GrfMode.SMALL and _try(compiler, ip, "options", "") == 128:
        # No explicit spelling, but 128 is what this compiler always picks by default.
        return BuildOptions(note="no explicit 128-register option; this compiler's default is 128")
    return BuildOptions(note="unsupported")


# Choosing among equally good shapes: the default register file, then automatic, then 256.
_COST = {GrfMode.DEFAULT: 0, GrfMode.SMALL: 0, GrfMode.AUTO: 1, GrfMode.LARGE: 2}
_SYCL = {GrfMode.LARGE: "the grf_size<256> kernel property (sycl::ext::intel::experimental::grf_size<256>)",
         GrfMode.AUTO: "the grf_size_automatic kernel property"}


def large_mode_ignored(report: KernelReport) -> str | None:
    """Why a build asked for 256 registers got fewer (Xe-LP has no large register file), or None."""
    if report.grf is not None and report.grf < 256:
        return f"asked for 256 registers, got {report.grf}"
    return None


def _parse(value: object) -> GrfMode:
    try:
        return GrfMode(str(value))
    except ValueError:
        raise ValueError(f"register file must be one of {', '.join(m.value for m in GrfMode)}, not {value!r}") from None


LEVER = Lever(
    name="grf", how=How.BUILD_OPTION, default=GrfMode.DEFAULT,
    settings=lambda written: (GrfMode.DEFAULT, GrfMode.LARGE, GrfMode.AUTO),
    cost=lambda value, written: _COST[value], tie_break_last=True, describe=lambda value: GrfMode(value).describe(),
    spelling=lambda value, written: _SYCL.get(value),
    ignored_by=lambda value, report: large_mode_ignored(report) if value == GrfMode.LARGE else None,
    parse=_parse, dump=lambda value: GrfMode(value).value, build_options=grf_spelling,
    cli=CliOption("--grf", tuple(m.value for m in GrfMode), "Register file mode.", default="default"),
)
