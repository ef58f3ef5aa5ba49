"""A Triton compile's result kept in the build cache, so that a warm screen loads no module.

Screening a library's captured launches warm spent most of its time loading each kernel's
module once per group of targets (to rebuild Triton's JIT function and its key), not in any
compile.  The front end's result (TTGIR, SPIR-V, the metadata the report keeps, the request
as launched) is a function of:

* the request (`TritonKernel`: file, kernel, signature, constexprs, launch options, attrs);
* the target as Triton sees it (its capabilities and name, triton.offline.compiler.gpu_target);
* the code the module can run at import and at compile: every `.py` file of the kernel's
  package (its top package, found as the loader finds it), or of its folder for a file that
  is not in a package, by content, so a helper edited in another file is a new key, and a
  module global chosen by device is computed anew per target on a miss;
* the installed Triton and torch (their distributions' names and versions), zeinspect's own
  version, and every TRITON_* variable of the environment (Triton's knobs change its output)
  except those that only say where Triton keeps its files (WHERE_FILES_GO).

What is not in the key: packages other than the kernel's own, torch and Triton (a module that
reads another library's constant at import sees a change there only with a cold cache,
`--no-cache`).  A request that does not survive its JSON form exactly is never cached.

An entry holds the metadata, the request, the digests of the TTGIR and the SPIR-V, and the
TTGIR itself (compressed with the entry) unless a file holds it; never the SPIR-V (issue 62: a
cache no larger than the Triton cache it screens).  A single kernel's screen keeps every build's
TTGIR and SPIR-V as files (triton-artifacts/, the files its reports name: backend.artifact_stem,
from the digest); a screen of many only where they are wanted (triton.probes.audit.files_wanted).
An entry whose build's files are kept drops its TTGIR (in_files: each artifact stored once).  A
SPIR-V no file holds is nowhere, and a warm screen needs none: its compiles are found in the
cache by the digest (inputs.Input.digest), and only where one is not there (another target of
its group, a trimmed entry) or its files are wanted is the front end run again
(triton.probes.audit.build_many).  A file that is gone or changed is a miss where it is needed.
A staged build (the SLM staging pass's TTGIR lowered again, backend.compile_ttgir) is kept the
same way, keyed by its front end's entry and the staged TTGIR, which the pass makes again from
the front end's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from ... import __version__
from ...cache import BuildCache, make_key
from ...fileio import changed_lately
from ..load import loader
from ..model.kernel import IR_SUFFIX, TritonKernel

KIND = "triton-front-end/3"
"""/2: the TTGIR and SPIR-V are the artifacts' files, named by the entry (not in it); /3: the TTGIR
in the entry, the SPIR-V by its digest only."""


def request_json(kernel: TritonKernel) -> dict:
    d = dataclasses.asdict(kernel)
    d["options_given"] = sorted(kernel.options_given)
    return d


def request_from_json(d: dict) -> TritonKernel:
    """The request back, in the form its makers give it (triton.sources.launches.read_launches: attrs as
    (path tuple, value); TritonKernel.with_options: options as (name, value) pairs)."""
    return TritonKernel(**{**d, "options_given": frozenset(d["options_given"]),
                           "attrs": tuple((tuple(path), value) for path, value in d["attrs"]),
                           "options": tuple((name, value) for name, value in d["options"])})


def _same_after_json(kernel: TritonKernel) -> bool:
    try:
        return request_from_json(json.loads(json.dumps(request_json(kernel)))) == kernel
    except (TypeError, ValueError):
        return False


def source_digest(path: str) -> str:
    """The content of every `.py` file the module at `path` may import from its own package."""
    root, top = loader.package_root(Path(path).resolve())
    files = sorted((root / top).rglob("*.py")) if top else sorted(root.glob("*.py"))
    stats = tuple((str(f), *_stat(f)) for f in files)
    if any(changed_lately(mtime) for _, mtime, _ in stats):  # hashed afresh, not from the memo
        return _hash(stats)
    return _digest(stats)


def _stat(f: Path) -> tuple[int, int]:
    try:
        st = f.stat()
    except OSError:
        return -1, -1
    return st.st_mtime_ns, st.st_size


@lru_cache(maxsize=64)
def _digest(stats: tuple) -> str:
    """Hashed once per process and state of the files (their stats are the memo's key)."""
    return _hash(stats)


def _hash(stats: tuple) -> str:
    h = hashlib.sha256()
    for name, _, _ in stats:
        h.update(name.encode() + b"\0")
        try:
            h.update(Path(name).read_bytes())
        except OSError:
            h.update(b"\xff unreadable")
        h.update(b"\0")
    return h.hexdigest()


DISTRIBUTIONS = ("triton", "triton-xpu", "pytorch-triton-xpu", "pytorch-triton", "torch")
"""The names Triton ships under (PyPI's, PyTorch's XPU and CUDA builds) and torch's."""


@lru_cache(maxsize=1)
def installed() -> tuple[str, ...]:
    """The distributions whose code decides a Triton compile here, with their versions (looked
    up by name: scanning every installed distribution cost a warm screen 0.14 s)."""
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for name in DISTRIBUTIONS:
        try:
            found.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            pass
    return tuple(found)


WHERE_FILES_GO = ("TRITON_CACHE_DIR", "TRITON_HOME")
"""Triton's variables that say where it keeps files, not what it builds: the pytest plugin and
`--run` point TRITON_CACHE_DIR at a new temporary folder each run, which in the key would make
every warm result of theirs a miss."""


def key(kernel: TritonKernel, caps: dict, target_name: str) -> str | None:
    """The cache key of one front-end compile, or None when it must not be cached.  A kernel
    built from a TTIR file (a cache entry's, or one torch.compile generated in a capture: its
    folder is new each run) is keyed by the TTIR's content, not where the file is."""
    if not _same_after_json(kernel) or not Path(kernel.file).is_file():
        return None
    request = request_json(kernel)
    if kernel.file.endswith(IR_SUFFIX):
        try:
            source = hashlib.sha256(Path(kernel.file).read_bytes()).hexdigest()
        except OSError:
            return None
        request["file"] = ""
    else:
        source = source_digest(kernel.file)
    return make_key(kind=KIND, zeinspect=__version__, request=request, caps=caps, target=target_name,
                    source=source, installed=installed(),
                    environment=sorted((k, v) for k, v in os.environ.items()
                                       if k.startswith("TRITON_") and k not in WHERE_FILES_GO))


def staged_key(front: str | None, ttgir: str) -> str | None:
    """The key of a staged build: its front end's entry and the staged TTGIR it lowers."""
    if front is None:
        return None
    return make_key(kind=f"{KIND}/staged", front=front, ttgir=hashlib.sha256(ttgir.encode()).hexdigest())


class Kept(NamedTuple):
    ttgir: str | None
    """None: not in the entry (its file holds it: backend.build reads it there)."""
    ttgir_sha256: str
    spirv_sha256: str
    meta: dict
    """Triton's metadata, with the notes and the request as launched (under "kernel")."""


def get(cache: BuildCache | None, k: str | None) -> Kept | None:
    """A kept compile (a staged build's TTGIR is not kept: the pass makes it again)."""
    if cache is None or k is None:
        return None
    hit = cache.get(k)
    if hit is None:
        return None
    meta, payload = hit
    try:
        launched = request_from_json(meta["kernel"])
        digests, notes, metadata = (meta["ttgir_sha256"], meta["spirv_sha256"]), list(meta["notes"]), \
            dict(meta["metadata"])
    except (KeyError, TypeError, ValueError):
        return None
    if not all(isinstance(d, str) for d in digests):
        return None
    ttgir = payload.decode("utf-8", "replace") if payload else None
    return Kept(ttgir, *digests, {**metadata, "notes": notes, "kernel": launched})


def put(cache: BuildCache | None, k: str | None, meta: dict, ttgir: str, spirv_digest: str) -> None:
    """Keep a compile: its metadata and request, the digests of its TTGIR and SPIR-V, and its TTGIR
    itself (until a file holds it: in_files); a staged build's is given empty (the staging pass
    makes it again from the front end's)."""
    launched = meta.get("kernel")
    if cache is None or k is None or not isinstance(launched, TritonKernel) or not _same_after_json(launched):
        return
    rest = {n: v for n, v in meta.items() if n not in ("kernel", "notes")}
    try:
        json.dumps(rest)
    except (TypeError, ValueError):
        return
    cache.put(k, {"ttgir_sha256": hashlib.sha256(ttgir.encode()).hexdigest(), "spirv_sha256": spirv_digest,
                  "metadata": rest, "notes": list(meta.get("notes", [])), "kernel": request_json(launched)},
              ttgir.encode())


def in_files(cache: BuildCache | None, k: str | None) -> None:
    """An entry's TTGIR is now in its build's file: the entry keeps it no more (stored once).  Not
    with a shared store, whose entries serve machines that do not have the file."""
    if cache is None or cache.store is not None or k is None:
        return
    hit = cache.get(k)
    if hit is not None and hit[1]:
        cache.put(k, hit[0], b"")
