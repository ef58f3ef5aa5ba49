"""inputs.includes: the files an OpenCL C module may read, as one digest for its cache keys.

The property every case checks: a file the compiler would read changes the digest when it is
edited (or a place it would look gains a file), and a module whose reads the scan cannot tell
gets a key no cache reads or writes.  Where the compiler looks is the module docstring's."""

from __future__ import annotations

import os
import tempfile

import pytest

from zeinspect.cache import UNKNOWABLE, VOLATILE, make_key
from zeinspect.inputs.includes import headers_digest, include_dirs, keyed_source


def test_include_dirs_are_the_dash_i_folders_in_order():
    assert include_dirs("-DN=4 -I /a -I/b -Irel -cl-std=CL2.0 -I /a") == ["/a", "/b", "rel"]
    # a quoted folder, read both ways (with the shell's quoting first); an unbalanced quote raises nothing
    assert include_dirs('-I "/with space"') == ["/with space", '"/with']
    assert include_dirs('-I /x -I "/unbalanced') == ["/x", '"/unbalanced']


def test_a_module_that_reads_no_other_file_keeps_its_own_digest():
    assert headers_digest(b"__kernel void k() { int included = 1; } // no include here", "-I /x") == ""
    words = b'__kernel void k() { float embed[8]; const char* s = "include"; int import; }\n#define S "#include"\n'
    assert headers_digest(words, "-I /x") == ""
    assert keyed_source("abc", b"__kernel void k() {}", "") == "abc"


def edits_show(tmp_path, source: bytes, options: str, header) -> bool:
    """Does editing `header` change the module's digest (and is the digest stable between)?"""
    header.write_text("#define N 4\n")
    before = headers_digest(source, options)
    assert before and headers_digest(source, options) == before and UNKNOWABLE not in before
    header.write_text("#define N 8\n")
    return headers_digest(source, options) != before


SPELLINGS = {
    "plain": b'#include "size.h"\n',
    "angle": b"#include <size.h>\n",
    "import": b'#import "size.h"\n',
    "embed": b'#embed "size.h"\n',
    "bom": b'\xef\xbb\xbf#include "size.h"\n',
    "comment before": b'/* c */ #include "size.h"\n',
    "comment inside": b'#/**/include "size.h"\n',
    "digraph": b'%:include "size.h"\n',
    "trigraph": b'??=include "size.h"\n',
    "form feed": b'\f#\vinclude "size.h"\n',
    "cr line ends": b'int a;\r#include "size.h"\r',
    "spliced": b'#inc\\\nlude "size.h"\n',
    "spliced with a space": b'#include \\  \n"size.h"\n',
    "has_include": b'#if __has_include("size.h")\n#endif\n',
    "in a false branch": b'#if 0\n#include "size.h"\n#endif\n',
    "include_next": b'#include_next "size.h"\n',
    # where a `/*` starts no comment for clang (a second review's cases): each hid the include
    "after a warning's text": b'#warning sizes follow /*\n#include "size.h"\n// */\n',
    "after a ??' trigraph": b"#define QUOTE '??'/*'\n#include \"size.h\"\n// */\n",
    "after a splice at LF CR": b'#define S "abc\\\n\r/*"\n#include "size.h"\n// */\n',
    "after an angle name": b'#include <d/*x.h>\n#include "size.h"\n// */>\n',
    # a third review's cases
    "no-break space after #": b'#\xc2\xa0include "size.h"\n',
    "no-break space before #": b'\xc2\xa0#include "size.h"\n',
    "after a warning's /* and a comment": b'#warning see /* here\n/**/#include "size.h"\n// */\n',
    "after a string cut at its line end": b'#define S "a\\\\\n\n/**/#include "size.h"\n',
    "pragma GCC dependency": b'#pragma GCC dependency "size.h"\n',
}


@pytest.mark.parametrize("name", SPELLINGS)
def test_every_spelling_the_compiler_builds_is_read(tmp_path, name):
    assert edits_show(tmp_path, SPELLINGS[name], f"-I {tmp_path}", tmp_path / "size.h")


def test_a_commented_out_or_quoted_include_is_no_include():
    assert headers_digest(b'// #include "size.h"\n/* #include <size.h> */\n', "") == ""


def test_every_edit_on_the_search_path_changes_the_digest(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    source = b'#include "size.h"\n__kernel void k() {}\n'
    options = f"-I {first} -I {second}"
    (second / "size.h").write_text("#define N 4\n")
    seen = {headers_digest(source, options)}
    (second / "size.h").write_text("#define N 8\n")  # edited
    seen.add(headers_digest(source, options))
    (first / "size.h").write_text("#define N 8\n")  # a header now found before it
    seen.add(headers_digest(source, options))
    (first / "size.h").unlink()
    assert headers_digest(source, options) in seen  # back to the second state
    assert len(seen) == 3 and "" not in seen


def test_headers_are_followed_relative_to_themselves_and_cycles_end(tmp_path):
    (tmp_path / "inc" / "deep").mkdir(parents=True)
    (tmp_path / "inc" / "wrap.h").write_text('#include "deep/size.h"\n#include <wrap.h>\n#include "./wrap.h"\n')
    size = tmp_path / "inc" / "deep" / "size.h"
    assert edits_show(tmp_path, b"#include <wrap.h>\n", f"-I{tmp_path / 'inc'}", size)


def test_dot_dot_after_a_symbolic_link_is_the_link_targets_parent(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "elsewhere" / "deep").mkdir(parents=True)
    (tmp_path / "inc" / "link").symlink_to(tmp_path / "elsewhere" / "deep")
    (tmp_path / "inc" / "size.h").write_text("#define N 1\n")  # where a textual `..` would lead
    assert edits_show(tmp_path, b'#include "link/../size.h"\n', f"-I {tmp_path / 'inc'}",
                      tmp_path / "elsewhere" / "size.h")


def test_a_relative_folder_that_climbs_out_of_the_compiles_temporary_folder_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert edits_show(tmp_path, b'#include "size.h"\n', "-I ../", tmp_path / "size.h")
    assert edits_show(tmp_path, b'#include "../size.h"\n', "", tmp_path / "size.h")


@pytest.mark.parametrize("source", [b"#define H <x.h>\n#include H\n", b"#if __has_include(H)\n#endif\n",
                                    b"#define H(x) __has_include(x)\n",
                                    b'#define CFG "x.h"\n#warning see /* here\n#include CFG\n// */\n'])
def test_what_the_scan_cannot_tell_is_never_cached(tmp_path, source):
    a, b = headers_digest(source, f"-I {tmp_path}"), headers_digest(source, f"-I {tmp_path}")
    assert a.startswith(UNKNOWABLE) and a != b
    assert make_key(kind="aot", module=keyed_source("abc", source, "")).startswith(VOLATILE)


def test_a_place_that_is_no_regular_file_is_unknowable_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "fifo.h")
    assert headers_digest(b'#include "fifo.h"\n', f"-I {tmp_path}").startswith(UNKNOWABLE)
    assert headers_digest(b'#include "/dev/zero"\n', "").startswith(UNKNOWABLE)
    (tmp_path / "dir.h").mkdir()  # a folder where a header could be: looked past, as the compiler does
    assert not headers_digest(b'#include "dir.h"\n', f"-I {tmp_path}").startswith(UNKNOWABLE)


def test_odd_names_give_a_digest_not_an_exception(tmp_path):
    (tmp_path / "w.h").write_bytes(b'#include "\xff.h"\n')
    assert edits_show(tmp_path, b'#include "w.h"\n', f"-I {tmp_path}", tmp_path / os.fsdecode(b"\xff.h"))
    assert headers_digest(b'#include "a\x00b.h"\n', f"-I {tmp_path}").startswith(UNKNOWABLE)


def test_the_compilers_own_folders_are_looked_in_without_any_dash_i(tmp_path, monkeypatch):
    import zeinspect.inputs.includes as includes

    monkeypatch.setattr(includes, "SYSTEM_DIRS", (str(tmp_path),))  # for /usr/local/include, /usr/include
    assert edits_show(tmp_path, b"#include <size.h>\n", "", tmp_path / "size.h")


def test_the_build_cache_neither_keeps_nor_answers_a_volatile_key(tmp_path):
    from zeinspect.cache import BuildCache

    cache = BuildCache(tmp_path)
    key = make_key(kind="aot", module=f"abc+{UNKNOWABLE}-0")
    cache.put(key, {"x": 1}, b"payload")
    assert cache.get(key) is None and cache.get_local(key) is None
    assert not list(tmp_path.rglob("*.entry"))
    plain = make_key(kind="aot", module="abc")
    cache.put(plain, {"x": 1}, b"payload")
    assert cache.get(plain) == ({"x": 1}, b"payload")  # the check can see a stored entry


def test_a_name_keeps_its_escapes_as_clang_opens_it(tmp_path):
    assert edits_show(tmp_path, b'#include "a\\"b.h"\n', f"-I {tmp_path}", tmp_path / 'a\\"b.h')


def test_a_remembered_scan_still_sees_an_edit_that_keeps_the_size_and_time(tmp_path, monkeypatch):
    import zeinspect.inputs.includes as includes

    header, source, options = tmp_path / "size.h", b'#include "size.h"\n', f"-I {tmp_path}"
    header.write_text("#define N 4\n")
    os.utime(header, ns=(10**18, 10**18))  # older than the racy window: the scan is remembered
    before = headers_digest(source, options)
    scans = []
    monkeypatch.setattr(includes, "_places", lambda *a: scans.append(a) or pytest.fail("scanned again"))
    assert headers_digest(source, options) == before and not scans  # remembered: no second scan
    monkeypatch.undo()
    header.write_text("#define N 8\n")  # the same size
    os.utime(header, ns=(10**18, 10**18))  # and the same time: the change time still tells
    assert headers_digest(source, options) != before
