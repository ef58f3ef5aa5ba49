"""Turn what the user typed after -t into targets, and targets into compile jobs.

Accepted: ocloc acronyms (`arl-s`), IP versions (`12.70.4`), `default` (the 19 AOT
targets of the decision record in seed 003) and family sets as the compiler itself
defines them (`xe-lp`, `xe-hpg`, `xe-lpg`, `xe2`, ... from `ocloc ids <family>`).
Names that share an IP version are compiled once and reported under each name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..errors import ToolchainError, UsageError
from ..hardware import DEFAULT_TARGETS, FAMILY_SETS, KNOWN_IPS
from ..model import Compiler, Target, ip_in_family_range, is_ip

NAMED_SETS = {"default": DEFAULT_TARGETS}


def name_for_ip(ip: str, compilers: Sequence[Compiler] = ()) -> str:
    """A product name for an IP version: the known table, else the compiler's own, else the IP."""
    if ip in KNOWN_IPS:
        return KNOWN_IPS[ip]
    return _canonical_name(ip, list(compilers)) or ip


def ip_in_family(ip: str, family: str, compilers: Sequence[Compiler] = ()) -> bool:
    """Whether IP version `ip` belongs to `family`, by the compilers' own `ocloc ids`, else by range."""
    knowing = [c for c in compilers if c.knows(family)]
    if knowing:
        return any(ip in c.ips(family) for c in knowing)
    return ip_in_family_range(ip, family)


def _is_stepping(name: str) -> bool:
    """`dg2-g10-a0`, `bmg-g21-b0`: a stepping of a product, not a product."""
    tail = name.rsplit("-", 1)[-1]
    return len(tail) == 2 and tail[0] in "abc" and tail[1].isdigit() and name.count("-") >= 1 and name != tail


@dataclass(frozen=True)
class TargetPlan:
    """Which compiler builds which IP, and the names each IP is reported under."""

    targets: tuple[Target, ...]
    compiler_for_ip: dict

    def names_for_ip(self, ip: str) -> list[str]:
        return [t.name for t in self.targets if t.ip == ip]

    def only(self, names: Iterable[str]) -> TargetPlan:
        """The same plan for the named targets alone, in the plan's order."""
        keep = set(names)
        return TargetPlan(targets=tuple(t for t in self.targets if t.name in keep), compiler_for_ip=self.compiler_for_ip)

    @property
    def ips(self) -> list[str]:
        seen = []
        for t in self.targets:
            if t.ip not in seen:
                seen.append(t.ip)
        return seen


def split_specs(specs: list[str] | tuple[str, ...] | str | None) -> list[str]:
    if specs is None:
        return ["default"]
    if isinstance(specs, str):
        specs = [specs]
    out: list[str] = []
    for spec in specs:
        out.extend(part.strip() for part in spec.split(",") if part.strip())
    return out or ["default"]


def _all_names(compilers: list[Compiler]) -> list[str]:
    names: list[str] = []
    for c in compilers:
        for n in c.targets:
            if n not in names:
                names.append(n)
    return names + [s for s in NAMED_SETS if s not in names]


def _canonical_name(ip: str, compilers: list[Compiler]) -> str | None:
    """The product name shown for an IP reached through a family set (None: steppings only)."""
    for name in DEFAULT_TARGETS:
        if any(c.ips(name) == (ip,) for c in compilers):
            return name
    for c in compilers:
        for name in c.targets:
            if not _is_stepping(name) and name not in FAMILY_SETS and c.ips(name) == (ip,):
                return name
    return None


def plan_targets(specs: list[str] | tuple[str, ...] | str | None, compilers: list[Compiler]) -> TargetPlan:
    """Resolve -t specs against the compilers (newest first) into a plan."""
    if not compilers:
        raise ToolchainError("no Intel GPU compiler (ocloc) found; run `zeinspect toolchain fetch` "
                             "or install Debian's intel-opencl-icd")
    targets: list[Target] = []
    compiler_for_ip: dict[str, Compiler] = {}

    def add(name: str, ip: str, compiler: Compiler) -> None:
        if all(t.name != name for t in targets):
            targets.append(Target(name=name, ip=ip))
        compiler_for_ip.setdefault(ip, compiler)

    for spec in split_specs(specs):
        if spec in NAMED_SETS:
            members: list[tuple[str, str | None]] = [(n, None) for n in NAMED_SETS[spec]]
        elif is_ip(spec):
            members = [(spec, spec)]
        else:
            members = [(spec, None)]
        for name, ip in members:
            if ip is not None:
                owner = next((c for c in compilers if c.knows(ip)), None)
                if owner is None:
                    raise UsageError(f"no installed compiler knows IP version {ip}" + _hint(ip, compilers))
                add(name, ip, owner)
                continue
            owner = next((c for c in compilers if c.knows(name)), None)
            if owner is None:
                raise UsageError(f"unknown target {name!r}" + _hint(name, compilers))
            ips = owner.ips(name)
            if len(ips) == 1 and name not in FAMILY_SETS:
                add(name, ips[0], owner)
            else:  # a family or release set: every product IP in it
                for member_ip in ips:
                    canonical = _canonical_name(member_ip, compilers)
                    if canonical is None:
                        continue  # an IP only pre-production steppings compile to
                    add(canonical, member_ip, next((c for c in compilers if c.knows(canonical)), owner))
    if not targets:
        raise UsageError("no targets selected")
    return TargetPlan(targets=tuple(targets), compiler_for_ip=compiler_for_ip)


def _hint(name: str, compilers: list[Compiler]) -> str:
    import difflib  # here: only a name that is no target asks for it (start-up)

    close = difflib.get_close_matches(name, _all_names(compilers), n=4, cutoff=0.5)
    return f"; did you mean {', '.join(close)}?" if close else "; `zeinspect toolchain list` shows the known targets"
