"""Dumping compiles in the build cache: IGC's ISA of a build, kept with the zebin and log of
the same compile (probes.explain makes them; `shapes`, `fix --cost` and `--cost` read them).

A dumping compile is the plain compile with IGC's shader dumps on, and nothing else: its zebin
and its log are the plain compile's (checked byte for byte on IGC 1.0.12504 and 2.40, OpenCL
C's SPIR-V on Xe-LP, Xe-HPG and Xe2; tests/integration/probes/test_dumps.py keeps checking
it), and one that does not build fails as the plain compile does, with its exit and its log
(but for the temporary paths of ocloc's framing line "Command was:", which no report reads;
checked on a scratch overflow on Xe2, IGC 2.40).  So a plain build the cache lacks is
answered from the dumping compile of the same module, options, IP, compiler and environment
when the cache holds one (probes.executor.CachedExecutor): a search that will read the ISA
of its builds anyway makes each build once, as a dumping compile, instead of twice.  Only
SPIR-V builds are answered so: explain builds OpenCL C with `-g`, which the audit does not.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import TYPE_CHECKING

from ..cache import BuildCache, make_key

if TYPE_CHECKING:  # imported where a dump is read: a plain build's lookup that finds none needs none
    from ..toolchain.shader_dump import DumpedBuild

DUMP_KIND = "isa-dump/5"
"""/5: the compile's seconds are kept (a plain build answered from it keeps its compile time)."""


def build_fields(compiler: str, source_digest: str, spirv: bool, ip: str, options: str, internal: str,
                 environment: tuple[tuple[str, str], ...]) -> dict:
    """What a dumping compile's result depends on: the key of its cache entry, and of what is
    derived from it (probes.explain.scratch_costs)."""
    return {"compiler": compiler, "source": source_digest, "spirv": spirv, "ip": ip, "options": options,
            "internal": internal, "environment": [list(kv) for kv in environment]}


def read_dumped(cache: BuildCache, fields: dict, *, local_only: bool = False) -> DumpedBuild | None:
    """The dumping compile of `fields` the cache holds, or None.  `local_only`: this machine's
    cache alone (a plain build's lookup of a dump is a bonus: it asks no shared store)."""
    key = make_key(kind=DUMP_KIND, **fields)
    hit = cache.get_local(key) if local_only else cache.get(key)
    if hit is None:
        return None
    from ..toolchain.shader_dump import DumpedBuild, IsaDump

    meta, payload = hit
    body = json.loads(zlib.decompress(payload))
    return DumpedBuild(tuple(IsaDump(f, t) for f, t in body["dumps"]), meta["log"], meta["failure"],
                       base64.b64decode(body["binary"]) if body["binary"] is not None else None,
                       meta.get("exit_code", 0), float(meta.get("seconds") or 0.0))


def keep_dumped(cache: BuildCache, fields: dict, built: DumpedBuild) -> None:
    """Store a dumping compile; a crash or a hang may not happen again: never stored."""
    if built.failure is not None:
        return
    body = {"dumps": [[d.file, d.text] for d in built.dumps],
            "binary": base64.b64encode(built.binary).decode() if built.binary is not None else None}
    cache.put(make_key(kind=DUMP_KIND, **fields), {"log": built.log, "failure": built.failure,
                                                   "exit_code": built.exit_code, "seconds": round(built.seconds, 3)},
              zlib.compress(json.dumps(body).encode(), 1))
