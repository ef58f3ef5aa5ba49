"""The zebin handed to `ocloc disasm` (toolchain.disasm.short_names): its kernels' sections
renamed so that ocloc can name a file after each, everything else as it was.  The fixtures are
real zebins of the fuzz corpus (ocloc's own output)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from zeinspect.errors import FormatError
from zeinspect.inputs.zebin import _plain_zebin_sections, read_zebin
from zeinspect.toolchain.disasm import short_names

CORPUS = Path(__file__).resolve().parents[2] / "fuzz" / "corpus" / "zebin"


@pytest.mark.parametrize("name", ["new-clean", "new-sg32", "old-sg32"])
def test_kernel_sections_are_renamed_and_nothing_else_changes(name: str) -> None:
    original = (CORPUS / name).read_bytes()
    renamed, kernels = short_names(original)
    before, after = _plain_zebin_sections(original, name), _plain_zebin_sections(renamed, name)
    assert before is not None and after is not None
    assert kernels == [n.removeprefix(".text.") for n, _, _ in before if n.startswith(".text.")] and kernels
    expected = {f".text.{k}": f".text.k{i}" for i, k in enumerate(kernels)}
    expected.update({f".rel.text.{k}": f".rel.text.k{i}" for i, k in enumerate(kernels)})
    # Every section as it was, under its new name; one more at the end: the new names.
    assert after[-1][0] == ".shstrtab" and len(after) == len(before) + 1
    for (old_name, old_type, old_data), (new_name, new_type, new_data) in zip(before, after[:-1], strict=True):
        assert new_name == expected.get(old_name, old_name)
        assert (new_type, new_data) == (old_type, old_data), old_name
    # What zeinspect reads from it is unchanged (.ze_info), but the code size, which it finds by
    # the section's name: the renamed zebin is for ocloc only.
    assert [replace(k, code_bytes=None) for k in read_zebin(renamed).kernels] == \
        [replace(k, code_bytes=None) for k in read_zebin(original).kernels]


def test_what_is_not_a_zebin_is_said() -> None:
    with pytest.raises(FormatError, match="not a 64-bit"):
        short_names(b"\x7fELF" + b"\0" * 60)
    header = bytearray((CORPUS / "new-clean").read_bytes()[:64])
    with pytest.raises(FormatError, match="section headers"):
        short_names(bytes(header))
