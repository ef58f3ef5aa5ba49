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


def test_the_fast_encoder_writes_what_json_dumps_writes():
    from zeinspect.formats.json import encode

    # Non-ASCII text (a surrogate pair too), DEL, terminal escapes, quotes, nesting, empties.
    for doc in ({"a": "é😀\u2028x", "b": [1, 2.5, None, True, -0.0, 1e-3], "c": {}, "d": [],
                 "e": {"k": [{"z": 1}]}, "f": "\x1b[31m\"\\\x7f"}, [], {}, "x", 0.1, {1: "a"}):
        for indent in (1, 2):
            assert encode(doc, indent) == json.dumps(doc, indent=indent, ensure_ascii=True)
