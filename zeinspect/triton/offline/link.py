"""Triton-XPU's link of Intel's libdevice, without parsing libdevice for a kernel that calls
nothing in it.

Why: the Intel backend's make_llir links every kernel with libdevice
(`llvm.link_extern_libs(module, [libsycl-spir64-unknown-unknown.bc])`, Triton's llvm.cc), and
the link parses those 2 MB of bitcode anew each time: about 60 ms a kernel, two fifths of the
front end of a cache's TTIR.  Most kernels call none of it (48 of the 67 of a GPT-2 training
step's Inductor cache): the link, made with `LinkOnlyNeeded`, brings them no function.  It still
brings something: libdevice's named metadata and module flags (`spirv.Source`,
`opencl.spir.version`, `llvm.ident`, `wchar_size`, `sycl-device`, `frame-pointer`), which reach
the SPIR-V, and (were there any) its appending globals.  So the link is not skipped: such a
kernel is linked with what linking libdevice into an empty module gives, written once as LLVM
text (`metadata_only`), which the same call parses in a fraction of a millisecond.  Its
SPIR-V is Triton's own, byte for byte (tests/integration/triton/test_link.py).

When a link would bring a function, the full link is made:
- a declaration is resolved by libdevice unless a full link in this process left it declared
  (`_Z12get_local_idj`, `_Z7barrierj`: IGC's builtins) or its name is nowhere in the
  library's file (a symbol's name is stored whole, as raw bytes, in the bitcode's string
  table);
- a definition whose name libdevice also defines would be made internal by the link (Triton
  marks every function the library defines internal): a kernel whose name is anywhere in the
  file takes the full link.
The file test is checked before it is used (a function Triton's libdevice.py calls is found in
the file's bytes) and against what full links resolve: a resolved name that is not in the
file's bytes (a bitcode without a string table) turns the shortcut off for that library.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from ...fileio import atomic_write
from ...paths import build_cache_dir
from .libdevice import intel_symbols

ENABLED = True
"""Off: every link is Triton's own (bench/triton_cache.py's one-by-one anchor: triton-xpu's cost)."""

_lock = threading.Lock()


class _Library:
    """What this process knows of one set of libraries (make_llir's `paths`)."""

    def __init__(self, paths: tuple[str, ...]) -> None:
        self.paths = paths
        self.data = b"".join(Path(p).read_bytes() for p in paths)
        self.left_declared: set[str] = set()
        """Names a full link left as declarations: the libraries do not define them."""
        # The bytes test stands on names being stored raw: a function Intel's libdevice defines
        # (one Triton's libdevice.py calls) is found so, or the shortcut is never taken.
        self.usable = any(symbol.encode() in self.data for symbol in intel_symbols())
        self.metadata_file: str | None = None
        self.shortcuts = 0

    def defines_none_of(self, declared: set[str], defined: set[str]) -> bool:
        return self.usable and \
            all(n in self.left_declared or n.encode() not in self.data for n in declared) and \
            all(n.encode() not in self.data for n in defined)

    def learn(self, declared: set[str], still: set[str]) -> None:
        self.left_declared |= declared & still
        if any(n.encode() not in self.data for n in declared - still):
            self.usable = False  # a name resolved that the bytes test would have called absent


_libraries: dict[tuple[str, ...], _Library] = {}


def link_extern_libs(llvm: Any, module: Any, paths: list[str]) -> None:
    """Triton's `llvm.link_extern_libs(module, paths)`, with libdevice's metadata alone where
    the libraries define nothing the module declares or defines."""
    key = tuple(paths)
    if not ENABLED or not key:
        llvm.link_extern_libs(module, paths)
        return
    with _lock:
        lib = _libraries.get(key)
        if lib is None:
            try:
                lib = _libraries[key] = _Library(key)
            except OSError:  # Triton's own link says what is wrong with the file
                llvm.link_extern_libs(module, paths)
                return
    functions = [(f.name, f.is_declaration()) for f in module.get_functions()]
    declared = {name for name, decl in functions if decl}
    defined = {name for name, decl in functions if not decl}
    with _lock:  # what the process learnt, read and grown by one compile at a time
        metadata = metadata_only(llvm, lib) if lib.defines_none_of(declared, defined) else None
        lib.shortcuts += metadata is not None
    if metadata is not None:
        llvm.link_extern_libs(module, [metadata])
        return
    llvm.link_extern_libs(module, paths)
    still = {f.name for f in module.get_functions() if f.is_declaration()}
    with _lock:
        lib.learn(declared, still)


def metadata_only(llvm: Any, lib: _Library) -> str | None:
    """The libraries linked into an empty module (LLVM text, in the build cache by its hash):
    what a link that needs no function brings.  None where it cannot be written (the full link
    is made)."""
    if lib.metadata_file is None and lib.usable:
        from triton._C.libtriton import intel, ir

        context = ir.context()
        ir.load_dialects(context)
        llvm_context = llvm.context()  # held while the module lives
        empty = llvm.to_module(ir.builder(context).create_module(), llvm_context)
        intel.set_spv_target_triple(empty)  # as make_llir sets it before linking
        llvm.link_extern_libs(empty, list(lib.paths))
        text = str(empty)
        path = build_cache_dir() / "triton-link" / f"{hashlib.sha256(text.encode()).hexdigest()}.ll"
        try:
            if not path.is_file():
                atomic_write(path, text.encode(), durable=False)
        except OSError:  # a cache folder that cannot be written: every link the full one
            lib.usable = False
            return None
        lib.metadata_file = str(path)
    return lib.metadata_file


def shortcuts() -> int:
    """Links this process made with the metadata alone."""
    return sum(lib.shortcuts for lib in _libraries.values())


class LinkingLlvm:
    """Triton's `llvm` binding as the Intel backend's compiler module sees it during zeinspect's
    compiles (backend.offline): the same, its `link_extern_libs` this module's."""

    def __init__(self, llvm: Any) -> None:
        self._llvm = llvm

    def __getattr__(self, name: str) -> Any:
        return getattr(self._llvm, name)

    def link_extern_libs(self, module: Any, paths: list[str]) -> None:
        link_extern_libs(self._llvm, module, paths)
