#!/usr/bin/env python3
"""Run one fuzz target under atheris (coverage-guided, libFuzzer options pass through).

    .venv/bin/python scripts/fuzz.py zebin -runs=1000000 /tmp/work tests/fuzz/corpus/zebin

New inputs go into the first corpus folder; give a scratch folder first and the committed
seed corpus second.  A finding (any exception but zeinspect's own error, a timeout, an
out-of-memory) stops the run with a non-zero exit and a crash-* file.
"""

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "fuzz"))

with atheris.instrument_imports(include=["zeinspect"]):
    import zeinspect.inputs  # noqa: F401 - instrumented for coverage
    import zeinspect.inputs.offload  # noqa: F401
    import zeinspect.inputs.packages  # noqa: F401
    import zeinspect.judge.gate  # noqa: F401
    import zeinspect.judge.ratchet  # noqa: F401
    import zeinspect.judge.shapes_file  # noqa: F401
    import zeinspect.levers.sub_group  # noqa: F401
    import zeinspect.probes.logs  # noqa: F401
    import zeinspect.toolchain.disasm  # noqa: F401

import targets  # noqa: E402


def main() -> None:
    name = sys.argv[1]
    if name not in targets.TARGETS:
        raise SystemExit(f"unknown fuzz target {name!r}: {', '.join(targets.TARGETS)}")
    atheris.Setup([sys.argv[0], *sys.argv[2:]], lambda data: targets.run_one(name, data))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
