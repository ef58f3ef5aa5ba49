"""The CPU runtimes zeinspect runs kernels on (equivalence checks) and asks for devices (SYCL).

The intel-opencl-rt wheel installs Intel's OpenCL CPU runtime, but its .icd file holds a
placeholder path, so the ICD loader must be pointed at the library.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def runtime_env() -> dict:
    """Point the ICD loader at the intel-opencl-rt wheel's CPU runtime when no one else did
    (the wheel's own .icd file holds a placeholder path)."""
    env = dict(os.environ)
    if "OCL_ICD_FILENAMES" not in env:
        for lib in (Path(sys.prefix) / "lib" / "libintelocl.so",):
            if lib.exists():
                env["OCL_ICD_FILENAMES"] = str(lib)
    return env
