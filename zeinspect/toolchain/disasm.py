"""A native zebin's kernels as IGA assembly, through `ocloc disasm` (a shipped binary carries no
IGC dump of its build, but its code is there: inputs.isa.read_disasm reads its scratch traffic).

`ocloc disasm` writes one file per section, named after the section.  A SYCL kernel's section
is `.text.` and its mangled name, which for template-heavy libraries runs past the 255 bytes a
file name may have (vLLM's attention kernels: 1,500); ocloc then writes nothing for it and
says nothing.  So the zebin it is given has short section names (`.text.k0`, `.text.k1`, ...): a new
section-name table and a new section header table (the old headers, pointing into the new
names, and one for the table) are appended to the file.  ocloc writes one string table for
both section and symbol names, so the old one stays as it was, for the symbols; code,
symbols, relocations and notes are untouched, and the names are mapped back here.
"""

from __future__ import annotations

import struct
import tempfile
from pathlib import Path

from ..errors import FormatError
from ..model import Compiler
from .environment import process
from .run import run_tool

SECTION_HEADER = struct.Struct("<IIQQQQIIQQ")
"""An ELF64 section header: name, type, flags, addr, offset, size, link, info, addralign, entsize."""


def short_names(zebin: bytes, what: str = "zebin") -> tuple[bytes, list[str]]:
    """The zebin with its kernels' sections renamed `.text.k<N>` (and their relocation sections
    alike), and the kernel names in N's order."""
    if len(zebin) < 64 or zebin[:4] != b"\x7fELF" or zebin[4] != 2 or zebin[5] != 1:
        raise FormatError(f"{what} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", zebin, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", zebin, 58)
    if shentsize != SECTION_HEADER.size or not 0 < shstrndx < shnum or shoff + shentsize * shnum > len(zebin):
        raise FormatError(f"{what}: its section headers do not read")
    headers = [list(SECTION_HEADER.unpack_from(zebin, shoff + shentsize * i)) for i in range(shnum)]
    table_offset, table_size = headers[shstrndx][4], headers[shstrndx][5]
    table = zebin[table_offset:table_offset + table_size]

    def name_at(offset: int) -> str:
        end = table.find(b"\0", offset)
        return table[offset:end if end >= 0 else None].decode("utf-8", "replace")

    names = [name_at(h[0]) for h in headers]
    kernels = [n.removeprefix(".text.") for n in names if n.startswith(".text.")]
    index = {k: i for i, k in enumerate(kernels)}
    new_table = bytearray(b"\0")
    for header, name in zip(headers, names):
        for prefix in (".text.", ".rel.text.", ".rela.text."):
            if name.startswith(prefix) and name[len(prefix):] in index:
                name = f"{prefix}k{index[name[len(prefix):]]}"
                break
        header[0] = len(new_table)
        new_table += name.encode() + b"\0"
    own_name = len(new_table)
    new_table += b".shstrtab\0"
    out = bytearray(zebin)
    out += b"\0" * (-len(out) % 8)
    table_at = len(out)
    out += new_table
    out += b"\0" * (-len(out) % 8)
    headers_at = len(out)
    headers.append([own_name, 3, 0, 0, table_at, len(new_table), 0, 0, 1, 0])  # 3: SHT_STRTAB
    for header in headers:
        out += SECTION_HEADER.pack(*header)
    struct.pack_into("<Q", out, 40, headers_at)
    struct.pack_into("<HH", out, 60, len(headers), len(headers) - 1)  # e_shnum, e_shstrndx
    return bytes(out), kernels


NO_IGA = "couldn't load iga"
"""What ocloc says when it finds no IGA library to disassemble with."""


def _iga_link(compiler: Compiler, folder: Path) -> str | None:
    """A folder holding `libiga64.so`, linked to the compiler's own versioned IGA library.  Debian's
    ocloc 22.43 loads the unversioned name, which only the libigc-dev package provides; the
    library itself (libiga64.so.1) comes with the compiler."""
    from .compilers import lib_dirs_for

    for lib_dir in lib_dirs_for(compiler.path) + [Path("/usr/lib/x86_64-linux-gnu")]:
        versioned = sorted(lib_dir.glob("libiga64.so.[0-9]*"), key=lambda p: len(p.name))
        if versioned:
            (folder / "lib").mkdir(exist_ok=True)
            (folder / "lib" / "libiga64.so").symlink_to(versioned[0])
            return str(folder / "lib")
    return None


def disassemble(compiler: Compiler, zebin: bytes, device: str, *, timeout: float | None = None,
                what: str = "zebin") -> dict[str, str]:
    """Kernel name -> its IGA assembly.  Raises FormatError when the zebin does not read, and
    ToolchainError (from run_tool) when ocloc crashes or hangs."""
    from ..errors import ToolchainError

    renamed, kernels = short_names(zebin, what)
    with tempfile.TemporaryDirectory(prefix="zeinspect-disasm-") as tmp:
        (Path(tmp) / "k.bin").write_bytes(renamed)
        (Path(tmp) / "out").mkdir()  # ocloc 22.43 writes nothing into a folder that is not there
        argv = [compiler.path, "disasm", "-file", "k.bin", "-device", device, "-dump", "out"]
        run = run_tool(argv, cwd=tmp, timeout=timeout)
        if NO_IGA in run.output and (found := _iga_link(compiler, Path(tmp))) is not None:
            run = run_tool(argv, cwd=tmp, timeout=timeout, env=process(extra={"LD_LIBRARY_PATH": found}))
        failure = run.describe_failure()
        if failure is not None:
            raise ToolchainError(f"{what}: ocloc disasm: {failure.replace('compiler ', '')}")
        out = {}
        for i, kernel in enumerate(kernels):
            path = Path(tmp) / "out" / f".text.k{i}.asm"
            if path.is_file():
                out[kernel] = path.read_text(errors="replace")
    if kernels and not out:
        said = " ".join(run.output.split())[-200:]
        raise ToolchainError(f"{what}: ocloc disasm wrote no assembly (exit {run.returncode}"
                             f"{': ' + said if said else ''})")
    return out
