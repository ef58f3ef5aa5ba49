"""The ISA dump reader on dump text of both message forms: lines, loop depth, bytes."""

from __future__ import annotations

from zeinspect.inputs.isa import read_dump

DUMP = """//.kernel k
//.thread_config numGRF=128, numAcc=4, numSWSB=16
//.instCount 9
//.spill size 192
//.declare V0067 (77)  rf=r size=64 type=d align=16 words (spilled -> Scratch[0x32])
// Line 3:  int x = 0;
        send.dc0 (16|M0)         null     r6      r74:2   0x0            0x020F11EC           {A@7,$3} // wr:1h+2, rd:0; hword scratch block write x2 //  scratch space spill:  from offset[492x32]; ; $30
_0_001:
// Line 5:    acc += a[i];
(W)     send.dc0 (16|M0)         r94      r6      null:0  0x0            0x022C100C           {$11} // wr:1h+0, rd:2; hword scratch block read x2 //  scratch space fill:  from offset[12x32]; ; $45
(W)     load.ugm.d32x64t.a32 (1|M0)  r14:4      ss[a0.2][r5:1-0x10000]  {F@5,$2} // ex_desc:a0.2; desc:0x4240F500 //  fill from offset[0*64] of ?; ; $22
(f1.0)  goto (32|M0)                         _0_001            _0_001                                //  ALU pipe: int; $42
// Line 7:  out[0] = acc;
(W)     store.ugm.d32x4.a32 (16|M0)  ss[a0.2][r5:1-0xFF00] r10:4  {I@1,$5} // ex_desc:a0.2; desc:0x4200F504 //  spill to offset[4*64] of ?; ; $24
"""


def test_lines_depth_and_bytes():
    isa = read_dump(DUMP, "OCL_asm_1_simd16_entry_0001.asm")
    assert (isa.kernel, isa.simd, isa.grf, isa.instructions, isa.spill_size) == ("k", 16, 128, 9, 192)
    # V0067 lives in scratch bytes 0-63: only the fill from offset 0 on line 5 moves it.
    assert isa.has_lines and [(v.name, v.bytes, [x.line for x in v.lines]) for v in isa.spilled_variables] == [
        ("V0067", 64, [5])]
    by_line = {x.line: x for x in isa.lines}
    assert (by_line[3].spills, by_line[3].depth, by_line[3].bytes_moved) == (1, 0, 64)
    # Line 5 sits between a label and the branch back to it: inside one loop.
    assert (by_line[5].fills, by_line[5].depth, by_line[5].bytes_moved) == (2, 1, 64 + 256)
    assert by_line[5].weight == 2 * 8
    # Xe2's non-transposed LSC message: 4 bytes x 4 per lane x 16 lanes.
    assert (by_line[7].spills, by_line[7].bytes_moved) == (1, 256)
    assert isa.lines[0].line == 5  # ranked by weight
    assert (isa.spills, isa.fills) == (2, 2)


def test_a_dump_without_line_information_counts_per_block():
    dump = ("//.kernel k\n//.spill size 64\n  send // x //  scratch space spill: ; $1\n_0_003:\n"
            "  send // x //  scratch space fill: ; $2\n  send // x //  scratch space fill: ; $3\n")
    isa = read_dump(dump, "a_simd8_entry_1.asm")
    assert not isa.has_lines and isa.spills == 1 and isa.fills == 2
    assert {(x.block, x.spills, x.fills) for x in isa.lines} == {("entry", 1, 0), ("_0_003", 0, 2)}
    assert all(x.line is None for x in isa.lines)


def test_lines_are_per_file_where_the_dump_names_files():
    # Triton inlines triton.language's own functions: the dump switches files with `// File:`.
    dump = ("//.kernel k\n// File: /src/kernel.py\n// Line 40:  acc = tl.dot(a, b, acc)\n"
            "  mov (16|M0) r10.0<1>:f r2.0<1;1,0>:f // ; $1\n"
            "// File: /site/triton/language/standard.py\n// Line 40:  return (x + div - 1) // div\n"
            "  add (1|M0) r12.0<1>:d r3.0<0;1,0>:d 127:w // ; $2\n"
            "// File: /src/kernel.py\n// Line 41:  tl.store(c, acc)\n"
            "  send // x //  scratch space spill: ; $3\n")
    isa = read_dump(dump, "k_simd16_entry_1.asm")
    assert {(x.file, x.line, x.spills) for x in isa.lines} == {
        ("/src/kernel.py", 40, 0), ("/site/triton/language/standard.py", 40, 0), ("/src/kernel.py", 41, 1)}
