"""Read SPIR-V modules: the header, entry points and their execution modes.

Only what zeinspect needs is decoded: the word stream, OpEntryPoint (15),
OpExecutionMode (16), OpCapability (17) and the opcodes that reveal sub-group
dependence.  The rewriter in zeinspect.levers.sub_group works on the same word stream.
"""

from __future__ import annotations

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
