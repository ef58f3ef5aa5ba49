"""The ratchet file: which kernels may use scratch memory, and how much.

Two dialects, each read and written back unchanged in form (every byte of a line that
did not change is kept, comments and order included):

native   `KERNEL  TARGETS  PRIVATE_BYTES  SPILL_BYTES  [loop=BYTES]  [# reason]`,
         whitespace-separated; TARGETS is a target name, an IP version, a set (`default`,
         `xe-lp`, ...), a glob or `*`.  `loop=BYTES`, where the audit measured it, is the
         scratch the kernel may move per iteration of its innermost loop with any (its
         cost, inputs.isa.ScratchCost): a spill that moves into a loop grows it even when
         its bytes do not change.  `#` starts a comment line.
         `KERNEL * unreadable # reason` accepts a kernel zeinspect cannot read (judge.coverage);
         `KERNEL TARGETS intent # reason` one whose build may miss the gate's intent rules
         on those targets (judge.paths).
tab      `GROUP<TAB>PRIVATE<TAB>SPILL<TAB>KERNEL-ID` (the SYCL project's audit in seed 003),
         every target.  GROUP is informational.

The dialect of a file is the dialect of its first entry; mixing them is an error.  A file
with no entry yet is tab-separated when a comment line holds four tab-separated headings
(or the name ends in .tsv), native otherwise.  The first entry that matches a
(kernel, target) is the one that applies.
"""

from __future__ import annotations

import enum
import fnmatch
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import names
from ..errors import InputError
from ..model import Compiler, KernelReport, is_ip


class Dialect(enum.StrEnum):
    NATIVE = "native"
    """KERNEL TARGETS PRIVATE SPILL  # reason"""
    TAB = "tab"
    """GROUP<TAB>PRIVATE<TAB>SPILL<TAB>KERNEL-ID, the SYCL project's of seed 003"""


NATIVE = Dialect.NATIVE
TAB = Dialect.TAB
_NUMBER = re.compile(r"^\d+$")
_LOOP = re.compile(r"^loop=(\d+)$")
MAX_RATCHET_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    lineno: int
    kernel: str
    targets: str
    private: int
    spill: int
    reason: str | None = None
    group: str | None = None
    loop: int | None = None
    """Scratch bytes the kernel may move per iteration of its loops (`loop=BYTES`); None: not
    recorded, its loop traffic is not judged."""


@dataclass(frozen=True)
class Unreadable:
    """`KERNEL  *  unreadable  # reason`: a declared kernel zeinspect cannot read, accepted with
    its reason (judge.coverage counts it excluded instead of unread)."""

    lineno: int
    kernel: str
    reason: str


@dataclass(frozen=True)
class IntentWaiver:
    """`KERNEL  TARGETS  intent  # reason`: a kernel whose build may miss the gate's intent rules
    (judge.paths) on those targets, accepted with its reason."""

    lineno: int
    kernel: str
    targets: str
    reason: str


@dataclass
class Ratchet:
    path: str
    dialect: Dialect
    lines: list[str] = field(default_factory=list)
    """The file's lines with their line endings, exactly as read."""
    entries: list[Entry] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    intent: list[IntentWaiver] = field(default_factory=list)

    def render(self) -> str:
        return "".join(self.lines)

    def accepts(self, kernel: str) -> str | None:
        """The reason of the first `unreadable` line that names this kernel, or None."""
        return next((u.reason for u in self.unreadable if kernel_matches(u.kernel, kernel)), None)


def _split_comment(line: str) -> tuple[str, str | None]:
    body, sep, comment = line.partition("#")
    return body, (comment.strip() if sep else None)


def parse(text: str, path: str, dialect: Dialect | None = None) -> Ratchet:
    """Parse ratchet text; InputError names the file, the line and what is wrong."""
    lines = text.splitlines(keepends=True)
    ratchet = Ratchet(path=path, dialect=dialect or NATIVE, lines=lines)
    decided = dialect is not None
    for lineno, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "\x00" in line:
            raise InputError(f"line {lineno}: contains a NUL byte", path=path)
        if _is_unreadable(line):
            ratchet.unreadable.append(_unreadable(line, lineno, path))
            continue
        if _is_waiver(line):
            ratchet.intent.append(_waiver(line, lineno, path))
            continue
        kind = _line_dialect(line)
        if kind is None:
            raise InputError(f"line {lineno}: {_what_is_wrong(line)}", path=path)
        if not decided:
            ratchet.dialect, decided = kind, True
        elif kind != ratchet.dialect:
            raise InputError(f"line {lineno}: a {kind} entry in a {ratchet.dialect} ratchet file "
                             "(the two dialects cannot be mixed)", path=path)
        ratchet.entries.append(_entry(line, lineno, kind))
    if not decided and _looks_tabbed(lines, path):
        # No entry yet: a tab-separated header comment, or a .tsv name, says which dialect to write.
        ratchet.dialect = TAB
    return ratchet


UNREADABLE = "unreadable"


def _is_unreadable(line: str) -> bool:
    words = _split_comment(line)[0].split()
    return len(words) == 3 and words[2] == UNREADABLE


def _unreadable(line: str, lineno: int, path: str) -> Unreadable:
    body, reason = _split_comment(line)
    kernel, targets, _ = body.split()
    if targets != "*":
        raise InputError(f"line {lineno}: an unreadable line is for every target (`*`), not {targets!r}: a kernel "
                         "zeinspect cannot read is unread on all of them", path=path)
    if not reason:
        raise InputError(f"line {lineno}: an unreadable line needs its reason after '#'", path=path)
    return Unreadable(lineno, kernel, reason)


INTENT = "intent"


def _is_waiver(line: str) -> bool:
    words = _split_comment(line)[0].split()
    return len(words) == 3 and words[2] == INTENT


def _waiver(line: str, lineno: int, path: str) -> IntentWaiver:
    body, reason = _split_comment(line)
    kernel, targets, _ = body.split()
    if not reason:
        raise InputError(f"line {lineno}: an intent line needs its reason after '#'", path=path)
    return IntentWaiver(lineno, kernel, targets, reason)


def _looks_tabbed(lines: list[str], path: str) -> bool:
    if path.endswith(".tsv"):
        return True
    for raw in lines:
        text = raw.strip()
        if text.startswith("#") and len([f for f in text.lstrip("#").split("\t") if f.strip()]) == 4:
            return True
    return False


def _line_dialect(line: str) -> Dialect | None:
    fields = line.split("\t")
    if len(fields) == 4 and _NUMBER.match(fields[1].strip()) and _NUMBER.match(fields[2].strip()) \
            and fields[0].strip() and fields[3].strip():
        return TAB
    body, _ = _split_comment(line)
    words = body.split()
    if len(words) in (4, 5) and _NUMBER.match(words[2]) and _NUMBER.match(words[3]) and \
            (len(words) == 4 or _LOOP.match(words[4])):
        return NATIVE
    return None


def _what_is_wrong(line: str) -> str:
    body, _ = _split_comment(line)
    words = body.split()
    if "\t" in line and len(line.split("\t")) == 4:
        return "tab entry needs GROUP<TAB>PRIVATE<TAB>SPILL<TAB>KERNEL-ID with whole numbers of bytes"
    if len(words) < 4:
        return f"expected KERNEL TARGETS PRIVATE_BYTES SPILL_BYTES, found {len(words)} field(s)"
    if len(words) == 5 and _NUMBER.match(words[2]) and _NUMBER.match(words[3]):
        return f"the fifth field must be loop=BYTES (scratch bytes per loop iteration), not {words[4]!r}"[:200]
    if len(words) > 4:
        return f"expected 4 fields (and an optional loop=BYTES) before an optional '# reason', found {len(words)}"
    bad = words[2] if not _NUMBER.match(words[2]) else words[3]
    return f"byte counts must be whole non-negative numbers, not {bad!r}"[:200]


def _entry(line: str, lineno: int, kind: str) -> Entry:
    if kind == TAB:
        group, private, spill, kernel = (f.strip() for f in line.split("\t"))
        return Entry(lineno, kernel, "*", int(private), int(spill), group=group)
    body, reason = _split_comment(line)
    kernel, targets, private, spill, *rest = body.split()
    loop = _LOOP.match(rest[0]) if rest else None
    return Entry(lineno, kernel, targets, int(private), int(spill), reason=reason or None,
                 loop=int(loop.group(1)) if loop else None)


def load(path: str | Path, *, must_exist: bool = True) -> Ratchet:
    from ..inputs.files import read_file

    if not must_exist and not os.path.lexists(path):
        return Ratchet(path=str(path), dialect=NATIVE)
    data = read_file(path, "ratchet file", MAX_RATCHET_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(f"line {line}: not UTF-8 text", path=str(path)) from None
    return parse(text, str(path))


# -- matching ----------------------------------------------------------------------------

def kernel_matches(pattern: str, kernel: str) -> bool:
    """A ratchet line's KERNEL against a kernel: the symbol, its demangled or its short name."""
    return names.matches(pattern, kernel)


def targets_match(spec: str, report: KernelReport, compilers: list[Compiler]) -> bool:
    from ..toolchain.targets import NAMED_SETS, ip_in_family

    if spec == "*" or spec == report.target or fnmatch.fnmatchcase(report.target, spec):
        return True
    if report.ip and is_ip(spec):
        return spec == report.ip
    if spec in NAMED_SETS:
        return report.target in NAMED_SETS[spec]
    if report.ip:
        return ip_in_family(report.ip, spec, compilers)
    return False


def find_entry(ratchet: Ratchet, report: KernelReport, compilers: list[Compiler]) -> Entry | None:
    for entry in ratchet.entries:
        if kernel_matches(entry.kernel, report.kernel) and targets_match(entry.targets, report, compilers):
            return entry
    return None


def find_waiver(ratchet: Ratchet, report: KernelReport, compilers: list[Compiler]) -> IntentWaiver | None:
    return next((w for w in ratchet.intent if kernel_matches(w.kernel, report.kernel)
                 and targets_match(w.targets, report, compilers)), None)


# -- rewriting ---------------------------------------------------------------------------

def _newline(ratchet: Ratchet) -> str:
    return "\r\n" if any(line.endswith("\r\n") for line in ratchet.lines) else "\n"


def with_figures(ratchet: Ratchet, entry: Entry, private: int, spill: int, loop: int | None = None) -> None:
    """Rewrite one entry's numbers in place, keeping every other byte of its line; `loop`
    (native dialect) is written when given, and a recorded one kept when not."""
    index = entry.lineno - 1
    raw = ratchet.lines[index]
    ending = raw[len(raw.rstrip("\r\n")):]
    line = raw.rstrip("\r\n")
    if ratchet.dialect == TAB:
        fields = line.split("\t")
        fields[1] = fields[1].replace(fields[1].strip(), str(private), 1)
        fields[2] = fields[2].replace(fields[2].strip(), str(spill), 1)
        new = "\t".join(fields)
    else:
        body, sep, comment = line.partition("#")
        tokens = re.split(r"(\s+)", body)
        words = [i for i, t in enumerate(tokens) if t and not t.isspace()]
        tokens[words[2]], tokens[words[3]] = str(private), str(spill)
        if loop is not None and len(words) > 4:
            tokens[words[4]] = f"loop={loop}"
        elif loop is not None:
            tokens.insert(words[3] + 1, f"  loop={loop}")
        new = "".join(tokens) + sep + comment
    ratchet.lines[index] = new + ending
    loop = entry.loop if loop is None or ratchet.dialect == TAB else loop
    ratchet.entries = [replace(e, private=private, spill=spill, loop=loop) if e is entry else e
                       for e in ratchet.entries]


def remove(ratchet: Ratchet, entries: list[Entry]) -> None:
    """Drop entry lines (and nothing else); later entries keep their own line numbers updated."""
    doomed = {e.lineno - 1 for e in entries}
    ratchet.lines = [line for i, line in enumerate(ratchet.lines) if i not in doomed]
    ratchet.entries = parse(ratchet.render(), ratchet.path, ratchet.dialect).entries


def append(ratchet: Ratchet, kernel: str, targets: str, private: int, spill: int, reason: str, group: str,
           loop: int | None = None) -> None:
    if any(ch.isspace() for ch in kernel) or "#" in kernel:
        raise InputError(f"kernel name {kernel!r} cannot be written to a ratchet file"[:200], path=ratchet.path)
    nl = _newline(ratchet)
    if ratchet.lines and not ratchet.lines[-1].endswith(("\n", "\r")):
        ratchet.lines[-1] += nl
    if ratchet.dialect == TAB:
        line = f"{group}\t{private}\t{spill}\t{kernel}"
    else:
        cost = f"  loop={loop}" if loop is not None else ""
        line = f"{kernel}  {targets}  {private}  {spill}{cost}  # {reason}"
    ratchet.lines.append(line + nl)
    ratchet.entries = parse(ratchet.render(), ratchet.path, ratchet.dialect).entries
