"""The strict YAML reader builds what PyYAML's safe loader builds, value for value and type for
type (inputs.strict_yaml builds documents from libyaml's events itself, for speed)."""

from __future__ import annotations

import datetime
import io
import random
from pathlib import Path

import pytest
import yaml
from elftools.elf.elffile import ELFFile

from zeinspect.errors import FormatError
from zeinspect.inputs.strict_yaml import load_yaml_strictly

CORPUS = Path(__file__).resolve().parents[2] / "fuzz" / "corpus"


def _typed(value):
    """A value with the type of every part spelled out: 1 == True == 1.0 in Python, not here."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple, set)):
        return (type(value).__name__, [_typed(v) for v in value])
    if isinstance(value, float) and value != value:
        return ("float", "nan")
    return (type(value).__name__, value)


def _same_as_pyyaml(text: str | bytes) -> None:
    """The same value as PyYAML's safe load, or a FormatError where PyYAML refuses the document."""
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except (yaml.YAMLError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        # PyYAML's safe constructors raise the last four on a value their tag cannot hold
        with pytest.raises(FormatError):
            load_yaml_strictly(text, "doc")
        return
    assert _typed(load_yaml_strictly(text, "doc")) == _typed(expected), text


def _documents() -> list[tuple[str, bytes]]:
    """Every YAML document of the fuzz corpus: .ze_info of both IGC generations (alone, and in
    their zebins), gate configurations and shapes files."""
    out = [(f"{kind}/{p.name}", p.read_bytes()) for kind in ("zeinfo", "gate", "shapes")
           for p in sorted((CORPUS / kind).iterdir())]
    for p in sorted((CORPUS / "zebin").iterdir()):
        try:
            section = ELFFile(io.BytesIO(p.read_bytes())).get_section_by_name(".ze_info")
        except Exception:  # noqa: BLE001 - a damaged zebin of the corpus has no document to compare
            continue
        if section is not None:
            out.append((f"zebin/{p.name}", section.data()))
    return out


@pytest.mark.parametrize("name, text", _documents(), ids=[n for n, _ in _documents()])
def test_real_documents_read_as_pyyaml_reads_them(name, text):
    _same_as_pyyaml(text)


SCALARS = ["0", "-0", "+5", "007", "010", "0x1F", "0o17", "0b101", "1_000", "190:20:30", "1.5", "-.5", "1e3", "1.0e+3",
           ".inf", "-.Inf", ".nan", "inf", "NaN", "yes", "No", "ON", "off", "y", "n", "true", "False", "TRUE", "null",
           "Null", "~", "", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "simd_size", "_x", "x_1", "'quoted 1'",
           '"2"', "'true'", "|\n  block 1\n", ">\n  folded\n", "!!str 12", "!!int '12'", "!!float 3", "! 12",
           "!!binary aGVsbG8=", "!!null ''", "!!bool yes", "-", "a b", "=", "::", "é", "12abc", "0.", "1__2"]


@pytest.mark.parametrize("scalar", SCALARS)
def test_every_kind_of_scalar_reads_as_pyyaml_reads_it(scalar):
    """As a value, as a key and in a flow sequence (a block scalar as a value only)."""
    if "\n" in scalar:
        _same_as_pyyaml(f"key: {scalar}")
        return
    _same_as_pyyaml(f"key: {scalar}\n{scalar}: 1\nlist: [{scalar}]\n")
    _same_as_pyyaml(f"- {scalar}\n")


@pytest.mark.parametrize("text", [
    "", "---\n", "--- 1\n", "[1, [2, [3, {a: b}]]]", "{a: {b: {c: [1, 2]}}}", "a: 1\na: 2\n", "? complex\n: 1\n",
    "- !!set {a, b}\n", "!!omap [a: 1, b: 2]\n", "!!pairs [a: 1, a: 2]\n", "base: {a: 1}\nderived:\n  <<: {b: 2}\n",
    "a: {<<: [{x: 1}, {y: 2}]}\n", "!!map {a: 1}\n", "!!seq [1]\n", "~: 1\n1: x\n1.5: y\ntrue: z\n",
])
def test_documents_of_every_shape_read_as_pyyaml_reads_them(text):
    _same_as_pyyaml(text)


def _random_value(rng: random.Random, depth: int = 0):
    leaves = [lambda: rng.randint(-10**12, 10**12), lambda: rng.random() * 10 ** rng.randint(-5, 5),
              lambda: rng.choice([True, False, None]), lambda: rng.choice(SCALARS),
              lambda: "".join(rng.choice("ab_:-# '\"\n\t01é*&!%@`") for _ in range(rng.randint(0, 8))),
              lambda: datetime.date(2000 + rng.randint(0, 30), rng.randint(1, 12), rng.randint(1, 28))]
    if depth < 4 and rng.random() < 0.4:
        if rng.random() < 0.5:
            return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
        return {rng.choice([rng.choice(SCALARS), rng.randint(0, 99), None, True, "k" * rng.randint(0, 3)]):
                _random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return rng.choice(leaves)()


@pytest.mark.parametrize("seed", range(40))
def test_random_documents_read_as_pyyaml_reads_them(seed):
    """Documents PyYAML writes from random values, in block and flow styles."""
    rng = random.Random(seed)
    value = {f"k{n}": _random_value(rng) for n in range(8)}
    for flow in (False, True, None):
        _same_as_pyyaml(yaml.safe_dump(value, default_flow_style=flow, allow_unicode=rng.random() < 0.5))


@pytest.mark.parametrize("text, problem", [
    ("a: &x [1]\nb: *x\n", "aliases"),
    ("a: [1, 2\n", "not valid YAML at line"),
    ("a: 1\n--- \nb: 2\n", "not valid YAML"),
    ("? [1, 2]\n: x\n", "not valid YAML"),
    ("? {a: 1}\n: x\n", "not valid YAML"),
    ("a: !!python/object:os.system x\n", "not valid YAML"),
    ("a: !!int x\n", "cannot hold"),
    # Found by a review's differential fuzzing (2026-12-07): a repeated anchor, which PyYAML's
    # composer refuses; constructor errors before a later syntax error or alias, which PyYAML
    # reports in its own order (its safe constructors' own KeyError, IndexError, AttributeError).
    ("a: &x 1\nb: &x 2\n", "not valid YAML"),
    ("- &a 1\n- &a 2\n", "not valid YAML"),
    ("&a [&a 1]", "not valid YAML"),
    ("- !!bool x\n- [", "not valid YAML at line"),
    ("!!int ''\n--- 2\n", "not valid YAML"),
    ("[!!timestamp x, ]]", "not valid YAML"),
    ("a: !!int x\nb: *y\n", "aliases"),
    ("a: !!bool x\nb: &y 1\nc: *y\n", "aliases"),
    ("a: !!bool maybe\n", "cannot hold"),
    ("a: !!float ''\n", "cannot hold"),
    ("a: !!timestamp '2001-12-14 1:2:3'\n", "cannot hold"),
    (b"a: \xff\xfe\n", "not"),
])
def test_what_pyyaml_refuses_or_zeinspect_refuses_is_a_format_error(text, problem):
    with pytest.raises(FormatError, match=problem):
        load_yaml_strictly(text, "doc")
