"""Where a captured command's code asked for something: the first frame of its own, outside
the packages that carry the request (Triton, zeinspect; torch and code generated at run time
for what torch.compile generates)."""

from __future__ import annotations

import functools
import os
import sys
from types import FrameType


@functools.cache
def own_folders() -> tuple[str, ...]:
    """Triton's and zeinspect's package folders (by folder: a library kept in a folder named
    `zeinspect` is still the library)."""
    import triton

    return tuple(os.path.dirname(os.path.abspath(m.__file__ or "")) + os.sep
                 for m in (triton, sys.modules[__name__.split(".")[0]]))


def first_frame_outside(folders: tuple[str, ...], frame: FrameType | None, *, generated: bool = True) -> str | None:
    """`FILE:LINE` of the first frame from `frame` outwards that is in none of `folders`; with
    `generated` False, not code generated at run time either (`<string>`, `<eval_with_key>`)."""
    while frame is not None:
        where = frame.f_code.co_filename
        if not where.startswith(folders) and (generated or not where.startswith("<")):
            return f"{where}:{frame.f_lineno}"
        frame = frame.f_back
    return None
