"""What a Triton kernel's loops carry, read from its TTGIR: pointer tensors against data."""

from __future__ import annotations

from zeinspect.triton.model.ttgir import loop_carried, pointer_note

TTGIR = (
    "      %84:3 = scf.for %arg12 = %c0_i32 to %54 step %c1_i32 iter_args(%arg13 = %cst_1, %arg14 = %40, "
    "%arg15 = %52) -> (tensor<64x256xf32, #blocked2>, tensor<64x128x!tt.ptr<f16>, #blocked1>, "
    "tensor<128x256x!tt.ptr<f16>, #blocked>)  : i32 {\n"
)


def test_pointer_tensors_are_counted_at_eight_bytes_an_element():
    carried = loop_carried(TTGIR, lanes=512)
    assert carried == {"data_bytes_per_lane": 64 * 256 * 4 // 512,
                       "pointer_bytes_per_lane": 64 * 128 * 8 // 512 + 128 * 256 * 8 // 512}
    assert "tl.make_block_ptr" in pointer_note(carried)


def test_no_loop_no_note():
    assert loop_carried("%0 = tt.load %arg0 : tensor<64x!tt.ptr<f16>>\n", lanes=128) is None
    assert pointer_note({"pointer_bytes_per_lane": 8, "data_bytes_per_lane": 512}) is None
