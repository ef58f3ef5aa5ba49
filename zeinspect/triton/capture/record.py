"""`zeinspect triton --run -- CMD`: every Triton kernel a library's own code launches, captured.

The command runs in its own process (its tests, an example, a user's script), with no Intel
GPU: Python starts it with this module installed (a `sitecustomize` on its PYTHONPATH, so the
library's own `import triton` finds it in place), which

- makes zeinspect's offline driver Triton's active driver (the target's answers, no device),
  and has benchmarks (the autotuner's, `triton.testing.do_bench`) call a kernel once;
- sets Triton's own pre-compile hook (`JITFunction.cache_hook`, called with the signature,
  constexprs, specialization attributes and options Triton derived from the real launch
  arguments), records each launch as one JSON line, and answers that nothing is to be
  compiled or launched: the launch returns and the library's code goes on;
- notes each launch's call site (the first frame outside Triton) and the device its tensors
  were on;
- with a CPU build of torch, stands in for the XPU once the command imports torch
  (triton.capture.xpu): `torch.xpu` answers as the target, tensors put on `xpu` say they are there,
  and which answers the library read are written as lines of their own.

One JSON line per launch, appended and flushed as it happens: a crash, a hang (killed at the
time limit) or an `os._exit` of the command loses nothing captured before it.  Nothing of
zeinspect stays in the user's environment, and Triton's cache is a temporary folder.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import sys
import threading
from typing import Any

from .frames import first_frame_outside, own_folders

CAPTURE_ENV = "ZEINSPECT_TRITON_CAPTURE"
"""Where the child appends its launches (one JSON line each)."""
TARGET_ENV = "ZEINSPECT_TRITON_CAPTURE_TARGET"
"""What the capture is told (triton.app.library.capture_target): the target the offline driver
answers for ({"caps": ..., "name": ..., "threads_per_warp": ...}), "front_end" (launches through
Triton's front end) and "device_dir" (where the host XPU is built)."""

_LOCK = threading.Lock()
_FRONT_LOCK = threading.RLock()
_CALL = threading.local()
_SAVED: dict[str, Any] = {}
"""What install() replaced, for uninstall() (a test session captures in its own process)."""


def install() -> None:
    """In the command's process (sitecustomize): capture if asked, else do nothing at all."""
    out = os.environ.get(CAPTURE_ENV)
    if not out:
        return
    try:
        _install(out, json.loads(os.environ.get(TARGET_ENV, "{}")))
    except Exception as exc:  # noqa: BLE001 - the user's command must run whatever happens here
        _write(out, {"error": f"zeinspect could not install its capture: {exc.__class__.__name__}: {exc}"})


def _install(out: str, spec: dict) -> None:
    import triton  # noqa: F401 - Triton's own modules below need it imported
    import triton.testing
    from triton.backends import backends
    from triton.runtime import driver
    from triton.runtime.jit import JITFunction

    from ..offline.compiler import gpu_target, offline_backend_class
    from ..offline.device import device_properties
    from ..offline.driver import OfflineDriver

    class CaptureDriver(OfflineDriver):
        def get_benchmarker(self) -> Any:
            return _once

    _SAVED.update(backend=backends["intel"], do_bench=triton.testing.do_bench, run=JITFunction.run,
                  cache_hook=JITFunction.cache_hook, driver=driver.active)
    # The Intel backend as zeinspect runs it offline (its constructor builds a SYCL helper otherwise).
    backends["intel"] = dataclasses.replace(backends["intel"], compiler=offline_backend_class())
    caps, name, tpw = spec.get("caps", {}), spec.get("name", "bmg-g21"), spec.get("threads_per_warp", 32)
    driver.set_active(CaptureDriver(gpu_target(caps, name, tpw), device_properties(caps, name)))
    triton.testing.do_bench = _once  # type: ignore[assignment]
    original = JITFunction.run

    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        _CALL.site = _site()
        _CALL.devices = sorted({str(getattr(a, "device", "")).split(":")[0] for a in (*args, *kwargs.values())
                                if hasattr(a, "device") and hasattr(a, "data_ptr")})
        return original(self, *args, **kwargs)

    JITFunction.run = run  # type: ignore[method-assign]
    front_end = bool(spec.get("front_end", True))
    JITFunction.cache_hook = lambda **hook: _record(out, hook, front_end=front_end)
    if spec.get("xpu", True):
        from .xpu import install_when_imported

        install_when_imported(spec, lambda record: _write(out, record))


def uninstall() -> None:
    """Triton as it was before install(): its backend, driver, benchmark, launch and hook."""
    if not _SAVED:
        return
    import triton.testing
    from triton.backends import backends
    from triton.runtime import driver
    from triton.runtime.jit import JITFunction

    backends["intel"] = _SAVED.pop("backend")
    triton.testing.do_bench = _SAVED.pop("do_bench")
    JITFunction.run = _SAVED.pop("run")  # type: ignore[method-assign]
    JITFunction.cache_hook = _SAVED.pop("cache_hook")
    driver.set_active(_SAVED.pop("driver"))


def _once(fn: Any, *_args: Any, quantiles: Any = None, **_options: Any) -> Any:
    """A benchmark without a GPU: the kernel called once (its launch is captured), a nominal time."""
    fn()
    return [1.0] * len(quantiles) if quantiles else 1.0


def _site() -> str | None:
    """The launch's call site: the first frame outside Triton's and zeinspect's own packages
    (by their folders: a library kept in a folder named `zeinspect` is still the library)."""
    return first_frame_outside(own_folders(), sys._getframe(2))


_FRONT_END: dict[tuple[int, str], tuple[Any, dict]] = {}
"""(id of the JITFunction, Triton's key of the launch) -> what its front end gave: each distinct
specialization goes through it once; its later launches reuse it (Triton calls the hook at
every launch here: nothing is ever compiled into its kernel cache).  The function is kept beside
its result, so its id is never another's."""


def _record(out: str, hook: dict, *, front_end: bool) -> bool:
    """Triton's cache_hook: one launch, as Triton specialized it, taken through Triton's front end
    to its TTIR in the capture's Triton cache (triton.capture.first_stage: the function that really ran,
    with its globals) and written; True: compile nothing more (the launch returns, nothing runs)."""
    info = hook["fn"]
    fn = info.jit_function
    data = json.loads(hook["compile"]["specialization_data"])
    names = [p.name for p in fn.params]
    constexprs = {names[key[0]]: _constexpr(value) for key, value in hook["compile"]["constants"].items()
                  if len(key) == 1}
    options = data.get("options", {})
    memo = (id(fn), str(hook["key"]))
    with _FRONT_LOCK:  # Triton's compile, and the stage swap around it, one launch at a time
        kept = _FRONT_END.get(memo)
        if kept is None:
            from triton.runtime import driver

            from .first_stage import through_front_end

            kept = _FRONT_END[memo] = (fn, through_front_end(fn, hook["compile"], options,
                                                             driver.active.get_current_target())
                                       if front_end else {})
    built = kept[1]
    _write(out, {**built,
        "file": inspect.getsourcefile(fn.fn), "kernel": info.name, "line": getattr(fn, "starting_line_number", None),
        "site": getattr(_CALL, "site", None), "devices": getattr(_CALL, "devices", []),
        "signature": {k: v for k, v in data["signature"].items() if v != "constexpr"},
        "constexprs": constexprs,
        "attrs": [[key, value] for key, value in zip(data["attrs_keys"], data["attrs_vals"])],
        "num_warps": options.get("num_warps"), "num_stages": options.get("num_stages"),
        "grf_mode": options.get("grf_mode"), "threads_per_warp": options.get("warp_size"),
        "warmup": hook.get("is_manual_warmup", False)})
    return True


def _constexpr(value: Any) -> Any:
    """A constexpr as JSON keeps it: a Triton dtype by its name (triton.model.argtypes.DTYPE_PREFIX)."""
    from ..model.argtypes import DTYPE_PREFIX

    if value.__class__.__name__ == "dtype":
        return f"{DTYPE_PREFIX}{value}"
    return value if isinstance(value, (int, float, str, bool)) or value is None else str(value)


def _write(out: str, record: dict) -> None:
    line = json.dumps(record, default=str) + "\n"
    with _LOCK, open(out, "a", encoding="utf-8") as f:
        f.write(line)
        f.flush()
