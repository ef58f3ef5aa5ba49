"""Reading a file the user named: its bytes, or one InputError naming it and the problem."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError


def read_file(path: str | os.PathLike, what: str, limit: int) -> bytes:
    """The bytes of `path`; `what` names the kind of file in messages ("build log")."""
    p = Path(path)
    try:
        if p.is_dir():
            raise InputError(f"is a directory, not a {what}", path=str(path))
        size = p.stat().st_size
        if size > limit:
            raise InputError(f"is {size} bytes, over the {limit} byte limit for a {what}", path=str(path))
        return p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"no such {what}", path=str(path)) from None
    except PermissionError:
        raise InputError("permission denied", path=str(path)) from None
    except IsADirectoryError:
        raise InputError(f"is a directory, not a {what}", path=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot be read: {exc.strerror or exc}", path=str(path)) from None
