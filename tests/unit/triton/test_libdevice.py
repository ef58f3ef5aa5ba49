"""CUDA's libdevice calls in a TTIR read as Intel's (triton.offline.libdevice), from the map of the
Triton in use: the same function with the same argument types in both libdevice modules."""

from __future__ import annotations

import pytest

pytest.importorskip("triton.language.extra.intel.libdevice")

from triton.language.extra.cuda import libdevice as cuda  # noqa: E402
from triton.language.extra.intel import libdevice as intel  # noqa: E402

from zeinspect.errors import InputError  # noqa: E402
from zeinspect.triton.offline.libdevice import cuda_to_intel, intel_symbols, retarget  # noqa: E402

LINE = '%15 = tt.extern_elementwise %14 {{libname = "", libpath = "", pure = true, symbol = "{}"}} : ...'


def test_the_map_pairs_the_same_function_of_both_libraries():
    table = cuda_to_intel()
    assert table["__nv_tanhf"] == "__imf_tanhf" and table["__nv_tanh"] == "__imf_tanh"
    assert all(theirs.startswith("__nv_") for theirs in table)
    assert {"tanh", "exp", "rsqrt"} <= set(dir(cuda)) & set(dir(intel))


def test_what_intel_s_libdevice_calls_is_left_as_it_is():
    """A few of Intel's functions keep CUDA's spelling: a TTIR Triton-XPU wrote calling one is
    not CUDA's, and is neither rewritten nor refused."""
    kept = sorted(s for s in intel_symbols() if s.startswith("__nv_"))
    for symbol in kept:
        assert retarget(LINE.format(symbol), "k.ttir") == (LINE.format(symbol), [])


def test_a_ttir_is_retargeted_and_says_so():
    text, notes = retarget(LINE.format("__nv_tanhf") + "\n" + LINE.format("__nv_expf"), "k.ttir")
    assert '"__imf_tanhf"' in text and '"__imf_expf"' in text and "__nv_" not in text
    assert notes and "__nv_tanhf as __imf_tanhf" in notes[0]
    assert retarget(LINE.format("__imf_tanhf"), "k.ttir") == (LINE.format("__imf_tanhf"), [])


def test_a_cuda_function_intel_lacks_is_not_screened():
    with pytest.raises(InputError, match="__nv_no_such_function"):
        retarget(LINE.format("__nv_no_such_function"), "k.ttir")
