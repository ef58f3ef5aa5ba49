"""The scratch cost of kernels read from native images (zebins, fat binaries): from the code the
image carries, disassembled by `ocloc disasm` (toolchain.disasm) and read by
inputs.isa.read_disasm.  A shipped library has no IGC dump of its build; its code still says
where each scratch message sits and in which loop.  Cached like a compile: by the image's
content, the disassembling compiler, the device and the kernels asked for."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from ..cache import BuildCache, make_key
from ..errors import FormatError, ToolchainError
from ..inputs import Input
from ..inputs.fatbin import read_members
from ..inputs.isa import read_disasm
from ..inputs.kinds import InputKind
from ..inputs.zebin import is_zebin
from ..model import Compiler
from ..settings import Settings
from ..toolchain.disasm import disassemble
from .binary import cached_zebin, member_rank

COST_FORMAT = 2
"""The version of the cached costs: how they are read is in the key."""


def _images(inp: Input, ips: set[str], cache: BuildCache | None) -> Iterator[tuple[bytes, str, str]]:
    """(zebin, its IP, a label) of the native code the driver loads for each IP in `ips`: the
    input itself, or the fat binary member it would choose (probes.binary.member_rank).  The
    zebins are read through the build cache, as the audit read them (a warm read parses none)."""
    if inp.kind == InputKind.FATBIN:
        members = [m for m in read_members(inp.data, inp.path) if is_zebin(m.data)]
        # A member named by its exact IP is the one the driver loads (rank 0): the others'
        # IPs, which only their zebins say (`64.bmg`), are read only for the IPs left.
        best: dict[str, tuple[int, bytes, str]] = {m.ip: (0, m.data, f"{inp.path}[{m.name}]") for m in members
                                                   if m.ip in ips}
        for member in members if not ips <= set(best) else []:
            label = f"{inp.path}[{member.name}]"
            ip = member.ip or cached_zebin(member.data, label, cache).ip
            if ip is None or ip not in ips:
                continue
            rank = member_rank(member.entry, ip)
            if ip not in best or rank < best[ip][0]:
                best[ip] = (rank, member.data, label)
        for ip, (_, data, label) in best.items():
            yield data, ip, label
    elif is_zebin(inp.data):
        zebin = cached_zebin(bytes(inp.data), inp.path, cache)
        if zebin.ip in ips:
            yield bytes(inp.data), zebin.ip, inp.path


def native_costs(inp: Input, wanted: dict[str, set[str]], compiler_for: dict[str, Compiler], config: Settings,
                 cache: BuildCache | None) -> tuple[dict[tuple[str, str], dict], list[str]]:
    """(kernel, IP) -> the ScratchCost JSON of each kernel in `wanted` (IP -> kernel names) of a
    native input; and what could not be measured, one line each."""
    costs: dict[tuple[str, str], dict] = {}
    problems: list[str] = []
    try:
        images = list(_images(inp, set(wanted), cache))
    except FormatError as exc:
        return costs, [f"--cost: {exc}"]
    for data, ip, label in images:
        compiler = compiler_for.get(ip)
        if compiler is None:
            problems.append(f"--cost: {label}: no compiler here knows IP {ip} to disassemble it")
            continue
        kernels = sorted(wanted[ip])
        key = make_key(kind=f"disasm-cost/{COST_FORMAT}", image=hashlib.sha256(data).hexdigest(),
                       compiler=compiler.id, ip=ip, kernels=kernels)
        got = cache.get_json(key) if cache is not None else None
        if got is None:
            try:
                code = disassemble(compiler, data, ip, timeout=config.timeout, what=label)
            except (FormatError, ToolchainError) as exc:
                problems.append(f"--cost: {exc}")
                continue
            got = {k: read_disasm(code[k], k).cost().to_json() for k in kernels if k in code}
            if cache is not None:
                cache.put_json(key, got)
        costs.update(((k, ip), c) for k, c in got.items())
    return costs, problems
