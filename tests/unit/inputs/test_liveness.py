"""Live registers per instruction on hand-written ISA whose answer can be counted by hand."""

from __future__ import annotations

from zeinspect.inputs.isa import read_dump
from zeinspect.inputs.liveness import Instruction, block_header, grf_bytes_for, live_registers


def _counts(rows: list[str], grf: int = 32) -> list[int]:
    block = None
    successors: dict[str, list[str]] = {}
    listing = []
    for row in rows:
        header = block_header(row)
        if header:
            block, successors[header[0]] = header
        else:
            listing.append(Instruction(row, block))
    return live_registers(listing, successors, grf)


def test_straight_line_counts_what_is_live_and_written():
    # SIMD16 floats take 2 GRFs of 32 bytes.  r4-5 are read by the second instruction, so
    # they are live across the first.
    assert _counts([
        "mov (16|M0) r10.0<1>:f r2.0<1;1,0>:f",
        "mov (16|M0) r12.0<1>:f r4.0<1;1,0>:f",
        "add (16|M0) r14.0<1>:f r10.0<1;1,0>:f r12.0<1;1,0>:f",
        "mov (16|M0) r20.0<1>:f r14.0<1;1,0>:f",
    ]) == [6, 6, 6, 4]


def test_a_scalar_write_ends_only_its_own_dword():
    counts = _counts([
        "mov (16|M0) r10.0<1>:f r2.0<1;1,0>:f",
        "(W) mov (1|M0) r8.1<1>:ud 0x3:ud",
        "mad (16|M0) r12.0<1>:f r10.0<1;0>:f r8.1<0;0>:f r10.0<1>:f",
    ])
    # r8 is born on the second instruction: not live across the first.
    assert counts == [4, 3, 5]


def test_a_predicated_write_does_not_end_a_life():
    counts = _counts([
        "mov (16|M0) r10.0<1>:f r2.0<1;1,0>:f",
        "(f0.0) mov (16|M0) r10.0<1>:f r4.0<1;1,0>:f",
        "mov (16|M0) r20.0<1>:f r10.0<1;1,0>:f",
    ])
    assert counts == [6, 4, 4]


def test_a_value_read_in_a_loop_stays_live_around_the_back_edge():
    counts = _counts([
        "// B000: Preds:{},  Succs:{B001}",
        "mov (16|M0) r20.0<1>:f r2.0<1;1,0>:f",
        "// B001: Preds:{B000, B001},  Succs:{B001, B002}",
        "add (16|M0) r30.0<1>:f r20.0<1;1,0>:f r30.0<1;1,0>:f",
        "(W) add (1|M0) r50.0<1>:d r50.0<0;1,0>:d 1:w",
        "// B002: Preds:{B001},  Succs:{}",
        "mov (16|M0) r60.0<1>:f r30.0<1;1,0>:f",
    ])
    # At the end of the body: r20-21 (read again next iteration), r30-31, r50.
    assert counts[2] == 5
    assert counts == [7, 5, 5, 4]


def test_message_lengths_come_from_the_operand_or_igcs_comment():
    # Xe-HPG send: `rd:4` reads 4 GRFs into r12-15; Xe2 LSC: `r22:8` is 8 GRFs of 64 bytes.
    assert _counts([
        "(W) send.dc0 (16|M0) r12 r9 null:0 0x0 0x024C2038 {$13} // wr:1h+0, rd:4; hword scratch block read x4",
        "mov (16|M0) r20.0<1>:f r14.0<1;1,0>:f",
    ]) == [5, 4]
    assert grf_bytes_for("XE2") == 64 and grf_bytes_for("DG2") == 32
    assert _counts(["load.ugm.d32x4.a32.ca.ca (16|M0)  r22:8 bss[a0.0][r82:1]  {ExBSO,$3} // desc",
                    "mov (16|M0) r40.0<1>:f r29.0<1;1,0>:f"], grf=64) == [9, 2]


def test_pressure_per_line_is_the_peak_of_its_instructions():
    isa = read_dump("//.kernel k\n//.platform DG2\n//.thread_config numGRF=128, numAcc=4\n"
                    "// Line 3:  a = b;\n        mov (16|M0) r10.0<1>:f r2.0<1;1,0>:f\n"
                    "// Line 4:  c = d;\n        mov (16|M0) r12.0<1>:f r4.0<1;1,0>:f\n"
                    "// Line 5:  e = a + c;\n        add (16|M0) r14.0<1>:f r10.0<1;1,0>:f r12.0<1;1,0>:f\n"
                    "// Line 6:  out = e;\n        mov (16|M0) r20.0<1>:f r14.0<1;1,0>:f\n", "k_simd16_entry_1.asm")
    assert {x.line: x.pressure for x in isa.lines} == {3: 6, 4: 6, 5: 6, 6: 4}
    assert isa.peak is not None and isa.peak.line == 3


def test_source_modifiers_are_read_and_condition_modifiers_are_not_registers():
    counts = _counts([
        "mov (16|M0) r10.0<1>:f r2.0<1;1,0>:f",
        "mov (16|M0) r12.0<1>:f (abs)r10.0<1;1,0>:f",
        "cmp (16|M0) (gt)f1.0 null<1>:f -r12.0<1;1,0>:f 0.0:f",
    ])
    # r10-11 are read through (abs), r12-13 through a negation: both stay live until read.
    assert counts == [4, 4, 2]
