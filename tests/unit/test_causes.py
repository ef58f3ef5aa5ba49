"""Why a kernel uses scratch (KernelReport.cause), for a spill IGC chose to keep: Xe3 and later
pick each kernel's register count, and spill within IGC's budget rather than take more."""

from __future__ import annotations

import pytest

from .fakes import report


@pytest.mark.parametrize("changes, cause", [
    ({}, "allowed_spill"),                                       # fewer registers than the file, IGC's count
    ({"grf": 256}, "register_spill"),                            # the whole file and still a spill
    ({"ip": "20.1.0", "target": "bmg-g21"}, "register_spill"),   # Xe2: the count is the build's, not IGC's choice
    ({"options": "-cl-intel-128-GRF-per-thread"}, "register_spill"),  # the count was asked for
    ({"work_group_size": 1024}, "register_spill"),               # more registers could fail to launch it
    ({"spill": 0, "private": 64}, "private_arrays"),
])
def test_a_spill_igc_allowed_on_xe3_is_the_compilers_choice(changes, cause):
    figures = {"ip": "30.0.4", "target": "ptl-h", "spill": 256, "grf": 128, **changes}
    assert report(**figures).cause == cause
