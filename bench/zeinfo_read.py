#!/usr/bin/env python3
"""Reading a compiler's `.ze_info`: zeinspect's reader against PyYAML's safe load of the same text.

A cold audit reads one `.ze_info` per kernel and target, and a read of a shipped library's
native images is nothing else.  The documents are real: oneMKL DFT's first `--images` SPIR-V
images (the package index's wheel, downloaded with pip when this runs, as bench/sycl_library.py
does) compiled here by ocloc for `--target`.  Each reader reads every document `--rounds` times;
the figure is milliseconds per document, the best of seven passes in which the readers take
turns, and both readers must give the same values.  Usage:
  .venv/bin/python bench/zeinfo_read.py [--images 40] [--target bmg-g21] [--rounds 20]
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import yaml  # noqa: E402
from elftools.elf.elffile import ELFFile  # noqa: E402
from record import write  # noqa: E402
from sycl_library import library  # noqa: E402

from zeinspect.inputs.offload import find_images  # noqa: E402
from zeinspect.inputs.strict_yaml import load_yaml_strictly  # noqa: E402
from zeinspect.toolchain.compilers import discover  # noqa: E402


def documents(count: int, target: str) -> list[bytes]:
    lib = library("dft", "2026.2.0")
    compiler = discover()[0]
    images = [i for i in find_images(lib.read_bytes(), str(lib)) if i.kind == "spirv" and not i.skipped][:count]
    out = []
    with tempfile.TemporaryDirectory(prefix="zeinspect-bench-zeinfo-") as name:
        tmp = Path(name)
        for n, image in enumerate(images):
            (tmp / f"{n}.spv").write_bytes(image.data)
            subprocess.run([compiler.path, "compile", "-spirv_input", "-file", f"{n}.spv", "-device", target,
                            "-output", str(n), "-q"], cwd=tmp, capture_output=True)
            built = next(tmp.glob(f"{n}_*.bin"), None)
            if built is not None:
                section = ELFFile(io.BytesIO(built.read_bytes())).get_section_by_name(".ze_info")
                if section is not None:
                    out.append(section.data())
    return out


def per_document_ms(readers: list, docs: list[bytes], rounds: int, passes: int = 7) -> list[float]:
    """Each reader's best time per document over `passes`, the readers taking turns within each
    pass (this machine's speed drifts within a minute: turns keep the comparison fair)."""
    best = [float("inf")] * len(readers)
    for _ in range(passes):
        for n, read in enumerate(readers):
            start = time.perf_counter()
            for _ in range(rounds):
                for doc in docs:
                    read(doc)
            best[n] = min(best[n], time.perf_counter() - start)
    return [b / (rounds * len(docs)) * 1000 for b in best]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=40)
    ap.add_argument("--target", default="bmg-g21")
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    docs = documents(args.images, args.target)
    if not docs:
        raise SystemExit("no .ze_info was built")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    assert all(load_yaml_strictly(d, "doc") == yaml.load(d, Loader=loader) for d in docs)
    pyyaml, ours = per_document_ms([lambda d: yaml.load(d, Loader=loader), lambda d: load_yaml_strictly(d, "doc")],
                                   docs, args.rounds)
    sizes = sorted(len(d) for d in docs)
    rows = [{"measure": "PyYAML's safe load (libyaml's parser, PyYAML's constructors), ms a document",
             "value": round(pyyaml, 3)},
            {"measure": "zeinspect's reader (inputs/strict_yaml.py), ms a document", "value": round(ours, 3),
             "speed-up": round(pyyaml / ours, 2)}]
    print(f"{len(docs)} .ze_info documents of oneMKL DFT for {args.target} ({sizes[0]}-{sizes[-1]} bytes): "
          f"PyYAML's safe load {pyyaml:.3f} ms each, zeinspect's {ours:.3f} ms ({pyyaml / ours:.2f}x)")
    write("zeinfo_read", "Reading .ze_info", rows,
          note=f"{len(docs)} documents of oneMKL DFT built for {args.target}, {sizes[0]}-{sizes[-1]} bytes "
               f"(median {sizes[len(sizes) // 2]}); the best of seven passes of {args.rounds} rounds each, "
               "the readers taking turns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
