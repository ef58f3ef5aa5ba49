"""The stand-in XPU device of a capture (`triton --run` with a CPU build of torch): `torch.xpu`
answers as the offline driver's target, and tensors a library puts on `xpu` stay on the CPU
while saying they are on the Intel GPU.

Why: most Triton libraries ask torch about the device before they launch anything (Liger's
`infer_device()` is `torch.xpu.is_available()`; its layer norm sizes its grid by
`torch.xpu.get_device_properties(X.device).gpu_eu_count` and picks its XPU branch on
`X.device.type == "xpu"`).  A CPU build of torch answers that there is no XPU, so a library
takes its CPU or CUDA branch, or stops ("Torch not compiled with XPU enabled").  With the
stand-in it takes its XPU branch, and the kernels captured are those it launches on an Intel
GPU.

What answers, from torch's own XPU code (torch/xpu/__init__.py, memory.py, streams.py, and
`_XpuDeviceProperties` in torch/_C/__init__.pyi, torch 2.13):
- `is_available` (True), `device_count` (1), `current_device` (0), `set_device`, `device` and
  `device_of` contexts, `is_initialized`, `init`, `synchronize`;
- `get_device_name` and `get_device_properties` (triton.offline.device: the device table for the
  target, the compiler's answers for its sub-group sizes, DPAS, 2D block IO, bf16 and fp64),
  `get_device_capability` (the same, as a dict, as torch builds it);
- `Stream`, `Event`, `current_stream`, `stream`, `set_stream` (they do nothing: nothing runs);
- the memory queries (nothing allocated; `mem_get_info` the whole memory free), `empty_cache`,
  the seeds.
Any other public `torch.xpu` function is an XPU-only call a CPU torch cannot stand in for: it
raises one line naming it, and the capture's summary names it.

Tensors: a tensor put on `xpu` is a real tensor on zeinspect's host XPU (triton.capture.host_xpu): host
memory, its operators run on the CPU.  Where the host XPU cannot be built (no C++ compiler), a
factory given `device="xpu"`, `.to("xpu")` and `.xpu()` give a CPU tensor of the class
XpuTensor, whose `device` is `xpu:0`, and what is computed from it is one too (torch's subclass
rules); `.cpu()` gives a plain tensor back.  Either way values are computed on the CPU: nothing
of Triton's runs, its launches are captured.  torch.compile needs the host XPU (triton.capture.inductor).

Also answered as torch's XPU build does: `torch.xpu._is_compiled()` (Inductor reads it when it
is imported), and `torch._C._xpu_getCurrentRawStream` (what Inductor's generated code imports).

Only the capture's child process imports this module, and only once the command imports torch
itself (install_when_imported): a command that never imports torch does not pay for it.  A
torch that has an XPU of its own is left as it is.
"""

from __future__ import annotations

# Every stand-in takes the arguments torch's own would, and reads only what it needs.
# ruff: noqa: ARG002
import importlib.abc
import importlib.util
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from ..offline.device import properties

Write = Callable[[dict], None]

STOOD_IN = ("is_available", "device_count", "current_device", "set_device", "device", "device_of", "is_initialized",
            "init", "synchronize", "get_device_name", "get_device_properties", "get_device_capability", "Stream",
            "Event", "current_stream", "stream", "set_stream", "StreamContext", "empty_cache", "memory_allocated",
            "max_memory_allocated", "memory_reserved", "max_memory_reserved", "mem_get_info", "memory_stats",
            "reset_peak_memory_stats", "reset_accumulated_memory_stats", "manual_seed", "manual_seed_all", "seed",
            "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
            "seed_all", "initial_seed", "is_bf16_supported", "is_tf32_supported", "get_arch_list",
            "device_memory_used", "is_current_stream_capturing", "default_generators", "streams")


class _OnImport(importlib.abc.MetaPathFinder):
    """Runs `then(module)` once `name` has been imported by the command itself."""

    def __init__(self, name: str, then: Callable[[Any], None]) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute, then = spec.loader.exec_module, self.then

        def exec_module(module: Any) -> None:
            execute(module)
            then(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install_when_imported(spec: dict, write: Write) -> None:
    """Stand in for the XPU once the command imports torch (at once if it already has)."""
    def then(torch: Any) -> None:
        try:
            install(torch, spec, write)
        except Exception as exc:  # noqa: BLE001 - the user's command must run whatever happens here
            write({"error": f"zeinspect could not stand in for torch.xpu: {exc.__class__.__name__}: {exc}"})

    if "torch" in sys.modules:
        then(sys.modules["torch"])
    else:
        sys.meta_path.insert(0, _OnImport("torch", then))


class Properties:
    """torch's _XpuDeviceProperties, for the target: each field read is told."""

    def __init__(self, figures: dict[str, Any], tell: Callable[[str], None]) -> None:
        object.__setattr__(self, "_figures", figures)
        object.__setattr__(self, "_tell", tell)

    def __getattr__(self, key: str) -> Any:
        figures = object.__getattribute__(self, "_figures")
        if key not in figures:
            raise AttributeError(key)
        object.__getattribute__(self, "_tell")(f"get_device_properties().{key}")
        return figures[key]

    def __dir__(self) -> list[str]:
        return list(object.__getattribute__(self, "_figures"))

    def __repr__(self) -> str:
        f = object.__getattribute__(self, "_figures")
        return (f"_XpuDeviceProperties(name='{f['name']}', platform_name='{f['platform_name']}', type='gpu', "
                f"total_memory={f['total_memory'] // 1024 ** 2}MB, max_compute_units={f['max_compute_units']}, "
                f"gpu_eu_count={f['gpu_eu_count']})")


class Event:
    def __init__(self, enable_timing: bool = False, **_: Any) -> None:
        pass

    def record(self, stream: Any = None) -> None:
        pass

    def wait(self, stream: Any = None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: Any) -> float:
        return 0.0


class Stream:
    device: Any = None
    """torch.device("xpu", 0), set by install()."""

    def __init__(self, device: Any = None, priority: int = 0, **_: Any) -> None:
        self.priority, self.sycl_queue = priority, 0

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        pass

    def wait_event(self, event: Any) -> None:
        pass

    def wait_stream(self, stream: Any) -> None:
        pass

    def record_event(self, event: Any = None) -> Any:
        return event or Event()


class Context:
    """`torch.xpu.device(...)`, `device_of(...)`, `stream(...)`: contexts that change nothing."""

    def __init__(self, *_: Any, **__: Any) -> None:
        pass

    def __enter__(self) -> Context:
        return self

    def __exit__(self, *_: object) -> Literal[False]:
        return False


def install(torch: Any, spec: dict, write: Write) -> None:
    if torch.xpu.is_available():
        return  # a torch with an XPU of its own answers for itself
    told: set[str] = set()

    def tell(what: str) -> None:
        if what not in told:
            told.add(what)
            write({"xpu": what})

    figures = properties(spec)

    xpu_device = torch.device("xpu", 0)
    from .host_xpu import backward_on_the_calling_thread, register, run_attention_as_math

    try:
        # Tensors on xpu are real, in host memory (triton.capture.host_xpu).
        register(torch, Path(spec["device_dir"]))
        backward_on_the_calling_thread(torch)
        run_attention_as_math(torch)
        hosted = True
    except (OSError, subprocess.SubprocessError) as exc:
        write({"error": f"zeinspect's host XPU device did not build ({exc.__class__.__name__}: {exc}); tensors "
                        "put on xpu are CPU tensors that say they are there, and torch.compile cannot trace for xpu"})
        _stand_in_tensors(torch, xpu_device)
        hosted = False

    Stream.device = xpu_device
    default_stream = Stream()
    answers: dict[str, Any] = {
        "is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
        "set_device": lambda device: None, "device": Context, "device_of": Context, "is_initialized": lambda: True,
        "init": lambda: None,
        "synchronize": lambda device=None: None, "get_device_name": lambda device=None: figures["name"],
        "get_device_properties": lambda device=None: Properties(figures, tell),
        "get_device_capability": lambda device=None: capability(figures),
        "Stream": Stream, "Event": Event, "StreamContext": Context, "stream": Context,
        "current_stream": lambda device=None: default_stream, "set_stream": lambda stream: None,
        "is_current_stream_capturing": lambda: False,
        "empty_cache": lambda: None, "memory_allocated": lambda device=None: 0,
        "max_memory_allocated": lambda device=None: 0, "memory_reserved": lambda device=None: 0,
        "max_memory_reserved": lambda device=None: 0, "device_memory_used": lambda device=None: 0,
        "mem_get_info": lambda device=None: (figures["total_memory"], figures["total_memory"]),
        "memory_stats": lambda device=None: {}, "reset_peak_memory_stats": lambda device=None: None,
        "reset_accumulated_memory_stats": lambda device=None: None,
        # torch.manual_seed and torch.seed call these for every device; values come from the
        # CPU's generator, which torch seeds itself (so they must not call back into torch's).
        "manual_seed": lambda seed: None, "manual_seed_all": lambda seed: None, "seed": lambda: None,
        "seed_all": lambda: None, "initial_seed": torch.initial_seed,
        "get_rng_state": lambda device="xpu": torch.get_rng_state(), "set_rng_state": lambda state, device="xpu": None,
        "get_rng_state_all": lambda: [torch.get_rng_state()], "set_rng_state_all": lambda states: None,
        "is_bf16_supported": lambda including_emulation=True: True,
        "is_tf32_supported": lambda: figures["has_subgroup_matrix_multiply_accumulate_tensor_float32"],
        "get_arch_list": lambda: [],
    }
    for key, value in answers.items():
        setattr(torch.xpu, key, _told(key, value, tell) if callable(value) and not isinstance(value, type) else value)
    torch.xpu._lazy_init = lambda: None  # what torch itself calls before it makes a tensor on xpu
    # What torch's XPU build answers; Inductor decides its XPU-only lowerings by it when it is
    # imported (lowering.py: embedding_dense_backward falls back on xpu instead of decomposing).
    torch.xpu._is_compiled = lambda: True
    # What the code Inductor generates for xpu imports (its wrapper's stream, never asked for here).
    torch._C._xpu_getCurrentRawStream = lambda device=0: 0
    for key in getattr(torch.xpu, "__all__", ()):
        if key not in STOOD_IN and callable(getattr(torch.xpu, key, None)):
            setattr(torch.xpu, key, _refused(key, write))
    if hosted:
        from .inductor import install as generate_for_xpu

        generate_for_xpu(torch, write)
    write({"xpu_target": spec.get("name"), "xpu_name": figures["name"], "xpu_tensors": "host" if hosted else "cpu"})


def capability(figures: dict[str, Any]) -> dict[str, Any]:
    """`get_device_capability` as torch builds it from the properties: only the fields of types
    that serialize (torch/xpu/__init__.py), so not the UUID's bytes (Inductor writes this dict
    into the kernels' source, where bytes would be a NUL in a string literal)."""
    return {key: value for key, value in figures.items()
            if isinstance(value, (int, float, bool, str, type(None), list, tuple, dict))}


def _told(key: str, fn: Callable, tell: Callable[[str], None]) -> Callable:
    def answer(*args: Any, **kwargs: Any) -> Any:
        tell(key)
        return fn(*args, **kwargs)

    answer.__name__ = key
    return answer


def _refused(key: str, write: Write) -> Callable:
    def refuse(*_: Any, **__: Any) -> Any:
        message = (f"torch.xpu.{key}: an XPU-only call that zeinspect's stand-in device (a CPU build of torch) "
                   "cannot answer")
        write({"xpu_refused": key, "error": message})
        raise RuntimeError(message)

    return refuse


def _stand_in_tensors(torch: Any, xpu_device: Any) -> None:
    """Tensors put on `xpu` are CPU tensors of the class XpuTensor, which say they are on it."""
    from torch.utils._python_dispatch import TorchDispatchMode

    Tensor = torch.Tensor  # noqa: N806 - torch's own name

    class XpuTensor(Tensor):  # type: ignore[valid-type,misc]
        @property
        def device(self) -> Any:  # type: ignore[override]
            return xpu_device

        @property
        def is_xpu(self) -> bool:  # type: ignore[override]
            return True

        @property
        def is_cpu(self) -> bool:  # type: ignore[override]
            return False

        def get_device(self) -> int:  # type: ignore[override]
            return 0

    fake = torch._C._TorchDispatchModeKey.FAKE

    def on_xpu(device: Any) -> bool:
        """A device argument naming the XPU, outside a fake-tensor mode (torch.compile's tracing
        makes its xpu tensors of its own, on the meta device)."""
        named = (isinstance(device, str) and device.split(":")[0] == "xpu") or \
            (isinstance(device, torch.device) and device.type == "xpu")
        return named and torch._C._get_dispatch_mode(fake) is None

    def wrap(out: Any) -> Any:
        if type(out) is Tensor:
            with torch._C.DisableTorchFunctionSubclass():
                return out.as_subclass(XpuTensor)
        if isinstance(out, (tuple, list)):
            return type(out)(wrap(o) for o in out)
        return out

    def plain(out: Any) -> Any:
        if isinstance(out, XpuTensor):
            with torch._C.DisableTorchFunctionSubclass():
                return out.as_subclass(Tensor)
        return out

    # What torch refuses for `xpu` before any operator runs (a device guard, or a factory that
    # bypasses the dispatcher's Python modes): replaced where the library looks them up, so
    # they answer at any depth of its code, a backward pass included.
    def moving(fn: Callable) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            moved = on_xpu(kwargs.get("device")) or any(on_xpu(a) for a in args[1:])  # args[0]: data, self
            if on_xpu(kwargs.get("device")):
                kwargs["device"] = "cpu"
            out = fn(*tuple("cpu" if on_xpu(a) else a for a in args), **kwargs)
            return wrap(out) if moved else out

        return call

    for name in ("tensor", "as_tensor", "asarray"):
        setattr(torch, name, moving(getattr(torch, name)))
    original_to, original_cpu = Tensor.to, Tensor.cpu

    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        if any(isinstance(a, XpuTensor) for a in args):  # to(other): other's device and dtype
            return wrap(original_to(self, *(a.dtype if isinstance(a, XpuTensor) else a for a in args), **kwargs))
        return moving(original_to)(self, *args, **kwargs)

    Tensor.to = to
    Tensor.xpu = lambda self, *_, **__: wrap(self)
    Tensor.cpu = lambda self, *args, **kwargs: plain(original_cpu(self, *args, **kwargs))
    Tensor.new_tensor = moving(Tensor.new_tensor)

    class OnXpuOps(TorchDispatchMode):
        """Every operator asked for a tensor on `xpu` (a factory's `device=`), at any depth of the
        library's code (an autograd backward included): made on the CPU, and said to be on xpu."""

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            if on_xpu(kwargs.get("device")):
                kwargs["device"] = torch.device("cpu")
                return wrap(func(*args, **kwargs))
            out = func(*args, **kwargs)
            # What is computed from a tensor on xpu is there too (autograd's gradients included),
            # but an operator that writes into its argument returns that argument as it is.
            if func._schema.is_mutable or not any(isinstance(a, XpuTensor) for a in (*args, *kwargs.values())):
                return out
            return wrap(out)

    OnXpuOps().__enter__()  # for the rest of the command's life

