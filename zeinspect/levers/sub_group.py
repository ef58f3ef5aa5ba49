"""Shape levers on a module: the sub-group size of an entry point, written into its SPIR-V.

No build option forces a sub-group size (only the debug variable IGC_ForceOCLSIMDWidth),
so the lever is the module itself: `OpExecutionMode %kernel SubgroupSize N` (mode 35,
capability SubgroupDispatch) is added, changed or removed for one entry point, and the
result is checked structurally here and by `spirv-val` where it accepts the module.
OpenCL C sources are first turned into SPIR-V by the same ocloc (`-spv_only`).

A kernel whose code depends on its sub-group size (sub-group operations, or the
sub-group built-in variables) must not be given another size silently: `depends_on_sub_group`
finds them by walking each kernel's call graph.
"""

from __future__ import annotations

import re

from ..errors import FormatError
from ..inputs.spirv import (
    MODE_SUBGROUP_SIZE,
    OP_CAPABILITY,
    OP_ENTRY_POINT,
    OP_EXECUTION_MODE,
    Module,
    read_module,
)
from ..model import KernelReport, Status
from .base import CliOption, How, Lever

CAPABILITY_SUBGROUP_DISPATCH = 58
OP_FUNCTION, OP_FUNCTION_END, OP_FUNCTION_CALL = 54, 56, 57
OP_DECORATE, DECORATION_BUILTIN = 71, 11
OP_CONSTANT = 43
OP_CONTROL_BARRIER = 224
SCOPE_SUBGROUP = 3
SUBGROUP_BUILTINS = {36, 37, 38, 39, 40, 41, 4416, 4417, 4418, 4419, 4420}
# Operations that act on the sub-group whatever their operands say.
SUBGROUP_OPS = set(range(333, 367)) | set(range(4421, 4433)) | set(range(5571, 5582)) | {5283, 5284}
# OpGroup* (259-270): the execution scope operand decides.
SCOPED_GROUP_OPS = set(range(259, 271))


def _entry_id(module: Module, kernel: str) -> int:
    for fid, name in module.entry_points():
        if name == kernel:
            return fid
    raise FormatError(f"no kernel entry point named {kernel!r}")


def set_sub_group(data: bytes, kernel: str, size: int) -> bytes:
    """Return the module with `kernel`'s required sub-group size set to `size` (0 removes it)."""
    return set_sub_groups(data, {kernel: size})


def set_sub_groups(data: bytes, sizes: dict[str, int]) -> bytes:
    """Return the module with each kernel's required sub-group size set (0 removes it), in one
    pass over the module; checked as a single rewrite is."""
    module = read_module(data, "SPIR-V module")
    wanted = {_entry_id(module, kernel): size for kernel, size in sizes.items()}
    words = module.words
    out = words[:5]
    have_capability = CAPABILITY_SUBGROUP_DISPATCH in module.capabilities()
    last_capability_end = None
    entry_point_end = None
    replaced: set[int] = set()
    for ins in module.instructions:
        length = 1 + len(ins.operands)
        chunk = words[ins.offset:ins.offset + length]
        if ins.opcode == OP_EXECUTION_MODE and len(ins.operands) >= 3 and ins.operands[0] in wanted \
                and ins.operands[1] == MODE_SUBGROUP_SIZE:
            fid = ins.operands[0]
            replaced.add(fid)
            if wanted[fid] == 0:
                continue
            chunk = [chunk[0], fid, MODE_SUBGROUP_SIZE, wanted[fid]]
        out.extend(chunk)
        if ins.opcode == OP_CAPABILITY:
            last_capability_end = len(out)
        if ins.opcode == OP_ENTRY_POINT:
            entry_point_end = len(out)
    version = module.version
    added = [[(4 << 16) | OP_EXECUTION_MODE, fid, MODE_SUBGROUP_SIZE, size] for fid, size in wanted.items()
             if fid not in replaced and size != 0]
    if added:
        if version < (1, 1):
            # SubgroupDispatch arrived in SPIR-V 1.1, which changes the meaning of nothing in 1.0.
            version = (1, 1)
            out[1] = (1 << 16) | (1 << 8)
        # Execution modes follow the entry points; the capability joins the others.
        out[entry_point_end:entry_point_end] = [w for mode in added for w in mode]
        if not have_capability:
            out[last_capability_end:last_capability_end] = [(2 << 16) | OP_CAPABILITY, CAPABILITY_SUBGROUP_DISPATCH]
    result = Module(words=out, endian=module.endian, version=version).to_bytes()
    check_structures(result, sizes)
    return result


def check_structure(data: bytes, kernel: str, size: int) -> None:
    """Our own checks, always: it parses, the kernel has exactly the mode we asked for."""
    check_structures(data, {kernel: size})


def check_structures(data: bytes, sizes: dict[str, int]) -> None:
    """`check_structure` for each kernel of one rewrite, the module read once."""
    module = read_module(data, "rewritten SPIR-V")
    modes: dict[int, list] = {}
    for ins in module.instructions:
        if ins.opcode == OP_EXECUTION_MODE and len(ins.operands) >= 2 and ins.operands[1] == MODE_SUBGROUP_SIZE:
            modes.setdefault(ins.operands[0], []).append(ins)
    for kernel, size in sizes.items():
        found = modes.get(_entry_id(module, kernel), [])
        if size == 0 and found:
            raise FormatError("rewrite left a SubgroupSize mode behind")
        if size and (len(found) != 1 or len(found[0].operands) < 3 or found[0].operands[2] != size):
            raise FormatError("rewrite did not leave exactly one SubgroupSize mode")
    if any(sizes.values()) and CAPABILITY_SUBGROUP_DISPATCH not in module.capabilities():
        raise FormatError("SubgroupSize without the SubgroupDispatch capability")


def depends_on_sub_group(data: bytes, kernel: str) -> list[str]:
    """Why `kernel` depends on its sub-group size (empty when it does not)."""
    return sub_group_dependence(data, [kernel])[kernel]


def sub_group_dependence(data: bytes, kernels: list[str]) -> dict[str, list[str]]:
    """For each of `kernels`, why it depends on its sub-group size (empty when it does not):
    the module read once, each kernel's call graph walked (a library image holds dozens)."""
    module = read_module(data, "SPIR-V module")
    constants = {}
    builtin_vars = {}
    for ins in module.instructions:
        if ins.opcode == OP_CONSTANT and len(ins.operands) >= 3:
            constants[ins.operands[1]] = ins.operands[2]
        elif ins.opcode == OP_DECORATE and len(ins.operands) >= 3 and ins.operands[1] == DECORATION_BUILTIN \
                and ins.operands[2] in SUBGROUP_BUILTINS:
            builtin_vars[ins.operands[0]] = ins.operands[2]
    # Split the function bodies; note what each calls and uses.
    calls: dict[int, set] = {}
    reasons: dict[int, list] = {}
    current = None
    for ins in module.instructions:
        if ins.opcode == OP_FUNCTION:
            if len(ins.operands) < 2:
                raise FormatError("OpFunction without a result id")
            current = ins.operands[1]
            calls.setdefault(current, set())
            reasons.setdefault(current, [])
        elif ins.opcode == OP_FUNCTION_END:
            current = None
        elif current is not None:
            if ins.opcode == OP_FUNCTION_CALL:
                if len(ins.operands) < 3:
                    raise FormatError("OpFunctionCall without a callee")
                calls[current].add(ins.operands[2])
            elif ins.opcode in SUBGROUP_OPS:
                reasons[current].append(f"sub-group operation (opcode {ins.opcode})")
            elif ins.opcode in SCOPED_GROUP_OPS and len(ins.operands) >= 3 and \
                    constants.get(ins.operands[2]) == SCOPE_SUBGROUP:
                reasons[current].append(f"group operation at sub-group scope (opcode {ins.opcode})")
            elif ins.opcode == OP_CONTROL_BARRIER and ins.operands and constants.get(ins.operands[0]) == SCOPE_SUBGROUP:
                reasons[current].append("sub-group barrier")
            else:
                used = set(ins.operands) & set(builtin_vars)
                if used:
                    reasons[current].append(f"sub-group built-in variable (BuiltIn {builtin_vars[used.pop()]})")
    out = {}
    for kernel in kernels:
        seen, todo, found = set(), [_entry_id(module, kernel)], []
        while todo:
            f = todo.pop()
            if f in seen:
                continue
            seen.add(f)
            found += reasons.get(f, [])
            todo += list(calls.get(f, ()))
        out[kernel] = sorted(set(found))
    return out


def _sycl(value: int | None, written: int | None) -> str:
    if value == 0:
        return f"no required size (drop [[sycl::reqd_sub_group_size({written})]])" if written else "no required size"
    if value is not None:
        return f"[[sycl::reqd_sub_group_size({value})]]"
    return f"keep [[sycl::reqd_sub_group_size({written})]]" if written else "no required size"


SIZES = (0, 8, 16, 32)
_UNSUPPORTED_SIZE = re.compile(r"required subgroup size \d+, which is unsupported on this platform")


def _parse(value: object) -> int | None:
    """None keeps the module's own size; 0 removes a required size (the compiler's choice)."""
    size = None if value is None else int(value) if isinstance(value, (int, str)) and str(value).isdigit() else value
    if size is not None and size not in SIZES:
        raise ValueError(f"sub-group size must be 8, 16, 32 or 0 (compiler's choice), not {value!r}")
    return size


def _unsupported(value: int | None, report: KernelReport) -> str | None:
    """IGC's refusal of a required size the target does not offer."""
    if report.status is Status.OK:
        return None
    if _UNSUPPORTED_SIZE.search((report.reason or "") + " " + " ".join(report.log)):
        return f"sub-group size {value} is not supported here"
    return None


def _rewrite(data: bytes, kernel: str, size: int) -> tuple[bytes, str]:
    return set_sub_group(data, kernel, size), _note(kernel, size)


def _rewrite_all(data: bytes, sizes: dict[str, int]) -> tuple[bytes, list[str]]:
    return set_sub_groups(data, sizes), [_note(kernel, size) for kernel, size in sizes.items()]


def _note(kernel: str, size: int) -> str:
    return f"SPIR-V rewritten: {kernel} " + ("has no required sub-group size" if size == 0 else
                                             f"requires sub-group size {size}")


def _describe(value: int | None) -> str:
    return {None: "sub-group as written", 0: "compiler's choice"}.get(value, f"sub-group {value}")  # type: ignore[arg-type]


# The written value is the module's required size, 0 for none; the search compares settings with it.
LEVER = Lever(
    name="sub_group", how=How.SPIRV_REWRITE, default=None, settings=lambda written: SIZES,
    cost=lambda value, written: 0 if value in (None, 0) else 1, describe=_describe, changes_semantics=True,
    spelling=_sycl, unsupported_by=_unsupported, parse=_parse, rewrite=_rewrite, rewrite_all=_rewrite_all,
    written=lambda module, fid: module.required_sub_group_size(fid) or 0,
    cli=CliOption("--sub-group", ("0", "8", "16", "32"),
                  "Require this sub-group size (0: none, the compiler's choice) by rewriting the SPIR-V."),
)
