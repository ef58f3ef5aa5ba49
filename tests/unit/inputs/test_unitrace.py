"""unitrace's outputs as unitrace 2.3.0 writes them: its own recorded outputs read whole, and the
forms its source shows that those lack, built here from its format code (intel/pti-gpu
fcd0ca813a6c; ZE = tools/unitrace/src/levelzero/ze_collector.h, CL = .../opencl/cl_collector.h).

The expected figures come from each file by a reading of its own (a regex per line), not from
zeinspect's reader."""

from __future__ import annotations

import re

import pytest
from conftest import realworld

from zeinspect.errors import InputError
from zeinspect.inputs.profile import read_profile
from zeinspect.inputs.unitrace import command_kind, split_name

GOLD = realworld() / "unitrace-gold"  # unitrace's own recorded outputs (tests/conftest.py finds them)
SUMMARIES = sorted(p.name for p in GOLD.glob("*-d.txt")) if GOLD.is_dir() else []
TIMELINES = sorted(p.name for p in GOLD.glob("*-t.txt")) if GOLD.is_dir() else []
HAND_EDITED = "ze_graph_api-d.txt"  # unitrace's own test data with `*` for every time (never written by it)

_ROW = re.compile(r"^\s*(.*),\s*(\d+),\s*(\d+),\s*([\d.]+),\s*(\d+),\s*(\d+),\s*(\d+)\s*$")
_LINE = re.compile(r"^Thread \d+ Device \S+ : (.*) \[ns\] \d+ \(append\) \d+ \(submit\) (\d+) \(start\) (\d+) \(end\)$")


def _bare(name: str) -> str:
    name = name.strip()
    name = name[1:-1] if name.startswith('"') and name.endswith('"') else name
    return re.sub(r"(\[SIMD\w* \{[^}]*\} \{[^}]*\}\]|\[\d+\])$", "", name)


def _expected_summary(text: str) -> tuple[dict, int]:
    """name -> (calls, ns) of the device timing tables, and the declared device total."""
    rows: dict[str, list[int]] = {}
    lines = text.splitlines()
    total = sum(int(m.group(1)) for line in lines if (m := re.search(r"Total Device Time for .* \(ns\):\s+(\d+)", line)))
    for i, line in enumerate(lines):
        if "Kernel," in line and "Time (ns)" in line:
            for row in lines[i + 1:]:
                m = _ROW.match(row)
                if not m:
                    break
                got = rows.setdefault(_bare(m.group(1)), [0, 0])
                got[0] += int(m.group(2))
                got[1] += int(m.group(3))
    return {k: tuple(v) for k, v in rows.items()}, total


@pytest.mark.skipif(not SUMMARIES, reason="no ../shared/realworld/unitrace-gold")
@pytest.mark.parametrize("name", [n for n in SUMMARIES if n != HAND_EDITED])
def test_every_row_of_unitraces_own_device_summaries_is_read(name):
    path = GOLD / name
    expected, total = _expected_summary(path.read_text())
    assert expected, "the test found no row"
    got = read_profile(str(path))
    assert got.source == "unitrace -d"
    seen = {**{k: (t.launches, round(t.seconds * 1e9)) for k, t in got.kernels.items()},
            **{k: (t.launches, round(t.seconds * 1e9)) for k, t in got.other.items()}}
    assert seen == expected
    assert set(got.other) == {k for k in expected if command_kind(k)}
    # The summary's own total, and the four parts of the device time adding up to it.
    assert round(got.device_seconds * 1e9) == total == sum(ns for _, ns in expected.values())


@pytest.mark.skipif(not SUMMARIES, reason="no ../shared/realworld/unitrace-gold")
def test_a_table_with_star_times_is_refused_in_one_line():
    with pytest.raises(InputError) as err:
        read_profile(str(GOLD / HAND_EDITED))
    assert "unitrace 2.3.0" in str(err.value) and "\n" not in str(err.value) and "'*'" in str(err.value)


@pytest.mark.skipif(not TIMELINES, reason="no ../shared/realworld/unitrace-gold")
@pytest.mark.parametrize("name", TIMELINES)
def test_every_line_of_unitraces_own_timelines_is_read(name):
    path = GOLD / name
    expected: dict[str, list[int]] = {}
    for line in path.read_text().splitlines():
        m = _LINE.match(line.strip())
        if m:
            got = expected.setdefault(_bare(m.group(1)), [0, 0])
            got[0] += 1
            got[1] += int(m.group(3)) - int(m.group(2))
    assert expected
    got = read_profile(str(path))
    assert got.source == "unitrace -t"
    seen = {**{k: [t.launches, round(t.seconds * 1e9)] for k, t in got.kernels.items()},
            **{k: [t.launches, round(t.seconds * 1e9)] for k, t in got.other.items()}}
    assert seen == expected


@pytest.mark.skipif(not SUMMARIES, reason="no ../shared/realworld/unitrace-gold")
def test_the_kernel_properties_table_is_the_drivers_figures():
    got = read_profile(str(GOLD / "ze_gemm-d.txt"))
    gemm = got.properties["GEMM"]
    assert (gemm.compiled, gemm.simd, gemm.arguments, gemm.private_bytes, gemm.spill_bytes, gemm.registers) == \
        ("JIT", 32, 4, 0, 0, 128)
    assert read_profile(str(GOLD / "device_and_rank_to_sample-d.txt")).properties["empty"].registers == 16


# -- what the gold files lack, from the format code ------------------------------------------

def _l0_table(rows: list[tuple[str, int, int]], tiles: bool = False) -> str:
    """ZE:1506-1532: every field right-aligned by hand, `", "` between them; the name column as
    wide as the longest name; Calls 12, Time 20, Time (%) 12, the rest 20."""
    names = [(f"Tile #{i % 2}: " if tiles else "") + f'"{n}"' for i, (n, _, _) in enumerate(rows)]
    width = max(len(n) for n in names + ["Kernel"])
    total = sum(t for _, _, t in rows)
    out = [" " * (width - 6) + "Kernel, " + " " * 7 + "Calls, " + " " * 11 + "Time (ns), " + " " * 4 + "Time (%), "
           + " " * 8 + "Average (ns), " + " " * 12 + "Min (ns), " + " " * 12 + "Max (ns)"]
    for name, (_, calls, t) in zip(names, rows):
        pct = f"{100 * t / total:f}"
        fields = [str(calls).rjust(12), str(t).rjust(20), pct.rjust(12), str(t // calls).rjust(20),
                  str(t // calls).rjust(20), str(t // calls).rjust(20)]
        out.append(name.rjust(width) + ", " + ", ".join(f.strip().rjust(len(f)) for f in fields))
    return "\n".join(out) + "\n"


def _summary(backends: dict[str, list[tuple[str, int, int]]], **kw) -> str:
    """tracer.h:453-501: the header, the totals (titles right-aligned to 43), each backend's table."""
    total = sum(t for rows in backends.values() for _, _, t in rows)
    out = "\n=== Device Timing Summary ===\n\n" + " " * 16 + "Total Execution Time (ns): " + str(total * 2).rjust(20) + "\n"
    for backend, rows in backends.items():
        title = f"Total Device Time for {backend} backend (ns): "
        out += " " * (43 - len(title)) + title + str(sum(t for _, _, t in rows)).rjust(20) + "\n"
    for backend, rows in backends.items():
        out += f"\n== {backend} Backend ==\n\n" + _l0_table(rows, **kw)
    return out + "\n\n"


SYCL_NAME = "RunAndCheck(sycl::_V1::queue, std::vector<float, std::allocator<float> > const&, unsigned int)::__GEMM"


def test_a_quoted_name_with_commas_is_one_row_and_the_rows_after_it_are_read(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text(_summary({"L0": [(SYCL_NAME, 3, 600), ("zeCommandListAppendBarrier", 2, 300), ("hot", 5, 900)]}))
    got = read_profile(str(path))
    assert {k: t.launches for k, t in got.kernels.items()} == {SYCL_NAME: 3, "hot": 5}
    assert set(got.other) == {"zeCommandListAppendBarrier"}


def test_tiles_and_shape_tails_join_one_kernel_and_keep_the_shapes(tmp_path):
    """--separate-tiles (ZE:1492-1497): `Tile #N: ` outside the quotes; -v (ZE:1169-1186): the tail."""
    rows = [("GEMM[SIMD32 {1; 1024; 1} {1024; 1; 1}]", 2, 400), ("GEMM[SIMD32 {1; 512; 1} {512; 1; 1}]", 2, 200),
            ("k[SIMD_ANY {4; 1; 1} {64; 1; 1}]", 1, 50)]
    path = tmp_path / "d.txt"
    path.write_text(_summary({"L0": rows}, tiles=True))
    got = read_profile(str(path))
    assert {k: (t.launches, round(t.seconds * 1e9)) for k, t in got.kernels.items()} == {"GEMM": (4, 600),
                                                                                          "k": (1, 50)}
    assert got.shapes["GEMM"] == {"[SIMD32 {1; 1024; 1} {1024; 1; 1}]", "[SIMD32 {1; 512; 1} {512; 1; 1}]"}
    assert split_name('Tile #1: "GEMM[SIMD16 {2; 1; 1} {256; 1; 1}]"') == ("GEMM", "[SIMD16 {2; 1; 1} {256; 1; 1}]")
    assert split_name('"zeCommandListAppendMemoryCopy(M2D)[4194304]"') == ("zeCommandListAppendMemoryCopy(M2D)",
                                                                           "[4194304]")


def test_two_backends_and_several_processes_are_all_read(tmp_path):
    """Each process prints its own summaries (tracer.h:637-680); L0 and CL GPU tables in one."""
    one = _summary({"L0": [("a", 1, 100)], "CL GPU": [("b", 2, 300)]})
    two = _summary({"L0": [("a", 3, 500)]})
    path = tmp_path / "d.txt"
    path.write_text(one + "[app] step 1 done, loss=0.3\n" + two)
    got = read_profile(str(path))
    assert {k: (t.launches, round(t.seconds * 1e9)) for k, t in got.kernels.items()} == {"a": (4, 600), "b": (2, 300)}
    assert round(got.device_seconds * 1e9) == 900


def test_a_summary_after_the_applications_own_bracketed_lines_is_read(tmp_path):
    """Without -o unitrace writes to stderr (tools/utils/logger.h:50-70), where the application's
    lines come too: a line starting with `[` is not a table's end or start."""
    path = tmp_path / "captured.txt"
    path.write_text("[INFO] loading model\n[rank 0] 1024 x 1024\n" + _summary({"L0": [("gemm", 4, 800)]})
                    + "[INFO] done\n")
    assert {k: t.launches for k, t in read_profile(str(path)).kernels.items()} == {"gemm": 4}


def test_a_table_with_no_readable_row_is_one_line_not_the_properties_read_as_times(tmp_path):
    path = tmp_path / "d.txt"
    text = _summary({"L0": [("gemm", 4, 800)]})
    head, _, rest = text.partition('"gemm"')
    path.write_text(head.rsplit("\n", 1)[0] + "\n\n\n=== Kernel Properties ===\n\n"
                    + "Kernel, Compiled, SIMD, Number of Arguments, SLM Per Work Group, Private Memory Per Thread, "
                      "Spill Memory Per Thread, Register File Size Per Thread\n"
                    + '"gemm",      JIT,   32,                   4,                  0,                         0,'
                      '                       0,                           128\n')
    with pytest.raises(InputError, match="no row"):
        read_profile(str(path))


def test_the_submission_summary_times_are_its_execute_column(tmp_path):
    """-s (ZE:1588-1660): Append, Submit and Execute; the kernel's own time is Execute."""
    path = tmp_path / "s.txt"
    path.write_text("\n=== Kernel Submission Summary ===\n\n" + " " * 16 + "Total Execution Time (ns):" + " " * 12
                    + "9000\n    Total Device Time for L0 backend (ns):" + " " * 16 + "7000\n\n== L0 Backend ==\n\n"
                    "Kernel,        Calls,          Append (ns),  Append (%),          Submit (ns),  Submit (%),"
                    "         Execute (ns),  Execute (%)\n"
                    '"GEMM",            4,                 1200,   12.500000,                 3400,  100.000000,'
                    "                 7000,   100.000000\n\n")
    got = read_profile(str(path))
    assert got.source == "unitrace -s" and round(got.kernels["GEMM"].seconds * 1e9) == 7000


def test_an_opencl_table_with_a_demangled_name_with_commas(tmp_path):
    """CL:453-498: `","` between fields, names unquoted (demangled with --demangle)."""
    name = "foo(int, float)"
    path = tmp_path / "d.txt"
    path.write_text("\n=== Device Timing Summary ===\n\n" + " " * 16 + "Total Execution Time (ns):" + "500".rjust(21)
                    + "\nTotal Device Time for CL GPU backend (ns):" + "300".rjust(21) + "\n\n== CL GPU Backend ==\n\n"
                    + "Kernel".rjust(len(name)) + ",       Calls,           Time (ns),    Time (%),        Average (ns),"
                    "            Min (ns),            Max (ns)\n"
                    + name + ",           2,                 200,       66.66,                 100,                 100,"
                    "                 100\n" + "clEnqueueReadBuffer".rjust(len(name)) + ",           1,                 100,"
                    "       33.33,                 100,                 100,                 100\n\n")
    got = read_profile(str(path))
    assert {k: t.launches for k, t in got.kernels.items()} == {name: 2}
    assert set(got.other) == {"clEnqueueReadBuffer"}


@pytest.mark.parametrize("name, kind", [("zeCommandListAppendMemoryCopy(M2D)", "copy"),
                                        ("zeCommandListAppendImageCopyFromMemory(H2S)", "copy"),
                                        ("zeCommandListAppendMemoryFill(D)", "fill"),
                                        ("zeCommandListAppendBarrier", "barrier"),
                                        ("zeCommandListAppendMemoryRangesBarrier", "barrier"),
                                        ("zeCommandListAppendEventReset", "event reset"),
                                        ("clEnqueueWriteBufferRect", "copy"), ("clEnqueueFillImage", "fill"),
                                        ("GEMM", None), ("zeCommandListAppendLaunchKernel", None)])
def test_device_work_that_is_not_a_kernel_is_named_by_unitraces_list(name, kind):
    assert command_kind(name) == kind


def test_a_chrome_trace_in_unitraces_form_joins_every_kernel_with_a_report(tmp_path):
    """chromelogger.h: the framing (CHR:1513, 1599), the device process name (CHR:184-215) and
    device events (CHR:746-787): `gpu_op`, the name always with its tail, `Tile #N: ` with
    --separate-tiles, copies with their size, barriers bare; ts and dur in microseconds."""
    from zeinspect.judge.profile import join

    from ..fakes import report

    def x(name: str, dur: float) -> str:
        return (f'{{"ph": "X", "tid": 4294967295, "pid": 4294967295, "name": "{name}", "cat": "gpu_op", '
                f'"ts": 1717000000123456.123000, "dur": {dur:f}, "args": {{"id": "17"}}}}')

    events = ['{"ph": "M", "name": "process_name", "pid": 4242, "ts": 1717000000000000.000000, '
              '"args": {"name": "HOST<node1>"}}',
              '{"ph": "M", "name": "process_name", "pid": 4294967295, "ts": 1717000000000000.000000, "args": '
              '{"name": "DEVICE<node1>[Intel(R) Data Center GPU Max 1550] 0:29:0:0 #0"}}',
              x("GEMM[SIMD32 {1; 1024; 1} {1024; 1; 1}]", 20.5), x("Tile #1: GEMM[SIMD32 {1; 512; 1} {512; 1; 1}]", 10),
              x("triton_poi_fused_add_0[SIMD16 {64; 1; 1} {256; 1; 1}]", 4),
              x("zeCommandListAppendMemoryCopy(M2D)[4194304]", 239.2), x("zeCommandListAppendBarrier", 1),
              '{"ph": "X", "tid": 47342, "pid": 4242, "name": "zeCommandListAppendLaunchKernel", "cat": "cpu_op", '
              '"ts": 1717000000123400.000000, "dur": 3.500000, "id": 12}']
    path = tmp_path / "app.4242.json"
    path.write_text('{ "traceEvents":[\n' + ",\n".join(events) + "\n]\n}\n")
    profile = read_profile(str(path))
    assert profile.device == "Intel(R) Data Center GPU Max 1550" and not profile.foreign
    assert {k: t.launches for k, t in profile.kernels.items()} == {"GEMM": 2, "triton_poi_fused_add_0": 1}
    assert {k: t.kind for k, t in profile.other.items()} == {"zeCommandListAppendMemoryCopy(M2D)": "copy",
                                                             "zeCommandListAppendBarrier": "barrier"}
    joined = join(profile, [report("GEMM", "pvc", ip="12.60.7"), report("triton_poi_fused_add_0[1024]", "pvc",
                                                                         ip="12.60.7")])
    assert not joined.unmatched and not joined.unprofiled
    assert joined.driver_target(["bmg-g21", "pvc"])[0] == "pvc"


@pytest.mark.parametrize("number", ["²", "1" * 5000])
def test_a_number_unitrace_would_not_write_is_one_line(tmp_path, number):
    path = tmp_path / "d.txt"
    path.write_text(_summary({"L0": [("gemm", 4, 800)]}).replace("800", number, 1))
    with pytest.raises(InputError):
        read_profile(str(path))
    line = tmp_path / "t.txt"
    line.write_text(f'Thread 1 Device 2 : "k" [ns] 1 (append) 2 (submit) 3 (start) {number} (end)\n')
    with pytest.raises(InputError):
        read_profile(str(line))


def test_the_opencl_cpu_backend_is_not_gpu_time(tmp_path):
    """tracer.h: a `CL CPU` backend's table is the CPU device's: not counted as an Intel GPU's."""
    path = tmp_path / "d.txt"
    text = _summary({"L0": [("gpu_kernel", 1, 100)], "CL CPU": [("cpu_kernel", 1, 900)]})
    path.write_text(text)
    got = read_profile(str(path))
    assert set(got.kernels) == {"gpu_kernel"} and round(got.device_seconds * 1e9) == 100
