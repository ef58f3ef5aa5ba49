"""The levers: each a setting of how a kernel is built (levers.base explains the abstraction).

Adding a lever: a module here that defines it (and what it does to a build), one line in
the registry below, and its field on the shape it sets (`model.Shape` for OpenCL C and
SPIR-V modules, `levers.triton_launch.TritonShape` for Triton kernels).  The order of a
registry is the order a shape search walks the settings.
"""

from __future__ import annotations

from . import register_file, slm_staging, sub_group, triton_launch
from .base import Lever

# OpenCL C sources and SPIR-V modules (judge.shapes).
MODULE_LEVERS: tuple[Lever, ...] = (sub_group.LEVER, register_file.LEVER)

# Triton kernels (judge.triton_fix).
TRITON_LEVERS: tuple[Lever, ...] = (slm_staging.LEVER, triton_launch.GRF_MODE, triton_launch.THREADS_PER_WARP,
                                    triton_launch.NUM_WARPS)
