"""inputs.includes: the headers an OpenCL C module may read, as one digest for its cache keys."""

from __future__ import annotations

from zeinspect.inputs.includes import headers_digest, include_dirs, keyed_source


def test_include_dirs_are_the_absolute_dash_i_folders_in_order():
    assert include_dirs("-DN=4 -I /a -I/b -Irel -cl-std=CL2.0 -I /a") == ["/a", "/b"]
    # a quoted folder, read both ways (with the shell's quoting first); an unbalanced quote raises nothing
    assert include_dirs('-I "/with space"') == ["/with space"]
    assert include_dirs('-I /x -I "/unbalanced') == ["/x"]


def test_a_module_that_includes_nothing_keeps_its_own_digest():
    assert headers_digest(b"__kernel void k() {}", "-I /x") == ""
    assert keyed_source("abc", b"__kernel void k() {}", "") == "abc"
    # `#include "x.h"` with nowhere to look: the compile runs in an empty folder, as for no include
    assert headers_digest(b'#include "x.h"\n', "") == ""


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
    assert headers_digest(source, options) == headers_digest(source, options)  # stable


def test_headers_are_followed_relative_to_themselves_and_cycles_end(tmp_path):
    (tmp_path / "inc" / "deep").mkdir(parents=True)
    (tmp_path / "inc" / "wrap.h").write_text('#include "deep/size.h"\n#include <wrap.h>\n')
    (tmp_path / "inc" / "deep" / "size.h").write_text('#  include "../wrap.h"\n#define N 4\n')
    source, options = b"#include <wrap.h>\n", f"-I{tmp_path / 'inc'}"
    before = headers_digest(source, options)
    (tmp_path / "inc" / "deep" / "size.h").write_text('#  include "../wrap.h"\n#define N 5\n')
    assert headers_digest(source, options) not in ("", before)


def test_an_include_the_scan_cannot_resolve_is_never_the_same_key_twice(tmp_path):
    source = b"#define H <x.h>\n#include H\n"
    a, b = headers_digest(source, f"-I {tmp_path}"), headers_digest(source, f"-I {tmp_path}")
    assert a and b and a != b
