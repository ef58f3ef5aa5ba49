"""What zeinspect learns once about each compiler, kept with the toolchains.

Some facts are established by asking the compiler (which option spelling selects a register
file mode, which extensions a target offers, which targets share an OpenCL C front end).
Each answer is computed once per compiler identity and kept in a small JSON file in the
toolchain folder, so later runs (and the benchmark's cold audits, which start from an empty
*build* cache) do not pay for it again.  A file that cannot be read is simply relearnt; one
that cannot be written leaves the answer in memory for this run.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model import Compiler
from ..paths import toolchain_dir
from .run import run_tool

_lock = threading.RLock()
_memo: dict[tuple[str, str], object] = {}


def remembered(file_name: str, key: str, compute: Callable[[], Any]) -> Any:
    """The JSON-serialisable value kept under `key` in `file_name`, computed on first use.

    Computing holds a lock so that parallel compile threads ask the compiler only once."""
    path = toolchain_dir() / file_name
    memo_key = (str(path), key)
    with _lock:
        if memo_key in _memo:
            return _memo[memo_key]
        known = _read(path)
        if key in known:
            value = known[key]
        else:
            value = compute()
            known = _read(path)  # another process may have added keys meanwhile
            known[key] = value
            from ..fileio import atomic_write

            try:
                atomic_write(path, json.dumps(known, indent=1, sort_keys=True).encode())
            except OSError:
                pass
        _memo[memo_key] = value
        return value


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def has_multi(compiler: Compiler) -> bool:
    """Whether this ocloc has `ocloc multi` (several builds in one process): its help names
    the command.  Both generations here have it; one without is built one process a compile."""

    def ask() -> Any:
        with tempfile.TemporaryDirectory(prefix="zeinspect-query-") as tmp:
            run = run_tool([compiler.path, "multi"], cwd=tmp, timeout=60)
        return "Compiles multiple files" in run.output

    return bool(remembered("multi.json", compiler.id, ask))


def device_query(compiler: Compiler, query: str, device: str) -> str | None:
    """`ocloc query QUERY -device DEVICE`: the text it writes, or None if it cannot say."""
    with tempfile.TemporaryDirectory(prefix="zeinspect-query-") as tmp:
        run = run_tool([compiler.path, "query", query, "-device", device], cwd=tmp, timeout=60)
        written = Path(tmp) / query
        if run.returncode != 0 or not written.is_file():
            return None
        return written.read_text(errors="replace")


def device_extensions(compiler: Compiler, device: str) -> tuple[str, ...] | None:
    """The OpenCL extensions this compiler says `device` (a name or an IP version) offers;
    None when it cannot say (Debian 12's ocloc has no `query`)."""

    def ask() -> Any:
        text = device_query(compiler, "CL_DEVICE_EXTENSIONS", device)
        return None if text is None else sorted(set(text.split()))

    found = remembered("extensions.json", f"{compiler.id}|{device}", ask)
    return None if found is None else tuple(found)


SUB_GROUP_PROBE = ("__attribute__((intel_reqd_sub_group_size({n})))\n"
                   "__kernel void probe(__global int *p) {{ p[get_global_id(0)] = get_sub_group_size(); }}\n")
SUB_GROUP_CANDIDATES = (8, 16, 32)


def sub_group_sizes(compiler: Compiler, device: str) -> tuple[int, ...] | None:
    """The sub-group sizes a kernel can require on `device`, by the compiler's word: a probe
    kernel with `intel_reqd_sub_group_size(N)` builds for each size the target offers (IGC
    refuses the others: "Kernel compiled with required subgroup size 8, which is unsupported
    on this platform").  This is the list NEO reports as the device's sub_group_sizes
    (compute-runtime gfx_core_helper: getDeviceSubGroupSizes, {8, 16, 32} before Xe-HPC,
    {16, 32} from it), which the SYCL runtime checks `reqd_sub_group_size` against.  None
    when the compiler builds none of them (it does not know the target)."""
    from .ocloc import Flags, compile_argv

    def ask() -> Any:
        found = []
        for n in SUB_GROUP_CANDIDATES:
            with tempfile.TemporaryDirectory(prefix="zeinspect-subgroup-") as tmp:
                (Path(tmp) / "probe.cl").write_text(SUB_GROUP_PROBE.format(n=n))
                internal = "" if compiler.zebin_by_default else "-cl-intel-allow-zebin"
                argv = compile_argv(compiler, "probe.cl", device, out_dir=tmp, output="probe",
                                    flags=Flags(internal=internal))
                run = run_tool(argv, cwd=tmp, timeout=120)
                if run.returncode == 0 and any(p.suffix == ".bin" for p in Path(tmp).iterdir()):
                    found.append(n)
        return found or None

    found = remembered("sub_group_sizes.json", f"{compiler.id}|{device}", ask)
    return None if found is None else tuple(found)
