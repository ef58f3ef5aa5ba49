"""A module's headers are part of its build: an edited header is never answered from the cache.

A kernel whose private array is sized by a macro in a header (`-I DIR`), and a second header
that includes the first by a path relative to itself: each edit of the innermost header must
give what plain ocloc builds with the same options (the oracle), by a compile unless the
same headers were built before, while a run with nothing edited is answered from the cache.
"""

from __future__ import annotations

import json

import oracle

TARGET = "dg2-g10"  # built by both compiler generations
KERNEL = """#include <wrap.h>
__kernel void k(__global float* o) {
    float a[N];
    for (int i = 0; i < N; i++) a[i] = o[i * get_global_id(0)];
    float s = 0;
    for (int i = 0; i < N; i++) s += a[(i * 7) % N];
    o[get_global_id(0)] = s;
}
"""


def run(cli, compiler, module, options):
    res = cli("kernel", module, "-t", TARGET, "--compiler", compiler.id, "--options", options, "--json", "-q")
    assert res.code == 0, res
    doc = json.loads(res.out)
    [report] = doc["reports"]
    return doc["stats"]["compiles"], report["private_bytes"]


def truth(compiler, module, options) -> int:
    built = oracle.ocloc(compiler, module, TARGET, options=options)
    assert built.binary is not None, built.log
    return oracle.driver_figures(built.binary, True)["k"]["private"]


def test_an_edited_header_is_built_again_and_an_unedited_one_is_not(fresh_cli, compiler, tmp_path):
    include = tmp_path / "include"
    (include / "sizes").mkdir(parents=True)
    (include / "wrap.h").write_text('#include "sizes/size.h"\n')
    size = include / "sizes" / "size.h"
    module = tmp_path / "m.cl"
    module.write_text(KERNEL)
    options = f"-I {include}"

    seen = []
    # The third edit puts the first header back: its build is in the cache already, rightly.
    for n, compiles in ((4, 1), (4096, 1), (4, 0)):
        size.write_text(f"#define N {n}\n")
        expected = truth(compiler, module, options)
        assert run(fresh_cli, compiler, module, options) == (compiles, expected)  # never the entry before
        assert run(fresh_cli, compiler, module, options) == (0, expected)  # nothing edited: the cache
        seen.append(expected)
    assert seen[0] == 0 < seen[1]  # the header decides the kernel's scratch: the test can fail


def test_a_module_whose_headers_cannot_be_told_is_built_every_time(fresh_cli, compiler, tmp_path):
    include = tmp_path / "include"
    include.mkdir()
    (include / "wrap.h").write_text("#define N 4096\n")
    module = tmp_path / "m.cl"
    module.write_text('#define HEADER "wrap.h"\n#include HEADER\n' + KERNEL.split("\n", 1)[1])
    options = f"-I {include}"
    expected = truth(compiler, module, options)
    assert expected > 0
    assert run(fresh_cli, compiler, module, options) == (1, expected)
    assert run(fresh_cli, compiler, module, options) == (1, expected)  # no entry to answer it from
