"""zeinspect for Triton: offline builds of `@triton.jit` kernels, their autotune screen and shape
search, what a library launches as it runs, a Triton cache re-screened, and the prune hook
(`zeinspect.triton.prune_configs`).

One optional package that the core never imports; importing it loads nothing (triton.plugin
registers it with the core).  Its floor plan mirrors the core's, bottom to top: a module imports
only from its own floor or the floors below (tests/unit/test_layers.py):
  model/    the vocabulary: the kernel request, levers and their shape, Triton's build policy,
            argument types, TTGIR names, a module's launch, the one placeholder, gate entries
  offline/  Triton-XPU's Intel backend and driver without a device, and its libdevice link
  load/     a module as its author wrote it, without running its program code
  build/    one Triton compile (with the offline backend in place), the SLM staging pass,
            the warm cache of its results, the front-end worker processes
  capture/  what runs inside the captured command's process (the pre-compile hook, the stand-in
            XPU device, Inductor's hooks): it imports only capture/, offline/ and model/ (and
            what it is told by zeinspect's process, it reads no setting), so the user's process
            loads nothing else of zeinspect but the device table and the error types that
            offline/ stands on
  sources/  where a library screen's specializations come from: a run's launches, a Triton cache
  probes/   builds audited into reports: one kernel, an autotune screen, many in batches,
            loop traffic, the lines that spill
  views.py  text and JSON
  app/      the use cases (the door: app/__init__.py) and the prune hook and suite gate
  plugin.py its registration with the core
The map of every module, made from the tree: docs/contributing.md, "The package map".
"""

from __future__ import annotations

from typing import Any

FLOORS = ("model", "offline", "load", "build", "capture", "sources", "probes", "judge", "views", "app")
"""The floors above, bottom to top (judge.py and views.py are one module each); the layer test
holds every module to them (tests/unit/test_layers.py), the package map lists them in this order."""


def inductor_choices(**kwargs: Any) -> Any:
    """A factory for `torch._inductor.config.inductor_choices_class` that drops the Triton template
    configs that do not build (or spill more than asked) on the targets, before Inductor
    compiles or benchmarks them (triton.app.hook)."""
    from . import plugin  # noqa: F401 - the hook reads the gate's settings, the build policy's among them
    from .app.hook import inductor_choices as make

    return make(**kwargs)


def prune_configs(**kwargs: Any) -> Any:
    """An `early_config_prune` function for `@triton.autotune(prune_configs_by=...)` (triton.app.hook)."""
    from . import plugin  # noqa: F401 - the hook reads the gate's settings, the build policy's among them
    from .app.hook import prune_configs as make

    return make(**kwargs)
