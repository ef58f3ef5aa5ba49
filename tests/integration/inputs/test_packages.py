"""Products as they ship: a real wheel from the package index (vllm-xpu-kernels 0.1.16.2, vLLM's
Intel GPU kernels, downloaded by pip at test time, never vendored), read member by member.

Its libraries hold ocloc fat binaries whose members name both the generic product (`64.bmg`)
and the IP (`64.20.1.0`): the driver loads one member per device, so each kernel is one row
per target, with the figures of the member the driver loads (checked against that member's
own `.ze_info`, read by binutils and PyYAML in tests/oracle.py).  Names are readable: no
mangled `_ZTS`, no SYCLcompat `KernelFunctor` wrapper.  A row's name is an input again.
"""

from __future__ import annotations

import collections
import json
import shutil
import subprocess
import zipfile

import oracle
import pytest
import wheels
from conftest import ROOT

MEMBER = "vllm_xpu_kernels/libgdn_attn_kernels_xe_2.so"
TARGET = "bmg-g21"


@pytest.fixture(scope="module")
def wheel():
    return wheels.wheel("vllm-xpu-kernels", "0.1.16.2")


def _doc(cli, *args):
    # The native members alone (--no-jit-paths): what the driver loads on the target; the
    # generic_ir members' JIT path is tests/integration/judge/test_paths.py's.
    res = cli(*args, "-t", TARGET, "--json", "-q", "--no-jit-paths")
    assert res.code in (0, 1), res
    return json.loads(res.out)


def test_a_wheels_member_is_audited_as_the_driver_loads_it(cli, wheel, tmp_path):
    doc = _doc(cli, "inspect", f"{wheel}!{MEMBER}")
    reports = doc["reports"]
    assert reports
    keys = [(r["origin"]["file"], r["origin"]["image"], r["kernel"], r["target"]) for r in reports]
    assert len(keys) == len(set(keys))  # one row per kernel and target: never one per matching member
    assert all(r["origin"]["package"] == "vllm-xpu-kernels 0.1.16.2" for r in reports)

    # The oracle: each image's member 64.20.1.0 (the IP of bmg-g21), read by binutils.
    with zipfile.ZipFile(wheel) as z:
        (tmp_path / "lib.so").write_bytes(z.read(MEMBER))
    subprocess.run([*cli_command(), "extract", tmp_path / "lib.so", "-o", tmp_path / "images"], check=True,
                   capture_output=True, cwd=ROOT)
    manifest = json.loads((tmp_path / "images" / "manifest.json").read_text())
    checked = shadowing = 0
    for image in manifest["images"]:
        if image.get("kind") != "fatbin":
            continue
        archive = tmp_path / "images" / image["file"]
        names = subprocess.run(["ar", "t", archive], capture_output=True, text=True, check=True).stdout.split()
        shadowing += "64.bmg" in names and "64.20.1.0" in names
        subprocess.run(["ar", "x", archive, "64.20.1.0"], check=True, cwd=tmp_path)
        truth = oracle.driver_figures((tmp_path / "64.20.1.0").read_bytes(), True)
        for r in reports:
            if r["origin"]["image"] == image["source"] and r["kernel"] in truth:
                t = truth[r["kernel"]]
                assert (r["grf"], r["simd"], r["spill_bytes"], r["private_bytes"]) == \
                    (t["grf"], t["simd"], t["spill"], t["private"]), r["kernel"]
                checked += 1
    assert checked == len(reports)
    note = next(n for n in doc["notes"] if "shadowed" in n)
    assert note.startswith(f"{shadowing} images shadowed")


def cli_command():
    import sys

    return [sys.executable, "-m", "zeinspect"]


def test_rows_read_as_their_authors_wrote_them(cli, wheel):
    res = cli("inspect", f"{wheel}!{MEMBER}", "-t", TARGET, "-v", "-q", "--no-jit-paths")
    rows = [line.split("  ")[0] for line in res.out.splitlines()[2:] if "[.tgtimg[" in line]
    assert rows and len(rows) == len(set(rows))
    assert not any("_ZTS" in row or "KernelFunctor" in row or "RoundedRangeKernel" in row for row in rows)
    families = collections.Counter(row.split(":", 1)[1].split("<")[0] for row in rows)
    assert any(name.startswith("Chunk") for name in families)  # gdn::ChunkFwdOKernel and its family


def test_a_rows_name_is_an_input(cli, wheel):
    doc = _doc(cli, "inspect", f"{wheel}!{MEMBER}")
    first = doc["reports"][0]
    label = f"{first['origin']['file']}[{first['origin']['image']}]"
    again = _doc(cli, "kernel", label, "-k", first["kernel"])
    [same] = again["reports"]
    assert (same["kernel"], same["spill_bytes"], same["grf"]) == (first["kernel"], first["spill_bytes"], first["grf"])


def test_a_package_folder_is_audited_whole(cli, wheel, tmp_path):
    """A folder holding both SPIR-V modules and host libraries: every one of them is audited."""
    folder = tmp_path / "site-packages" / "pkg"
    folder.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as z:
        (folder / "libgdn.so").write_bytes(z.read(MEMBER))
    shutil.copy(ROOT / "tests" / "fuzz" / "corpus" / "spirv" / "clean", folder / "kernel.spv")
    (folder / "__init__.py").write_text("")
    doc = _doc(cli, "inspect", folder)
    files = {r["origin"]["file"].rsplit("/", 1)[-1] for r in doc["reports"]}
    assert files == {"libgdn.so", "kernel.spv"}


def test_a_reproduce_line_runs_as_printed(cli, session_cache):
    """An image of a real SYCL library (dpctl's, installed with the test extras): the command a
    report prints rebuilds it, as printed, with the same figures."""
    import os
    import sys
    from pathlib import Path

    import dpctl

    library = next(Path(dpctl.__file__).parent.glob("libDPCTLSyclInterface.so*"))
    doc = json.loads(cli("inspect", library, "-t", "dg2-g10", "--json", "-q").out)
    report = doc["reports"][0]
    assert report["command"].startswith("zeinspect kernel ")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
           "ZEINSPECT_CACHE_DIR": str(session_cache)}
    again = subprocess.run(["bash", "-c", report["command"] + " --json -q"], capture_output=True, text=True, env=env,
                           cwd=ROOT, timeout=600)
    assert again.returncode in (0, 1), again.stderr
    same = next(r for r in json.loads(again.stdout)["reports"] if r["kernel"] == report["kernel"])
    assert (same["spill_bytes"], same["private_bytes"], same["grf"]) == \
        (report["spill_bytes"], report["private_bytes"], report["grf"])


def test_a_large_member_is_spooled_and_mapped_byte_for_byte(wheel, monkeypatch):
    """A member of MAP_BYTES or more (a library of hundreds of megabytes) is decompressed in
    chunks into an unnamed temporary file and mapped; with the threshold at one byte every host
    member takes that path, and must hold the same bytes as when read whole."""
    import hashlib
    import itertools

    from zeinspect.inputs import files, packages

    def first(n):
        return [(m.name, type(m.data).__name__, hashlib.sha256(m.data).hexdigest())
                for m in itertools.islice(packages.members(str(wheel)), n)]

    monkeypatch.setattr(files, "MAP_BYTES", 1 << 62)
    read = first(2)
    monkeypatch.setattr(files, "MAP_BYTES", 1)
    mapped = first(2)
    assert [t for _, t, _ in read] == ["bytes", "bytes"]
    assert [t for _, t, _ in mapped] == ["mmap", "mmap"]
    assert [(n, h) for n, _, h in mapped] == [(n, h) for n, _, h in read]
