"""The test oracle: what the compiler itself says, read without zeinspect's code.

The tests compile with ocloc directly, read `.ze_info` through binutils' `readelf -x`
(not pyelftools), parse it with PyYAML's pure-Python safe loader, pick figures out of
the build log with their own patterns, and apply NEO's derivation rules as written in
compute-runtime (zeinfo_decoder.cpp, gfx_core_helper_*.inl).  zeinspect must agree.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass
class Built:
    binary: bytes | None
    log: str
    returncode: int


MEMO: Path | None = None
"""A folder where each plain build is kept for the rest of the test run (tests/conftest.py sets
it, shared by xdist's workers): several tests compare zeinspect with the same build (the PTSS
kernel on Debian's compiler is a minute of the suite), and the oracle's own build is the same
whichever test asks.  Never zeinspect's cache: the oracle stays its own compile."""


def ocloc(compiler, source: Path, device: str, options: str = "", spirv: bool = False,
          env: dict | None = None) -> Built:
    """A plain ocloc build; `env`: variables added to a clean environment (no IGC_ variable of
    the test run's own reaches the compiler unless given)."""
    import hashlib
    import json
    import os
    import pickle

    key = None
    if MEMO is not None:
        what = [compiler.path, os.stat(compiler.path).st_mtime_ns, hashlib.sha256(Path(source).read_bytes()).hexdigest(),
                device, options, spirv, sorted((env or {}).items()), compiler.zebin_by_default]
        key = MEMO / (hashlib.sha256(json.dumps(what).encode()).hexdigest() + ".pickle")
        if key.is_file():
            return pickle.loads(key.read_bytes())
    built = _ocloc(compiler, source, device, options, spirv, env)
    if key is not None:
        tmp = key.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(pickle.dumps(built))
        tmp.replace(key)  # whole or absent, whichever worker writes it
    return built


def _ocloc(compiler, source: Path, device: str, options: str, spirv: bool, env: dict | None) -> Built:
    import os

    clean = {k: v for k, v in os.environ.items() if not k.startswith("IGC_")}
    with tempfile.TemporaryDirectory() as tmp:
        argv = [compiler.path, "compile", "-file", str(source), "-device", device, "-out_dir", tmp, "-output", "k"]
        if spirv:
            argv.append("-spirv_input")
        if options:
            argv += ["-options", options]
        if not compiler.zebin_by_default:
            argv += ["-internal_options", "-cl-intel-allow-zebin"]
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp, timeout=600, env={**clean, **(env or {})})
        outputs = [p for p in Path(tmp).iterdir() if p.suffix not in (".spv", ".gen", ".dbg")]
        binary = outputs[0].read_bytes() if outputs and proc.returncode == 0 else None
    return Built(binary, proc.stdout + proc.stderr, proc.returncode)


def section_bytes(binary: bytes, name: str) -> bytes:
    with tempfile.NamedTemporaryFile(suffix=".bin") as fh:
        fh.write(binary)
        fh.flush()
        dump = subprocess.run(["readelf", "-x", name, fh.name], capture_output=True, text=True).stdout
    out = bytearray()
    for line in dump.splitlines():
        m = re.match(r"\s+0x[0-9a-f]+ ((?:[0-9a-f]{2,8} ){1,4})", line + " ")
        if m:
            out += bytes.fromhex(m.group(1).replace(" ", ""))
    return bytes(out)


def zeinfo(binary: bytes) -> dict:
    return yaml.load(section_bytes(binary, ".ze_info"), Loader=yaml.SafeLoader)


def driver_figures(binary: bytes, xe_hp_or_later: bool) -> dict[str, dict]:
    """name -> {simd, grf, slm, spill, private, used_private, slots}: `private` is what NEO reports
    (privateMemSize), `used_private` what the zebin says the kernel uses."""
    doc = zeinfo(binary)
    major, minor = (int(x) for x in str(doc["version"]).split("."))
    out = {}
    for k in doc["kernels"]:
        env = k["execution_env"]
        simd = env["simd_size"]
        slots = {}
        global_private = 0
        for buf in k.get("per_thread_memory_buffers", []):
            if buf["type"] == "scratch":
                slots[buf.get("slot", 0)] = buf["size"]
            elif buf["type"] == "global":
                global_private = buf["size"] * (simd if buf.get("is_simt_thread") else 1)
        if minor >= 39:
            spill, private_scratch = env.get("spill_size", 0), env.get("private_size", 0)
        else:
            spill, private_scratch = slots.get(0, 0), slots.get(1, 0)
        if xe_hp_or_later:
            private = private_scratch if private_scratch > 0 else global_private
            used = private
        else:
            private = global_private
            used = global_private or private_scratch  # what the zebin says, whatever NEO reports
        out[k["name"]] = {"simd": simd, "grf": env["grf_count"], "slm": env.get("slm_size", 0),
                          "spill": spill, "private": private, "used_private": used, "slots": slots}
    return out


SPILL_LINE = re.compile(r"warning: (?:in kernel '([^']+)':|kernel (\S+)) +compiled SIMD(\d+) allocated (\d+) regs "
                        r"and spilled around (\d+)")
PTSS_LINE = re.compile(r"error: (?:in kernel '([^']+)': total scratch space exceeds HW supported limit|"
                       r"total scratch space exceeds HW supported limit for kernel (\S+)): (\d+) bytes "
                       r"\(max permitted PTSS (\d+) bytes\)")


def log_spills(log: str) -> dict[str, int]:
    return {(m.group(1) or m.group(2)): int(m.group(5)) for m in SPILL_LINE.finditer(log)}


def log_overflows(log: str) -> dict[str, tuple[int, int]]:
    return {(m.group(1) or m.group(2)): (int(m.group(3)), int(m.group(4))) for m in PTSS_LINE.finditer(log)}
