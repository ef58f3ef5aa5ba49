"""The ratchet file: both dialects round-trip byte for byte; malformed lines are named."""

from __future__ import annotations

import pytest

from zeinspect.errors import InputError
from zeinspect.judge import ratchet

NATIVE = (
    "# kernels allowed to use scratch memory\r\n"
    "\r\n"
    "fma_tile        xe-lp   0   16256   # Xe-LP has no large register file\r\n"
    "_ZTSZ4mainE3fma\t*\t128 4096\r\n"
    "sg32_*  12.70.4  0  2816# no space before the comment\r\n"
    "  # an indented comment\r\n"
    "last  bmg-g2?  4096  0"  # no final newline
)
TAB = (
    "# group\tprivate\tspill\tkernel-id\n"
    "float_adm_sycl\t0\t128\t_ZTSZN12vmaf_sycl_fadm12launch_termsE\n"
    "\n"
    "ssimulacra2_sycl\t2304\t65536\ttypeinfo name for slot_kernel\n"
)


@pytest.mark.parametrize("text", [NATIVE, TAB, "", "# only a comment\n"])
def test_round_trip_is_byte_for_byte(text):
    parsed = ratchet.parse(text, "r.txt")
    assert parsed.render() == text


def test_dialects_and_fields():
    native = ratchet.parse(NATIVE, "r.txt")
    assert native.dialect == "native"
    assert [(e.lineno, e.kernel, e.targets, e.private, e.spill) for e in native.entries] == [
        (3, "fma_tile", "xe-lp", 0, 16256), (4, "_ZTSZ4mainE3fma", "*", 128, 4096),
        (5, "sg32_*", "12.70.4", 0, 2816), (7, "last", "bmg-g2?", 4096, 0)]
    assert native.entries[0].reason == "Xe-LP has no large register file"
    tab = ratchet.parse(TAB, "r.txt")
    assert tab.dialect == "tab"
    assert [(e.group, e.private, e.spill, e.kernel) for e in tab.entries] == [
        ("float_adm_sycl", 0, 128, "_ZTSZN12vmaf_sycl_fadm12launch_termsE"),
        ("ssimulacra2_sycl", 2304, 65536, "typeinfo name for slot_kernel")]


def test_rewriting_numbers_keeps_the_rest_of_the_line():
    native = ratchet.parse(NATIVE, "r.txt")
    ratchet.with_figures(native, native.entries[0], 0, 9000)
    assert native.lines[2] == "fma_tile        xe-lp   0   9000   # Xe-LP has no large register file\r\n"
    assert native.render().replace("9000", "16256", 1) == NATIVE
    ratchet.append(native, "new_kernel", "*", 1, 2, "why", "g")
    assert native.render().endswith("last  bmg-g2?  4096  0\r\nnew_kernel  *  1  2  # why\r\n")
    tab = ratchet.parse(TAB, "r.txt")
    ratchet.with_figures(tab, tab.entries[1], 2304, 60000)
    assert tab.render() == TAB.replace("65536", "60000")
    ratchet.append(tab, "k", "*", 5, 6, "ignored in the tab dialect", "grp")
    assert tab.render().endswith("grp\t5\t6\tk\n")


def test_an_entry_records_its_loop_traffic_and_keeps_its_form():
    text = "sg32_*  xe-lp  0  2752  loop=4352  # its accumulators spill in the loop\nfma_tile  *  0  16256\n"
    parsed = ratchet.parse(text, "r.txt")
    assert parsed.render() == text
    assert [(e.kernel, e.loop) for e in parsed.entries] == [("sg32_*", 4352), ("fma_tile", None)]
    ratchet.with_figures(parsed, parsed.entries[0], 0, 2000, 1000)  # rewritten in place
    ratchet.with_figures(parsed, parsed.entries[1], 0, 16000, 35000)  # added after the spill
    ratchet.with_figures(parsed, parsed.entries[1], 0, 15000)  # no figure: the recorded one stays
    assert parsed.render() == ("sg32_*  xe-lp  0  2000  loop=1000  # its accumulators spill in the loop\n"
                               "fma_tile  *  0  15000  loop=35000\n")
    assert [e.loop for e in ratchet.parse(parsed.render(), "r.txt").entries] == [1000, 35000]
    ratchet.append(parsed, "k", "*", 0, 64, "why", "g", loop=0)
    assert parsed.render().endswith("k  *  0  64  loop=0  # why\n") and parsed.entries[-1].loop == 0


@pytest.mark.parametrize("line, problem", [
    ("fma_tile xe-lp 0", "expected KERNEL TARGETS PRIVATE_BYTES SPILL_BYTES, found 3 field(s)"),
    ("fma_tile xe-lp 0 16 extra", "the fifth field must be loop=BYTES (scratch bytes per loop iteration), not 'extra'"),
    ("fma_tile xe-lp 0 16 loop=-1", "the fifth field must be loop=BYTES (scratch bytes per loop iteration), not 'loop=-1'"),
    ("fma_tile xe-lp 0 16 loop=8 x", "expected 4 fields (and an optional loop=BYTES) before an optional '# reason', "
                                     "found 6"),
    ("fma_tile xe-lp zero 16", "byte counts must be whole non-negative numbers, not 'zero'"),
    ("fma_tile xe-lp 0 -16", "byte counts must be whole non-negative numbers, not '-16'"),
    ("fma_tile xe-lp 0 1.5", "byte counts must be whole non-negative numbers, not '1.5'"),
    ("grp\tzero\t128\tkernel", "tab entry needs GROUP<TAB>PRIVATE<TAB>SPILL<TAB>KERNEL-ID with whole numbers of bytes"),
])
def test_malformed_lines_are_named(line, problem):
    with pytest.raises(InputError) as err:
        ratchet.parse(f"# header\nok_kernel * 0 0\n{line}\n", "scratch_ratchet.txt")
    assert err.value.one_line() == f"scratch_ratchet.txt: line 3: {problem}"


def test_mixed_dialects_are_refused():
    with pytest.raises(InputError) as err:
        ratchet.parse("k * 0 0\ngrp\t0\t0\tkernel\n", "r.txt")
    assert "line 2: a tab entry in a native ratchet file" in err.value.one_line()


def test_binary_junk_is_refused(tmp_path):
    path = tmp_path / "r.txt"
    path.write_bytes(b"k * 0 0\n\xff\xfe garbage\n")
    with pytest.raises(InputError) as err:
        ratchet.load(path)
    assert err.value.one_line() == f"{path}: line 2: not UTF-8 text"
    path.write_bytes(b"k * 0 0\nk2 * 0\x00 0\n")
    with pytest.raises(InputError) as err:
        ratchet.load(path)
    assert "line 2: contains a NUL byte" in err.value.one_line()
