"""One specialization of a kernel, as a library screen keeps it: the kernel as Triton specialized
it (its values, warps, attributes), how often and where it was launched or found, and what
sets it apart in a row (triton.sources read them: a run's launches, a Triton cache's entries)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .argtypes import DTYPE_PREFIX
from .kernel import TritonKernel


@dataclass
class Specialization:
    kernel: TritonKernel
    launches: int = 0
    """How often it was launched (a capture) or found (copies in a Triton cache)."""
    sites: list[str] = field(default_factory=list)
    devices: set[str] = field(default_factory=set)
    origin: str | None = None
    """The kernel's Python file where `kernel.file` is not it (a cache entry's TTIR names it)."""
    tag: str | None = None
    """What else sets it apart where its constexprs are not known (a cache entry's folder)."""
    graph: str | None = None
    """The torch.compile graph Inductor generated it for, in a capture (triton.capture.inductor); None
    for a kernel the command launched itself."""
    template: str | None = None
    """The Inductor template and problem whose config it is, under max-autotune (`mm (256x512,
    512x1024 -> bfloat16)`); None otherwise."""
    config: dict = field(default_factory=dict)
    """An Inductor kernel's config as its row names it (XBLOCK, BLOCK_M, num_stages, ...)."""
    problem: str | None = None
    """Why it cannot be screened, known when it was captured (its front end failed in the run)."""
    staged: bool = False
    """Built with the SLM staging pass between Triton's TTGIR and its lowering (`--stage`)."""

    @property
    def describe(self) -> str:
        """What sets it apart, as a row names it: its constexprs and warps."""
        values = ", ".join(f"{k}={str(v).removeprefix(DTYPE_PREFIX)}"
                           for k, v in sorted(self.kernel.constexprs.items()))
        return ", ".join(x for x in (values, f"num_warps={self.kernel.num_warps}", self.tag) if x)

    @property
    def label(self) -> str:
        """`FILE.py:KERNEL`: by its Python file also where it is built from the run's TTIR."""
        return f"{self.origin}:{self.kernel.kernel}" if self.origin and self.graph is None else self.kernel.label

    @property
    def title(self) -> str:
        """The kernel and what sets this specialization apart, as notes and incidents name it."""
        return f"{self.label} [{self.describe}]"

    @property
    def types(self) -> str:
        """Its pointers' types, as the launch's tensors gave them."""
        return ", ".join(f"{k}:{v}" for k, v in self.kernel.signature.items() if str(v).startswith("*"))
