"""A bounded memo of what was loaded from user files, keyed by the file as it is on disk.

A long-lived process (the pytest plugin, the prune hook inside a user's autotuning run)
loads many modules: each memo keeps its most recently used entries only, and a file that
changed on disk (another modification time or size) is a new key, never a stale hit.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any


def file_key(path: str) -> tuple[str, int, int]:
    """(resolved path, modification time in ns, size): what a memo entry of a file is keyed by."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return real, -1, -1
    return real, st.st_mtime_ns, st.st_size


class Memo:
    """At most `size` entries, least recently used dropped first (`on_drop(value)` told)."""

    def __init__(self, size: int, on_drop: Callable[[Any], None] | None = None) -> None:
        self.size = size
        self.on_drop = on_drop
        self._items: OrderedDict[Hashable, Any] = OrderedDict()

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, key: Hashable) -> Any:
        self._items.move_to_end(key)
        return self._items[key]

    def __setitem__(self, key: Hashable, value: Any) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            _, dropped = self._items.popitem(last=False)
            if self.on_drop is not None:
                self.on_drop(dropped)

    def setdefault(self, key: Hashable, value: Any) -> Any:
        if key not in self._items:
            self[key] = value
        return self[key]

    def values(self) -> list[Any]:
        return list(self._items.values())
