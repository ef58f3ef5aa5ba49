"""An ocloc that counts the compiles a run makes (tests of what is compiled once, not twice)."""

from __future__ import annotations

from pathlib import Path


def counting_ocloc(compiler, prefix: Path, log: Path) -> Path:
    """`compiler` behind a script that writes a line per compile to `log`: `plain`, or `1` for a
    dumping compile (IGC_ShaderDumpEnable), each line of an `ocloc multi` list a compile; and
    `process` per ocloc process that compiles.  Its IGC libraries are linked beside it, where
    zeinspect reads a compiler's IGC version, so it is the same compiler by identity."""
    from zeinspect.toolchain.compilers import lib_dirs_for

    libs = [d for d in lib_dirs_for(compiler.path) if list(d.glob("libigc.so.*"))] or \
        [Path(compiler.path).resolve().parent.parent / "root" / "usr" / "lib" / "x86_64-linux-gnu"]
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib").mkdir()
    (prefix / "lib" / "x86_64-linux-gnu").symlink_to(libs[0])
    script = prefix / "bin" / "ocloc"
    kind = "${IGC_ShaderDumpEnable:-plain}"
    script.write_text(f"#!/bin/sh\ncase \"$1 $*\" in\n"
                      f"  multi*) [ -f \"$2\" ] && {{ echo process; grep . \"$2\" | sed \"s/.*/{kind}/\"; }} >> '{log}' ;;\n"
                      f"  *' -file '*) echo process >> '{log}'; echo \"{kind}\" >> '{log}' ;;\nesac\n"
                      f"exec '{compiler.path}' \"$@\"\n")
    script.chmod(0o755)
    return script
