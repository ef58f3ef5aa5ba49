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
    if MEMO is not None and "-I" not in options:  # a build that reads headers is not its source's alone
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


LABEL = re.compile(r"^\s*([A-Za-z_][\w.$]*):\s*(//.*)?$")
SIZE = re.compile(r"\b(hword|oword)\b[^/]*? x(\d+)")
VISA_STATS = "-dumpVISAJsonStats"
"""The vISA option that writes IGC's own statistics beside each dump (`<dump>.stats.json`)."""


def final_dump(compiler, source: Path, target: str, *, options: str = "", spirv: bool = False, kernel: str | None = None,
               stats: bool = False) -> tuple[str, list | None]:
    """A kernel's final ISA from IGC's own dump (IGC_ShaderDumpEnable) of a plain ocloc build:
    of its dumps (a retry writes a second), the one whose spill size is the zebin's; `kernel`:
    which kernel's, where the module has several; with `stats`, also vISA's JSON statistics of
    that same compile (IGC 2.x)."""
    import json
    import os

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "IGC_ShaderDumpEnable": "1", "IGC_DumpToCustomDir": tmp}
        if stats:
            env["IGC_VISAOptions"] = VISA_STATS
        subprocess.run([compiler.path, "compile", "-file", str(source), "-device", target, "-out_dir", tmp,
                        "-output", "k", *(["-spirv_input"] if spirv else []), *(["-options", options] if options else [])],
                       check=True, capture_output=True, env=env, cwd=tmp, timeout=600)
        paths = sorted(Path(tmp).rglob("*_entry_*.asm"))
        dumps = [p.read_text(errors="replace") for p in paths]
        found = [json.loads(p.with_suffix(".stats.json").read_text()) if stats else None for p in paths]
    if kernel is not None:
        mine = [i for i, d in enumerate(dumps) if re.search(rf'^(//)?\.kernel "?{re.escape(kernel)}"?\s*$', d, re.M)]
        dumps, found = [dumps[i] for i in mine], [found[i] for i in mine]
    spill = driver_figures(ocloc(compiler, source, target, options=options, spirv=spirv).binary, True)
    want = spill[kernel]["spill"] if kernel is not None else next(iter(spill.values()))["spill"]
    sizes = [int(m.group(1)) if (m := re.search(r"^//\.spill size (\d+)", d, re.M)) else 0 for d in dumps]
    # IGC 1.0 rounds the spill space its zebin asks for up to a power of two.
    matching = [i for i, s in enumerate(sizes) if s == want or (s and 1 << (s - 1).bit_length() == want)]
    last = (matching or list(range(len(dumps))))[-1]
    return dumps[last], found[last]


def isa_traffic(asm: str) -> dict:
    """Spill and fill messages of an ISA dump by their comments, and the bytes of those inside a
    loop (a branch back to a label above it), sized from the message descriptors."""
    rows = asm.splitlines()
    labels: dict[str, int] = {}
    loops = []
    for i, row in enumerate(rows):
        m = LABEL.match(row)
        if m:
            labels[m.group(1)] = i
            continue
        code = row.partition("//")[0]
        if re.search(r"\b(while|goto|jmpi)\b", code):
            loops += [(labels[t], i) for t in re.findall(r"\b([A-Za-z_][\w.$]*)\b", code) if t in labels]
    spills = fills = in_loops = 0
    for i, row in enumerate(rows):
        comment = row.partition("//")[2]
        kind = ("spill" if "scratch space spill" in comment or "spill to offset" in comment else
                "fill" if "scratch space fill" in comment or "fill from offset" in comment else None)
        if kind is None:
            continue
        spills += kind == "spill"
        fills += kind == "fill"
        size = SIZE.search(comment)
        if size and any(a <= i <= b for a, b in loops):
            in_loops += {"hword": 32, "oword": 16}[size.group(1)] * int(size.group(2))
    return {"spills": spills, "fills": fills, "loop_bytes": in_loops}


def check_triton_cost(report: dict, compiler, kernel: str) -> None:
    """A measured Triton report's cost (zeinspect's JSON) is what IGC's dump of a plain build of
    its own SPIR-V, with its own options, on its target says: the spill and fill messages, the
    bytes inside loops, whether there are any."""
    spirv = Path(report["extra"]["triton"]["artifacts"]["spirv"])
    asm, _ = final_dump(compiler, spirv, report["target"], options=report["options"] or "", spirv=True, kernel=kernel)
    truth = isa_traffic(asm)
    cost = report["cost"]
    assert (cost["messages"]["spill"], cost["messages"]["fill"]) == (truth["spills"], truth["fills"]), report["kernel"]
    assert sum(b for d, b in cost["bytes_by_depth"].items() if d != "0") == truth["loop_bytes"], report["kernel"]
    assert cost["in_loops"] == (truth["loop_bytes"] > 0), report["kernel"]


def entry_points(spirv: bytes) -> list[str]:
    """A SPIR-V module's kernels, as spirv-dis (SPIRV-Tools) prints its OpEntryPoint Kernel lines."""
    with tempfile.NamedTemporaryFile(suffix=".spv") as fh:
        fh.write(spirv)
        fh.flush()
        text = subprocess.run(["spirv-dis", fh.name], capture_output=True, text=True, check=True).stdout
    return re.findall(r'OpEntryPoint Kernel %\S+ "([^"]+)"', text)


def zstd_frames(section: bytes) -> list[bytes]:
    """The zstd frames laid end to end in a bundle section (with zero padding between them),
    each decompressed: the zstd library's own frame ends, nothing of zeinspect's."""
    import zstandard

    out, rest = [], section.lstrip(b"\0")
    while rest:
        obj = zstandard.ZstdDecompressor().decompressobj()
        out.append(obj.decompress(rest))
        assert obj.eof, "a truncated frame"
        rest = obj.unused_data.lstrip(b"\0")
    return out


def compressed_spirv_kernels(library: Path, section: str = "__CLANG_OFFLOAD_BUNDLE__sycl-spir64") -> set[str]:
    """Every kernel the compressed SPIR-V images of a SYCL library's bundle section declare, read
    with binutils, the zstd library and SPIRV-Tools: the second reading a ledger is checked with."""
    return {name for image in zstd_frames(section_bytes(Path(library).read_bytes(), section))
            for name in entry_points(image)}


def triton_later_stages(ttgir: Path, target) -> bytes:
    """The SPIR-V Triton-XPU's own later stages make of a TTGIR file (`triton.compile` resumes
    from it), with Intel's backend as it is but for the SYCL helper its constructor builds (the
    one thing that needs a device; FACTS 7): not zeinspect's build code."""
    import dataclasses

    import triton
    from triton.backends import backends
    from triton.backends.compiler import BaseBackend

    base = backends["intel"]

    class Offline(base.compiler):  # type: ignore[misc, name-defined]
        def __init__(self, target):
            BaseBackend.__init__(self, target)
            self.device_arch = ""
            self.properties = self.parse_target(target.arch)
            self.binary_ext = "spv"

    import os
    from unittest import mock

    with tempfile.TemporaryDirectory() as tmp, mock.patch.dict(os.environ, {"TRITON_CACHE_DIR": tmp}), \
            mock.patch.dict(backends, {"intel": dataclasses.replace(base, compiler=Offline)}):
        return triton.compile(str(ttgir), target=target).asm["spv"]


def check_triton_build(report: dict, compiler, target) -> None:
    """A Triton report's figures are a plain build's: its TTGIR (the artifact zeinspect kept)
    through Triton-XPU's later stages gives the very SPIR-V it compiled, and ocloc on that
    SPIR-V with the report's own options gives its figures (.ze_info, read by binutils)."""
    artifacts = report["extra"]["triton"]["artifacts"]
    spirv = Path(artifacts["spirv"]).read_bytes()
    assert triton_later_stages(Path(artifacts["ttgir"]), target) == spirv, report["kernel"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.spv"
        path.write_bytes(spirv)
        built = ocloc(compiler, path, report["target"], options=report["options"] or "", spirv=True)
    assert built.binary is not None, built.log[-1000:]
    name = report["extra"]["triton"]["metadata"]["name"]
    figures = driver_figures(built.binary, xe_hp_or_later=True)[name]
    assert (report["simd"], report["grf"], report["spill_bytes"], report["private_bytes"]) == \
        (figures["simd"], figures["grf"], figures["spill"], figures["private"]), (report["kernel"], report["target"])


def check_triton_report(report: dict, compiler) -> None:
    """check_triton_build on the Triton target the report itself names: its target and the
    threads per warp Triton's metadata gives (a run's specializations differ in them)."""
    from zeinspect.triton.build.backend import capabilities
    from zeinspect.triton.offline.compiler import gpu_target

    target = report["target"]
    check_triton_build(report, compiler, gpu_target(capabilities(compiler, target), target,
                                                    report["extra"]["triton"]["metadata"]["threads_per_warp"]))
