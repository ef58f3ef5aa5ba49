"""Streamed JSON is the document json.dumps would write, without holding it whole."""

from __future__ import annotations

import json

from zeinspect.formats.json import dumps, streamed


def test_streamed_document_equals_the_whole_one():
    head = {"schema": "x/1", "stats": {"a": 1}, "notes": ["line\nwith newline", "q\"uote"]}
    for items in ([], [{"k": 1, "nested": {"l": [1, 2]}}], [{"k": i, "s": "a\nb"} for i in range(5)]):
        text = "".join(streamed(head, "reports", iter(items)))
        assert json.loads(text) == {**head, "reports": items}
        assert text == dumps({**head, "reports": items})
