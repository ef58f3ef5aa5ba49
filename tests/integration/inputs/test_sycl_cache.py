"""The SYCL runtime's persistent device-code cache as an input (inputs/sycl_cache.py).

A real application writes it here: Open3D's XPU build (from the package index) runs a tensor
operation on the OpenCL CPU device (intel-opencl-rt, no GPU) with SYCL_CACHE_PERSISTENT=1, and
the runtime keeps every program it JIT-compiled.  Those entries are audited for an Intel GPU:
each kernel's figures equal a plain ocloc build of the entry's SPIR-V with the entry's build
options, read by the oracle (tests/oracle.py); a damaged entry is one line naming it.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import oracle
import pytest
import wheels

pytestmark = pytest.mark.slow

OPEN3D = ("open3d-xpu", "0.20.0")
LIBRARIES = [("mkl", "2026.2.1"), ("onemkl-sycl-blas", "2026.2.0"), ("onemkl-sycl-lapack", "2026.2.0")]
"""What Open3D's libraries load (oneMKL's SYCL BLAS and LAPACK, MKL's core): their wheels'
shared libraries, on LD_LIBRARY_PATH.  Its Python package imports dash at import."""
TARGET = "bmg-g21"
SCRIPT = """
import open3d.core as o3c
a = o3c.Tensor.ones((16,), o3c.float32, device=o3c.Device("SYCL:0"))
print(float((a + a).sum().item()))
"""


@pytest.fixture(scope="module")
def sycl_cache(tmp_path_factory):
    from zeinspect.toolchain.runtimes import runtime_env

    tmp = tmp_path_factory.mktemp("sycl-cache")
    site, lib, cache = tmp / "site", tmp / "lib", tmp / "libsycl_cache"
    lib.mkdir()
    with zipfile.ZipFile(wheels.wheel(*OPEN3D)) as z:
        z.extractall(site, [n for n in z.namelist() if n.startswith("open3d/")])
    for package, version in LIBRARIES:
        with zipfile.ZipFile(wheels.wheel(package, version)) as z:
            for name in z.namelist():
                if "/data/lib/" in name and ".so" in name and not name.endswith("/"):
                    (lib / Path(name).name).write_bytes(z.read(name))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target",
                    str(site), "dash", "nbformat", "configargparse"], check=True, timeout=600)
    env = dict(runtime_env(), SYCL_CACHE_PERSISTENT="1", SYCL_CACHE_DIR=str(cache), PYTHONPATH=str(site),
               LD_LIBRARY_PATH=f"{Path(sys.prefix) / 'lib'}:{lib}")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0 and proc.stdout.split()[-1] == "32.0", proc.stdout[-2000:] + proc.stderr[-2000:]
    entries = sorted(cache.rglob("*.src"))
    assert entries, "the runtime kept no program"
    return cache, entries


def _items(data: bytes) -> list[bytes]:
    """The entry's items as the test reads them: a 64-bit length, then the bytes."""
    out, at = [], 0
    while at < len(data):
        (size,) = struct.unpack_from("<Q", data, at)
        out.append(data[at + 8:at + 8 + size])
        at += 8 + size
    return out


def test_every_entry_is_audited_with_the_figures_ocloc_gives_its_spirv(cli, sycl_cache, sid_compiler, tmp_path):
    cache, entries = sycl_cache
    smallest = min(entries, key=lambda p: p.stat().st_size)
    res = cli("inspect", smallest, "-t", TARGET, "--compiler", sid_compiler.id, "--json")
    assert res.code in (0, 1), res
    reports = json.loads(res.out)["reports"]
    assert reports and all(r["status"] == "ok" for r in reports)
    device, options, _, image = _items(smallest.read_bytes())
    assert all("JIT-compiled by the SYCL runtime for" in r["origin"]["variant"] for r in reports)
    assert all(device.decode().split("/")[1] in r["origin"]["variant"] for r in reports)
    spv = tmp_path / "entry.spv"
    spv.write_bytes(image)
    built = oracle.ocloc(sid_compiler, spv, TARGET, options.decode(), spirv=True)
    assert built.binary is not None, built.log
    expected = {name: figures for name, figures in oracle.driver_figures(built.binary, xe_hp_or_later=True).items()
                if not name.startswith("Intel_Symbol_Table")}  # IGC's own, not a user kernel (noted, not reported)
    got = {r["kernel"]: r for r in reports}
    assert set(got) == set(expected)
    for name, figures in expected.items():
        assert (got[name]["spill_bytes"], got[name]["private_bytes"]) == (figures["spill"], figures["private"]), name
    # The reproduce line is zeinspect's: ocloc cannot read an entry by its name.
    assert all(r["command"].startswith(f"zeinspect kernel {smallest} ") for r in reports)


def test_the_cache_folder_is_an_input_whole(cli, sycl_cache, sid_compiler):
    cache, entries = sycl_cache
    res = cli("inspect", cache, "-t", TARGET, "--compiler", sid_compiler.id, "--json", "-q")
    assert res.code in (0, 1), res
    inputs = {r["input"] for r in json.loads(res.out)["reports"]}
    assert inputs == {str(e) for e in entries}


def test_a_damaged_entry_is_one_line_naming_it(cli, sycl_cache, tmp_path):
    _, entries = sycl_cache
    cut = tmp_path / "0.src"
    cut.write_bytes(entries[0].read_bytes()[:-100])
    res = cli("inspect", cut, "-t", TARGET)
    assert res.code == 2 and "Traceback" not in res.err, res
    [line] = res.err.strip().splitlines()
    assert str(cut) in line
