"""Read SPIR-V modules: the header, entry points and their execution modes.

Only what zeinspect needs is decoded: the word stream, OpEntryPoint (15),
OpExecutionMode (16), OpCapability (17) and the opcodes that reveal sub-group
dependence.  The rewriter in zeinspect.levers.sub_group works on the same word stream.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass, field

from ..errors import FormatError

MAGIC = 0x07230203
OP_ENTRY_POINT = 15
OP_EXECUTION_MODE = 16
OP_CAPABILITY = 17
EXECUTION_MODEL_KERNEL = 6
MODE_SUBGROUP_SIZE = 35
CAPABILITY_SHADER = 1
CAPABILITY_KERNEL = 6
EXECUTION_MODELS = {0: "Vertex", 1: "TessellationControl", 2: "TessellationEvaluation", 3: "Geometry",
                    4: "Fragment", 5: "GLCompute", 6: "Kernel", 5267: "TaskNV", 5268: "MeshNV",
                    5313: "RayGenerationKHR", 5314: "IntersectionKHR", 5315: "AnyHitKHR", 5316: "ClosestHitKHR",
                    5317: "MissKHR", 5318: "CallableKHR", 5364: "TaskEXT", 5365: "MeshEXT"}
"""SPIR-V's execution models (the specification's table 3.5): only Kernel is an OpenCL kernel;
GLCompute and the others are Vulkan's and OpenGL's (a compute or graphics shader)."""


def is_spirv(data: bytes) -> bool:
    return len(data) >= 4 and struct.unpack_from("<I", data)[0] in (MAGIC, 0x03022307)


@dataclass(frozen=True)
class Instruction:
    opcode: int
    offset: int
    """Word index of the instruction's first word."""
    operands: tuple[int, ...]


@dataclass
class Module:
    words: list[int]
    endian: str
    version: tuple[int, int]
    instructions: list[Instruction] = field(default_factory=list)

    def entry_points(self) -> list[tuple[int, str]]:
        """(function id, name) of every OpenCL kernel entry point, in module order."""
        out = []
        for ins in self.instructions:
            if ins.opcode == OP_ENTRY_POINT and len(ins.operands) >= 3 and ins.operands[0] == EXECUTION_MODEL_KERNEL:
                name, _ = decode_string(ins.operands, 2)
                out.append((ins.operands[1], name))
        return out

    def kernel_names(self) -> list[str]:
        return [name for _, name in self.entry_points()]

    def required_sub_group_size(self, function_id: int) -> int | None:
        for ins in self.instructions:
            if (ins.opcode == OP_EXECUTION_MODE and len(ins.operands) >= 3
                    and ins.operands[0] == function_id and ins.operands[1] == MODE_SUBGROUP_SIZE):
                return ins.operands[2]
        return None

    def capabilities(self) -> set[int]:
        return {ins.operands[0] for ins in self.instructions if ins.opcode == OP_CAPABILITY and ins.operands}

    def to_bytes(self) -> bytes:
        fmt = ("<" if self.endian == "little" else ">") + f"{len(self.words)}I"
        return struct.pack(fmt, *self.words)


def decode_string(operands: tuple[int, ...] | list[int], start: int) -> tuple[str, int]:
    """A nul-terminated UTF-8 literal packed little-endian in words; returns (text, next index)."""
    raw = bytearray()
    i = start
    while i < len(operands):
        word = operands[i]
        i += 1
        chunk = word.to_bytes(4, "little")
        if 0 in chunk:
            raw += chunk[:chunk.index(0)]
            break
        raw += chunk
    return raw.decode("utf-8", "replace"), i


# What may come before and among the entry points (SPIR-V's logical layout, section 2.4).
_PREAMBLE = {10, 11, 14, OP_ENTRY_POINT, OP_CAPABILITY}


def kernel_names(data: bytes, what: str = "SPIR-V module") -> list[str]:
    """The kernel entry points' names, reading only the module's preamble (entry points come
    before everything else that is not a capability, extension or import), so a library of
    thousands of images is not decoded whole to learn them.  Falls back to read_module for
    anything unusual (big-endian, damaged)."""
    if len(data) < 20 or len(data) % 4 or struct.unpack_from("<I", data)[0] != MAGIC:
        return read_module(data, what).kernel_names()
    out, i, count = [], 5, len(data) // 4
    while i < count:
        word = struct.unpack_from("<I", data, 4 * i)[0]
        opcode, length = word & 0xFFFF, word >> 16
        if length == 0 or i + length > count:
            return read_module(data, what).kernel_names()  # says what is wrong
        if opcode not in _PREAMBLE:
            break
        if opcode == OP_ENTRY_POINT and length >= 4:
            operands = struct.unpack_from(f"<{length - 1}I", data, 4 * (i + 1))
            if operands[0] == EXECUTION_MODEL_KERNEL:
                out.append(decode_string(operands, 2)[0])
        i += length
    return out


def not_a_kernel(data: bytes, what: str = "SPIR-V module") -> str | None:
    """Why a SPIR-V module holds no OpenCL kernel, as its entry points' execution models and its
    capabilities say (a Vulkan compute shader: GLCompute entry points, the Shader capability),
    or None when it has OpenCL kernel entry points."""
    module = read_module(data, what)
    models: dict[str, int] = {}
    for ins in module.instructions:
        if ins.opcode == OP_ENTRY_POINT and ins.operands:
            name = EXECUTION_MODELS.get(ins.operands[0], f"execution model {ins.operands[0]}")
            models[name] = models.get(name, 0) + 1
    if "Kernel" in models:
        return None
    capabilities = module.capabilities()
    shader = CAPABILITY_SHADER in capabilities and CAPABILITY_KERNEL not in capabilities
    if models:
        kinds = ", ".join(f"{n} {m}" for m, n in models.items())
        return (f"a {'Vulkan or OpenGL ' if shader else ''}shader module ({kinds} entry point"
                f"{'s' if sum(models.values()) > 1 else ''}"
                f"{', the Shader capability' if shader else ''}), not an OpenCL kernel")
    return "a SPIR-V module without entry points (a library of functions, not a kernel)"


def read_module(data: bytes, what: str = "SPIR-V module") -> Module:
    if len(data) < 20:
        raise FormatError(f"{what} is too short to be SPIR-V ({len(data)} bytes)")
    if len(data) % 4:
        raise FormatError(f"{what} is not a whole number of 32-bit words (truncated?)")
    first = struct.unpack_from("<I", data)[0]
    if first == MAGIC:
        endian = "little"
    elif first == 0x03022307:
        endian = "big"
    else:
        raise FormatError(f"{what} does not start with the SPIR-V magic number")
    count = len(data) // 4
    words = list(struct.unpack(("<" if endian == "little" else ">") + f"{count}I", data))
    version_word = words[1]
    module = Module(words=words, endian=endian, version=((version_word >> 16) & 0xFF, (version_word >> 8) & 0xFF))
    i = 5
    while i < count:
        word = words[i]
        length = word >> 16
        if length == 0 or i + length > count:
            raise FormatError(f"{what}: SPIR-V instruction at word {i} has a bad length (truncated or damaged)")
        module.instructions.append(Instruction(opcode=word & 0xFFFF, offset=i, operands=tuple(words[i + 1:i + length])))
        i += length
    return module


_OP_TYPE_BOOL, _OP_TYPE_INT, _OP_TYPE_FLOAT, _OP_TYPE_VECTOR = 20, 21, 22, 23
_OP_TYPE_ARRAY, _OP_TYPE_STRUCT, _OP_TYPE_POINTER, _OP_CONSTANT = 28, 30, 32, 43
_OP_FUNCTION, _OP_FUNCTION_END, _OP_FUNCTION_CALL, _OP_VARIABLE = 54, 56, 57, 59
_ACCESS_CHAINS = {65: 3, 66: 3, 67: 4, 70: 4}
"""OpAccessChain, OpInBoundsAccessChain, OpPtrAccessChain, OpInBoundsPtrAccessChain: the word
of the first index operand (after result type, result, base; a Ptr chain's element index too)."""
_OP_BITCAST = 124
_STORAGE_FUNCTION = 7


def private_arrays(data: bytes, kernel: str) -> list[tuple[int, bool | None]]:
    """Each private array a kernel's code declares (a Function-storage variable of array type,
    in the kernel or a function it calls): (its bytes, whether an access to it takes an index
    known only at run time; None when no access was seen).  A dynamically indexed private
    array is what IGC cannot keep in registers: it lives in scratch whatever the shape."""
    index = _private_index(data)
    entry, arrays, calls, dynamic = index[0].get(kernel), index[1], index[2], index[3]
    if entry is None:
        return []
    seen, todo, out = set(), [entry], []
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        out += [(size, dynamic.get(variable)) for variable, size in arrays.get(f, {}).items()]
        todo += list(calls.get(f, ()))
    return sorted(out, key=lambda a: -a[0])


@functools.lru_cache(maxsize=2)  # one module's kernels are asked about one after another
def _private_index(data: bytes) -> tuple[dict[str, int], dict[int, dict[int, int]], dict[int, set[int]], dict[int, bool]]:
    """(kernel -> entry function, function -> private array variable -> bytes, calls, variable ->
    indexed dynamically) of a module, read once."""
    module = read_module(data, "SPIR-V module")
    sizes: dict[int, int] = {}
    constants: set[int] = set()
    pointee: dict[int, int] = {}
    arrays: dict[int, dict[int, int]] = {}  # function -> variable -> bytes
    calls: dict[int, set[int]] = {}
    derived: dict[int, int] = {}  # a pointer made from a variable (cast, chained) -> the variable
    dynamic: dict[int, bool] = {}
    function = None
    for ins in module.instructions:
        op, w = ins.opcode, ins.operands
        if op == _OP_TYPE_BOOL and w:
            sizes[w[0]] = 1
        elif op in (_OP_TYPE_INT, _OP_TYPE_FLOAT) and len(w) >= 2:
            sizes[w[0]] = max(1, w[1] // 8)
        elif op == _OP_TYPE_VECTOR and len(w) >= 3 and w[1] in sizes:
            sizes[w[0]] = sizes[w[1]] * w[2]
        elif op == _OP_CONSTANT and len(w) >= 3:
            constants.add(w[1])
            sizes.setdefault(-w[1], w[2])  # a constant's value, kept beside the sizes (negative ids)
        elif op == _OP_TYPE_ARRAY and len(w) >= 3 and w[1] in sizes and -w[2] in sizes:
            sizes[w[0]] = sizes[w[1]] * sizes[-w[2]]
            arrays.setdefault(-1, {})[w[0]] = 1  # marks an array type
        elif op == _OP_TYPE_STRUCT and w and all(m in sizes for m in w[1:]):
            sizes[w[0]] = sum(sizes[m] for m in w[1:])
        elif op == _OP_TYPE_POINTER and len(w) >= 3:
            pointee[w[0]] = w[2]
        elif op == _OP_FUNCTION and len(w) >= 2:
            function = w[1]
            calls.setdefault(function, set())
        elif op == _OP_FUNCTION_END:
            function = None
        elif function is None:
            continue
        elif op == _OP_FUNCTION_CALL and len(w) >= 3:
            calls[function].add(w[2])
        elif op == _OP_VARIABLE and len(w) >= 3 and w[2] == _STORAGE_FUNCTION:
            kind = pointee.get(w[0])
            if kind in arrays.get(-1, {}) and kind in sizes:
                arrays.setdefault(function, {})[w[1]] = sizes[kind]
                derived[w[1]] = w[1]
        elif op == _OP_BITCAST and len(w) >= 3 and w[2] in derived:
            derived[w[1]] = derived[w[2]]
        elif op in _ACCESS_CHAINS and len(w) >= 3 and w[2] in derived:
            variable = derived[w[2]]
            derived[w[1]] = variable
            indices = w[_ACCESS_CHAINS[op] - 1:]
            dynamic[variable] = dynamic.get(variable, False) or any(i not in constants for i in indices)
    entries = {name: f for f, name in module.entry_points()}
    return entries, arrays, calls, dynamic


_OP_NAME = 5
_OP_LABEL = 248
_DONT_INLINE = 0x2
_OP_FUNCTION_POINTER_CALL = 5601  # OpFunctionPointerCallINTEL (SPV_INTEL_function_pointers)


def kept_calls(data: bytes, kernel: str) -> list[str]:
    """The functions a kernel reaches that its module asks to keep as calls (FunctionControl
    DontInline, a recursive function, a function it imports: declared without a body, `NAME
    (imported)`) and whether it calls through a pointer: what IGC cannot
    inline and builds as stack calls.  Names as OpName gives them (mangled, as the source
    compiler wrote them); empty when the module asks for none (IGC's own size limit may still
    keep a call: its ISA shows it)."""
    module = read_module(data, "SPIR-V module")
    names: dict[int, str] = {}
    control: dict[int, int] = {}
    calls: dict[int, set[int]] = {}
    pointer_calls: set[int] = set()
    bodies: set[int] = set()
    function = None
    for ins in module.instructions:
        op, w = ins.opcode, ins.operands
        if op == _OP_NAME and len(w) >= 2:
            names[w[0]] = decode_string(w, 1)[0]
        elif op == _OP_FUNCTION and len(w) >= 3:
            function = w[1]
            control[function] = w[2]
            calls.setdefault(function, set())
        elif op == _OP_LABEL and function is not None:
            bodies.add(function)  # a function with a block is defined here; without, it is imported
        elif op == _OP_FUNCTION_END:
            function = None
        elif function is not None and op == _OP_FUNCTION_CALL and len(w) >= 3:
            calls[function].add(w[2])
        elif function is not None and op == _OP_FUNCTION_POINTER_CALL:
            pointer_calls.add(function)
    entry = next((f for f, name in module.entry_points() if name == kernel), None)
    if entry is None:
        return []
    out: list[str] = []
    path: list[int] = [entry]
    done: set[int] = set()

    def walk(f: int) -> None:
        done.add(f)
        for callee in sorted(calls.get(f, ())):
            name = names.get(callee, f"function %{callee}")
            if callee in path or callee == f:
                out.append(f"{name} (recursive)")
                continue
            if control.get(callee, 0) & _DONT_INLINE:
                out.append(name)
            elif callee in control and callee not in bodies:
                out.append(f"{name} (imported)")  # linked in when the module is loaded: never inlined
            if callee not in done:
                path.append(callee)
                walk(callee)
                path.pop()
        if f in pointer_calls:
            out.append(f"a call through a function pointer in {names.get(f, f'function %{f}')}")

    walk(entry)
    return list(dict.fromkeys(out))
