"""A TTIR written on a CUDA machine, read as Triton-XPU would have written it: its calls into
CUDA's libdevice (`tt.extern_elementwise ... symbol = "__nv_tanhf"`) become the calls Intel's
libdevice makes for the same function (`__imf_tanhf`).

Why: Inductor and Triton kernels call math functions through `triton.language.extra.libdevice`,
which each backend resolves to its own library (backend.get_module_map): CUDA's `__nv_*`
functions, Intel's `__imf_*`.  The TTIR keeps the resolved symbol.  Built for an Intel GPU as
it is, `__nv_tanhf` is a function no library defines: IGC compiles the call as a stack call to
an external function and reserves a call stack (over 128 KiB of "spill" per thread), a
finding no XPU build of the same kernel would have.  The kernel Triton-XPU builds calls
`__imf_tanhf`, which its backend links from Intel's libdevice and inlines.

The map is read from the Triton in use: the functions of its `extra/cuda/libdevice.py` and
`extra/intel/libdevice.py` with the same name and argument types are the same function.  A
CUDA symbol with no Intel counterpart leaves the kernel unscreenable (an input error: a note
of the screen), never a false stack call.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from ...errors import InputError

_SYMBOL = re.compile(r'symbol = "(__nv_[A-Za-z0-9_]+)"')


def _signatures(path: Path) -> dict[tuple[str, tuple[str, ...]], str]:
    """(function, argument dtypes) -> symbol, from a libdevice.py's extern_elementwise tables."""
    out: dict[tuple[str, tuple[str, ...]], str] = {}
    for fn in ast.parse(path.read_text()).body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Dict):
                continue
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Tuple) and isinstance(value, ast.Tuple) and value.elts and \
                        isinstance(value.elts[0], ast.Constant) and isinstance(value.elts[0].value, str):
                    dtypes = tuple(ast.unparse(e) for e in key.elts)
                    out[(fn.name, dtypes)] = value.elts[0].value
    return out


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], frozenset[str]]:
    import triton.language.extra as extra

    root = Path(extra.__file__).parent
    cuda, intel = root / "cuda" / "libdevice.py", root / "intel" / "libdevice.py"
    if not (cuda.is_file() and intel.is_file()):
        return {}, frozenset()
    theirs, ours = _signatures(cuda), _signatures(intel)
    return {symbol: ours[key] for key, symbol in theirs.items() if key in ours}, frozenset(ours.values())


def cuda_to_intel() -> dict[str, str]:
    """CUDA libdevice symbol -> Intel libdevice symbol, for every function both define."""
    return _tables()[0]


def intel_symbols() -> frozenset[str]:
    """What Intel's libdevice calls: a few keep CUDA's spelling (`__nv_cdnorminvf`), and a TTIR
    Triton-XPU wrote that calls them is left as it is."""
    return _tables()[1]


def retarget(ttir: str, path: str) -> tuple[str, list[str]]:
    """The TTIR with CUDA's libdevice calls read as Intel's, and a note saying which."""
    used = sorted(set(_SYMBOL.findall(ttir)) - intel_symbols())
    if not used:
        return ttir, []
    table = cuda_to_intel()
    missing = [s for s in used if s not in table]
    if missing:
        raise InputError(f"calls CUDA's libdevice {', '.join(missing)}, which Intel's libdevice has no counterpart "
                         "for: not screened (built as it is, the call would be an external stack call no XPU build "
                         "makes)", path=path)
    text = _SYMBOL.sub(lambda m: f'symbol = "{table.get(m[1], m[1])}"', ttir)
    said = ", ".join(f"{s} as {table[s]}" for s in used)
    return text, [f"written on a CUDA machine: its libdevice calls read as Triton-XPU's ({said})"]
