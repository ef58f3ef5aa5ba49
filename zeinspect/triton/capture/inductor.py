"""What `torch.compile` generates for an Intel GPU, captured in `triton --run` with a CPU build
of torch: Inductor's own code generation for device `xpu`, on the host XPU (triton.capture.host_xpu).

How a command's `torch.compile` reaches Inductor's XPU code generation here:
- its model and inputs are on the host XPU (real tensors on `xpu`), so TorchDynamo's fake
  tensors, its graphs and AOTAutograd's forward and backward are on `xpu`;
- Inductor asks `torch.xpu` for the device's properties and capability (the stand-in answers
  as the target, triton.capture.xpu), reads `torch.xpu._is_compiled()` as torch's XPU build answers it,
  runs on the host XPU what it runs on the device while compiling (constant folding, the
  pattern matcher's example tensors), and lowers each graph with its XPU heuristics into Triton
  kernels, each with its autotune configs;
- every config of every kernel goes to Triton as Inductor sends it (`_precompile_config`:
  Inductor's signature, constants, divisibility and options for XPU); Triton's own pipeline
  runs to its first stage and writes the TTIR and metadata into the capture's Triton cache; one
  line per config names that entry, and zeinspect screens it on every target as a cache entry
  (triton.sources.cache, triton.app.library);
- the backward graph is lowered when the forward is (`force_non_lazy_backward_lowering`), and
  compiles run in the command's process (`compile_threads=1`), where the capture is;
- the command goes on with the traced graph run eagerly on the host XPU: values are computed on
  the CPU, and nothing Inductor generated is run (there is no device).

Under max-autotune, every config of every Triton template Inductor offers for the problem (its
GEMM templates for xpu) is precompiled here, one after another, and screened (_templates); the
benchmarks that would choose between them need a device and are not run: the graph keeps the
ATen call.

What needs torch's real XPU build: scaled_dot_product_attention's kernel choice (made in C++
per device; the frame that calls it runs uncompiled, Dynamo's suppress_errors, and one line says
so), and anything that times kernels on the device (max-autotune's benchmarks, runtime
autotuning between configs): every config is screened instead.  Inductor's caches are off;
the code it writes goes to a folder of zeinspect's build cache (`TORCHINDUCTOR_CACHE_DIR`).
"""

from __future__ import annotations

import ast
import contextvars
import functools
import logging
import os
import re
from collections.abc import Callable
from typing import Any

from .first_stage import Written, first_stage_only
from .frames import first_frame_outside, own_folders

Write = Callable[[dict], None]


def install(torch: Any, write: Write) -> None:
    """torch.compile, in the captured command: Inductor's generation for the stand-in XPU, on the
    host XPU (without it Dynamo cannot trace for xpu: triton.capture.xpu says so and installs nothing)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    original = torch.compile

    @functools.wraps(original)
    def compile(*args: Any, **kwargs: Any) -> Any:  # noqa: A001 - torch's own name
        _ready(torch, write)
        return original(*args, **kwargs)

    torch.compile = compile
    # No device is initialised while torch traces fake tensors (what torch does for CUDA on a
    # machine without one: `torch.tensor(..., device=...)` made on the CPU, then lifted);
    # torch's XPU build asks torch.xpu.is_available(), which the stand-in answers yes.
    FakeTensorMode.avoid_device_init = property(lambda self: True)  # type: ignore[method-assign]


@functools.cache
def _ready(torch: Any, write: Write) -> None:
    """Once, at the command's first torch.compile: Inductor's compile and precompile wrapped."""
    from torch._inductor.runtime import triton_heuristics

    wrapper = torch._TorchCompileInductorWrapper
    generate = wrapper.__call__

    def call(self: Any, model: Any, inputs: Any) -> Any:
        from torch._functorch import config as functorch_config
        from torch._inductor import config as inductor_config

        try:
            # Inductor's own caches off: a graph taken from them may load its backward only when it
            # runs (never, here), and every run must show Triton every kernel it generates.
            # max-autotune's templates are screened in this thread (_templates): not in autotuning
            # subprocesses or a pipelined thread, and no fused template+epilogue is benchmarked.
            with inductor_config.patch(compile_threads=1, fx_graph_cache=False, autotune_local_cache=False,
                                       autotune_in_subproc=False, pipeline_max_autotune_gemm=False,
                                       benchmark_epilogue_fusion=False), \
                    functorch_config.patch(force_non_lazy_backward_lowering=True, enable_autograd_cache=False):
                generate(self, model, inputs)
        except Exception as exc:  # noqa: BLE001 - the command goes on; the one line says what stopped
            write({"error": f"Inductor stopped generating for xpu: {exc.__class__.__name__}: "
                            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]})
        return model  # the graph runs as traced, on the CPU: nothing generated is run

    wrapper.__call__ = call
    # A frame Dynamo cannot trace for xpu here runs uncompiled, as torch.compile does with
    # suppress_errors, and the capture says which and why (one line each): the command goes on.
    from torch._dynamo import config as dynamo_config

    dynamo_config.suppress_errors = True
    logging.getLogger("torch._dynamo.convert_frame").addHandler(_Uncompiled(write))
    precompile = triton_heuristics.CachingAutotuner.precompile

    def record(self: Any, *args: Any, **kwargs: Any) -> Any:
        if getattr(self.device_props, "type", None) != "xpu":
            return precompile(self, *args, **kwargs)
        kernel = self.inductor_meta.get("kernel_name") or self.fn.__name__
        where = {"kernel": kernel, "graph": _graph(), "site": _site(torch), "devices": ["xpu"]}
        template = _choice.get()
        if template is not None:  # a max-autotune template's config: its own module, one config
            where.update(template=template["template"], problem=template["problem"])
        with first_stage_only() as entry:
            for config in self.configs or ():
                values = {**(template or {}).get("config", {}), **config.kwargs,
                          "num_warps": config.num_warps, "num_stages": config.num_stages}
                try:
                    self._precompile_config(config)
                except Written:
                    write({"inductor": entry.get("path"), **where, "config": values})
                except Exception as exc:  # noqa: BLE001 - one config's front end failing is its line, the rest go on
                    write({"error": f"{kernel} ({values}): Triton's front end for xpu: {exc.__class__.__name__}: "
                                    f"{(str(exc).strip().splitlines() or [''])[0]}"[:300]})
        return None  # no launchers: nothing generated is run

    triton_heuristics.CachingAutotuner.precompile = record
    _templates()


# The template choice whose kernel is compiling (max-autotune): its problem and config name the capture.
_choice: contextvars.ContextVar[dict | None] = contextvars.ContextVar("zeinspect_template", default=None)


def _templates() -> None:
    """max-autotune: every config of every template Inductor offers (its Triton GEMM templates for
    xpu, each config a module of its own) goes to Triton's first stage and is screened, as a
    generated kernel's configs are.

    Inductor precompiles a template's choices in a thread pool (select_algorithm.py,
    make_precompile_fn), then times each on the device (benchmark_choices).  Here each choice's
    module is loaded and its kernel precompiled in the command's thread, one after another (the
    capture swaps Triton's compile: threads would race), and nothing is timed: there is no
    device.  The timings given back keep Inductor's own choice where it has one that needs no
    compile (the ATen call, its extern choice), so the graph it writes is the one a user without
    max-autotune gets, and every template config is screened."""
    from torch._inductor import select_algorithm
    from torch._inductor.codecache import PyCodeCache

    selector = select_algorithm.AlgorithmSelectorCache

    def make_precompile_fn(_self: Any, choices: Any, name: str, *_args: Any, **_kwargs: Any) -> Callable[[], dict]:
        def precompile() -> dict:
            for choice in choices:
                bmreq = getattr(choice, "bmreq", None)
                if not isinstance(choice, select_algorithm.TritonTemplateCaller) or bmreq is None:
                    continue
                # The template's uid (`triton::mm`: its heuristics' key, template_heuristics/registry.py)
                # and the op it serves (`mm`, `addmm`: the name Inductor selects for).
                uid = "triton::" + str(bmreq.kernel_name).removeprefix("triton_")
                token = _choice.set({"template": f"{uid} for {name}", "problem": _problem(choice),
                                     "config": _config(choice)})
                try:
                    module = PyCodeCache.load_by_key_path(bmreq.module_cache_key, bmreq.module_path,
                                                          set_sys_modules=False)
                    getattr(module, bmreq.kernel_name).precompile()  # -> record: its config captured
                finally:
                    _choice.reset(token)
            return {}
        return precompile

    def benchmark_choices(cls: Any, choices: Any, *_args: Any, **_kwargs: Any) -> dict:
        return {choice: 1.0 if cls._is_extern(choice) else 2.0 for choice in choices}

    selector.make_precompile_fn = make_precompile_fn
    selector.benchmark_choices = classmethod(benchmark_choices)
    # The timings above are not measurements: Inductor's table of them is not printed.
    selector.log_results = staticmethod(lambda *_args, **_kwargs: None)


def _problem(choice: Any) -> str:
    """A template choice's problem, as its inputs' sizes and the output's dtype: `256x512, 512x1024
    -> bf16` (every config of one matmul has the same)."""
    sizes = []
    for node in choice.input_nodes:
        try:
            sizes.append("x".join(str(s) for s in node.get_size()))
        except Exception:  # noqa: BLE001 - a size Inductor cannot say is left out of the name, not the capture
            sizes.append("?")
    dtype = str(getattr(choice.layout, "dtype", "")).removeprefix("torch.")
    return f"{', '.join(sizes)} -> {dtype}"


def _config(choice: Any) -> dict:
    """A template choice's config, from its description (`BLOCK_K=32, BLOCK_M=64, ..., num_warps=4`,
    select_algorithm.py: TritonTemplate.generate)."""
    out: dict[str, Any] = {}
    for item in str(choice.description).split(", "):
        key, eq, value = item.partition("=")
        if eq and key.strip():
            try:
                out[key.strip()] = ast.literal_eval(value)
            except (ValueError, SyntaxError):
                out[key.strip()] = value
    return out


class _Uncompiled(logging.Handler):
    """Dynamo's warning that a frame's compile failed and it runs uncompiled: one capture line
    per reason, naming the first frame it stopped (the same reason stops every frame around it)."""

    def __init__(self, write: Write) -> None:
        super().__init__(logging.WARNING)
        self.write = write
        self.said: set[str] = set()

    def emit(self, record: logging.LogRecord) -> None:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None:
            return
        why = _reason(exc)
        if why in self.said:
            return
        self.said.add(why)
        frame = re.search(r"WON'T CONVERT (\S+) (\S+) line (\d+)", record.getMessage())
        where = f"{frame[1]} ({frame[2]}:{frame[3]})" if frame else "a frame"
        self.write({"error": f"torch.compile: {where} and the frames around it ran uncompiled: {why}"[:500]})


def _reason(exc: BaseException) -> str:
    text = str(exc)
    if "unexpected device type was provided xpu" in text:
        op = re.search(r"call_function <(?:built-in )?function (\w+)", text)
        return (f"{op[1] if op else 'an operator'}: its kernel for xpu is chosen inside torch's XPU build (a "
                "per-device DispatchStub), which this CPU torch does not have")
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return f"{exc.__class__.__name__}: {first}"


def _site(torch: Any) -> str | None:
    """The line of the command's code that ran what torch.compile compiled: its line in the
    command's own script (`python train.py`: where train.py called the model), else the first
    frame outside torch, Triton, zeinspect and Inductor's own modules (a library's wrapper)."""
    import sys

    main = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else None
    frame = sys._getframe(2)
    while frame is not None:
        if main and frame.f_code.co_filename == main:
            return f"{main}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    skip = (*own_folders(), os.path.dirname(os.path.abspath(torch.__file__)) + os.sep,
            *((os.path.abspath(cache) + os.sep,) if cache else ()))
    return first_frame_outside(skip, sys._getframe(2), generated=False)


def _graph() -> str | None:
    """Which of the command's compiled graphs Inductor is generating: Dynamo's compile id, as
    Inductor's own logs name it (`0/0`), and which of AOTAutograd's graphs under it (`0/0
    forward`, `0/0 backward`, `1/0 inference`).  The backward is lowered with the forward, under
    the same id, and numbers its kernels from 0 as the forward does: without its role, a
    forward and a backward kernel of one graph can have the same name."""
    import torch
    from torch._inductor.virtualized import V

    compile_id = torch._guards.CompileContext.current_compile_id()
    if compile_id is None:
        return None
    lowering = V.graph  # the GraphLowering whose module is loading (its kernels precompile as it loads)
    if getattr(lowering, "is_backward", None) is None:
        return str(compile_id)
    role = "backward" if lowering.is_backward else "inference" if lowering.is_inference else "forward"
    return f"{compile_id} {role}"
