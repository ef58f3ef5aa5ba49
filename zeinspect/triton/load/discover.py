"""The values a module launches its kernels with, read from the module's own host code.

Real modules compute a kernel's constexprs, launch options and argument dtypes in host code
(`BLOCK_SIZE = triton.next_power_of_2(n_cols)`, `num_warps = 32 if is_xpu() else 8`, fp16
tensors) and call it from their own tests at the bottom (`softmax(torch.randn(1823, 781))`).
Where the user gives no value and the kernel has no default or autotune config for it, this
runs the module as a program in a child process, with torch replaced by a stand-in that
only knows shapes and dtypes (triton.load.fake_torch) and every kernel launch recorded and then
stopped before anything is compiled or run: the first launch of each kernel gives its
values.  The child runs in a temporary folder (whatever the module writes lands there and is
removed), prints nowhere, and is killed after a time limit ($ZEINSPECT_LOAD_TIMEOUT); a
module whose host code never reaches a launch simply gives no values.

What is recorded per kernel: the line of the top-level statement that launched it; its
arguments by name, as Triton signature types for tensors and scalars (`*fp16`, `i32`) and as
values for constexprs; and the launch options (num_warps, num_stages, threads_per_warp,
grf_mode, num_ctas, maxnreg).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..model.launch import Launch

OPTIONS = ("num_warps", "num_stages", "threads_per_warp", "grf_mode", "num_ctas", "maxnreg", "warp_size")




def discover(paths: list[str], targets: list[dict], timeout: float) -> dict[str, dict[str, dict[str, Launch]]]:
    """module path -> target name -> kernel name -> Launch, for each of `targets` ({name,
    target: GPUTarget fields, properties}), in one child for all the modules; a module gets
    `timeout` seconds; {} where the child failed or a module reached no launch."""
    request = json.dumps({"paths": [str(Path(p).resolve()) for p in paths], "targets": targets, "timeout": timeout})
    with tempfile.TemporaryDirectory(prefix="zeinspect-discover-") as tmp:
        try:
            proc = subprocess.run([sys.executable, "-m", "zeinspect.triton.load.discover"], input=request,
                                  capture_output=True, text=True, timeout=timeout * (len(paths) + 1), cwd=tmp,
                                  env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        except subprocess.TimeoutExpired:
            return {}
    try:
        doc = json.loads(proc.stdout.splitlines()[-1]) if proc.returncode == 0 and proc.stdout.strip() else {}
    except ValueError:
        return {}
    return {path: {target: {kernel: Launch(**launch) for kernel, launch in kernels.items()}
                   for target, kernels in by_target.items()} for path, by_target in doc.items()}


# -- the child --------------------------------------------------------------------------------

class _Stop(Exception):
    """Raised at a launch: the launch is recorded and nothing is compiled or run."""


def _type_of(value: Any) -> str | None:
    from ..model.argtypes import type_of

    return type_of(value)


def _record(fn: Any, args: tuple, kwargs: dict, line: int, found: dict) -> None:
    from .fake_torch import Tensor

    names = [p.name for p in fn.params]
    constexpr = {p.name for p in fn.params if p.is_constexpr}
    given = dict(zip(names, args)) | {k: v for k, v in kwargs.items() if k in names}
    typed: dict[str, Any] = {}
    for name, value in given.items():
        if name in constexpr:
            if isinstance(value, (bool, int, float, str)) or value is None:
                typed[name] = value
        elif isinstance(value, (Tensor, bool, int, float)):
            kind = _type_of(value)
            if kind is not None:
                typed[name] = kind
    options = {k: v for k, v in kwargs.items() if k in OPTIONS and isinstance(v, (bool, int, float, str))}
    found.setdefault(fn.__name__, {"line": line, "args": typed, "options": options})


def _child() -> None:
    import signal

    request = json.loads(sys.stdin.read())

    def give_up(signum: int, frame: Any) -> None:  # noqa: ARG001 - a signal handler's arguments
        raise TimeoutError()

    signal.signal(signal.SIGALRM, give_up)
    out: dict[str, dict] = {}
    for path in request["paths"]:
        out[path] = {}
        for spec in request["targets"]:
            signal.setitimer(signal.ITIMER_REAL, request["timeout"])
            try:
                out[path][spec["name"]] = _launches(spec, path)
            except TimeoutError:
                out[path][spec["name"]] = {}
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    print(json.dumps(out))


def _launches(spec: dict, path: str) -> dict[str, dict]:
    """The first launch of each kernel when the module runs for this target (see the docstring)."""
    import builtins
    import contextlib
    import io

    import triton
    from triton.backends.compiler import GPUTarget
    from triton.runtime import autotuner, jit

    from ..offline.driver import OfflineDriver
    from . import fake_torch
    from .module import jit_function

    found: dict[str, dict] = {}
    current = {"line": 0}

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        fn = jit_function(self)
        if fn is not None:
            _record(fn, args, {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}, current["line"],
                    found)
        raise _Stop()

    saved = [(cls, cls.run) for cls in (jit.JITFunction, autotuner.Autotuner, autotuner.Heuristics)]
    for cls, _ in saved:
        cls.run = run  # type: ignore[method-assign]
    target = GPUTarget("xpu", spec["target"], spec["threads_per_warp"])
    triton.runtime.driver.set_active(OfflineDriver(target, spec["properties"]))
    torch = fake_torch.make()
    modules = {"torch": torch, "torch.autograd": torch.autograd, "torch.xpu": torch.xpu, "torch.cuda": torch.cuda}
    real_import = builtins.__import__

    def importing(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (),  # noqa: A002
                  level: int = 0) -> Any:
        if level == 0 and name.split(".")[0] == "torch":
            return modules.get(name, torch) if fromlist else torch
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = importing  # type: ignore[assignment]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            _run_module(path, current)
    finally:
        builtins.__import__ = real_import
        triton.runtime.driver.reset_active()
        for cls, original in saved:
            cls.run = original  # type: ignore[method-assign]
    return found


def _run_module(path: str, current: dict) -> None:
    """Every top-level statement in order, each on its own (one that fails or launches ends there)."""
    import ast
    import types

    from .loader import module_name, package_root

    source = Path(path).read_text(encoding="utf-8", errors="replace")
    root, top = package_root(Path(path))
    _, package = module_name(Path(path), root, top)
    module = types.ModuleType("__zeinspect_program__")
    module.__file__ = path
    module.__package__ = package
    sys.path.insert(0, str(root))
    sys.modules[module.__name__] = module
    for stmt in ast.parse(source, filename=path).body:
        current["line"] = stmt.lineno
        try:
            exec(compile(ast.Module(body=[stmt], type_ignores=[]), path, "exec"), module.__dict__)  # noqa: S102
        except TimeoutError:
            raise
        except BaseException:  # noqa: BLE001 - a launch stops here by design; anything else just ends the statement
            continue


if __name__ == "__main__":
    _child()
