"""A stand-in for torch that knows only shapes and dtypes: enough for a module's host code to
reach its kernel launch, which triton.load.discover records and stops (no value is computed, no
device is touched).

Tensors carry a shape, a dtype and contiguous strides; creating, reshaping and combining them
gives tensors of the shapes the module's host code reads (`x.shape`, `x.stride(0)`,
`x.element_size()`, `x.numel()`).  Everything else torch offers answers with a permissive
value that accepts any use, so host code that asks for more than shapes still runs to its
launch.  Only the discovery child process (triton.load.discover) ever imports this module.
"""

from __future__ import annotations

# Every method takes the arguments torch's would, and reads only what shapes need.
# ruff: noqa: ARG001, ARG002
import math
import types
from collections.abc import Iterator
from typing import Any

from ..model.placeholder import Anything


class dtype:  # noqa: N801 - torch's own name
    def __init__(self, name: str, itemsize: int, floating: bool) -> None:
        self.name, self.itemsize, self.is_floating_point = name, itemsize, floating

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    __str__ = __repr__


_DTYPES = {
    "float16": (2, True), "bfloat16": (2, True), "float32": (4, True), "float64": (8, True),
    "int8": (1, False), "int16": (2, False), "int32": (4, False), "int64": (8, False), "uint8": (1, False),
    "bool": (1, False), "float8_e5m2": (1, True), "float8_e4m3fn": (1, True), "float8_e4m3fnuz": (1, True),
    "float8_e5m2fnuz": (1, True), "uint32": (4, False),
}
DTYPES = {name: dtype(name, size, floating) for name, (size, floating) in _DTYPES.items()}
ALIASES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32", "long": "int64",
           "short": "int16"}


def _shape(args: tuple, kwargs: dict) -> tuple[int, ...]:
    shape = kwargs.get("size", args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args)
    if isinstance(shape, Tensor):
        return shape.shape
    out = []
    for d in shape if isinstance(shape, (tuple, list)) else (shape,):
        if isinstance(d, int):
            out.append(d)
        elif hasattr(d, "__index__"):
            out.append(int(d))
    return tuple(out)


class device:  # noqa: N801 - torch's own name
    def __init__(self, type: str = "xpu", index: int | None = 0) -> None:  # noqa: A002
        if isinstance(type, str) and ":" in type:
            type, _, number = type.partition(":")
            index = int(number)
        self.type, self.index = type, index

    def __repr__(self) -> str:
        return f"device(type='{self.type}', index={self.index})"

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0


class Tensor:
    def __init__(self, shape: tuple[int, ...] = (), dtype_: dtype | None = None) -> None:
        self.shape = Size(shape)
        self.dtype = dtype_ or DTYPES["float32"]
        self.device = device()
        self.requires_grad = False
        self.grad: Tensor | None = None

    # shapes
    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return len(self.shape)

    ndim = property(dim)

    def numel(self) -> int:
        return math.prod(self.shape)

    def element_size(self) -> int:
        return self.dtype.itemsize

    def stride(self, dim: int | None = None) -> Any:
        strides = tuple(math.prod(self.shape[i + 1:]) for i in range(len(self.shape)))
        return strides if dim is None else strides[dim]

    def _like(self, shape: tuple[int, ...] | None = None, dtype_: Any = None) -> Tensor:
        return Tensor(self.shape if shape is None else shape, dtype_ if isinstance(dtype_, dtype) else self.dtype)

    def reshape(self, *shape: Any) -> Tensor:
        dims = list(_shape(shape, {}))
        if -1 in dims:
            known = math.prod(d for d in dims if d != -1) or 1
            dims[dims.index(-1)] = self.numel() // known
        return self._like(tuple(dims))

    view = reshape

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        wanted = kwargs.get("dtype", next((a for a in args if isinstance(a, dtype)), None))
        return self._like(dtype_=wanted)

    def t(self) -> Tensor:
        return self._like(tuple(reversed(self.shape)))

    T = property(t)

    def transpose(self, a: int, b: int) -> Tensor:
        dims = list(self.shape)
        dims[a], dims[b] = dims[b], dims[a]
        return self._like(tuple(dims))

    def permute(self, *order: Any) -> Tensor:
        dims = order[0] if len(order) == 1 and isinstance(order[0], (tuple, list)) else order
        return self._like(tuple(self.shape[i] for i in dims))

    def __getitem__(self, key: Any) -> Tensor:
        return self._like()

    def __len__(self) -> int:
        return self.shape[0] if self.shape else 0

    def __iter__(self) -> Iterator[Tensor]:
        return iter([self._like(self.shape[1:])] * (self.shape[0] if self.shape else 0))

    def data_ptr(self) -> int:
        return 0

    def item(self) -> float:
        return 0.0

    def requires_grad_(self, flag: bool = True) -> Tensor:
        self.requires_grad = flag
        return self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._like()  # contiguous(), clone(), zero_(), float(), ...

    def __bool__(self) -> bool:
        return True


def _combine(self: Tensor, other: Any = None) -> Tensor:
    if isinstance(other, Tensor) and len(other.shape) > len(self.shape):
        return other._like()
    return self._like()


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lt", "le", "gt", "ge", "and",
            "or", "xor", "neg", "abs", "invert"):
    setattr(Tensor, f"__{_op}__", _combine)
    setattr(Tensor, f"__r{_op}__", _combine)


class Size(tuple):
    def numel(self) -> int:
        return math.prod(self)


def _creator(*args: Any, **kwargs: Any) -> Tensor:
    return Tensor(_shape(args, kwargs), kwargs.get("dtype") if isinstance(kwargs.get("dtype"), dtype) else None)


def _like(other: Any, *args: Any, **kwargs: Any) -> Tensor:
    base = other if isinstance(other, Tensor) else Tensor()
    return base._like(dtype_=kwargs.get("dtype"))


def _tensor(data: Any, **kwargs: Any) -> Tensor:
    """torch.tensor: a list's length, and the dtype torch infers (int64 for ints, bool, float32)."""
    items = list(data) if isinstance(data, (list, tuple)) else [data]
    wanted = kwargs.get("dtype")
    if not isinstance(wanted, dtype):
        kind = "bool" if items and all(isinstance(x, bool) for x in items) else \
            "int64" if items and all(isinstance(x, int) for x in items) else "float32"
        wanted = DTYPES[kind]
    return Tensor((len(items),) if isinstance(data, (list, tuple)) else (), wanted)


class _Function:
    """torch.autograd.Function: `apply` runs `forward`, as torch does."""

    @classmethod
    def apply(cls, *args: Any) -> Any:
        return cls.forward(Anything(), *args)  # type: ignore[attr-defined]


class _Module(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return Anything()


def make() -> types.ModuleType:
    """A fresh `torch` module of this stand-in."""
    torch = _Module("torch")
    for name, value in DTYPES.items():
        setattr(torch, name, value)
    for alias, name in ALIASES.items():
        setattr(torch, alias, DTYPES[name])
    for name in ("empty", "zeros", "ones", "rand", "randn", "full", "empty_strided", "randint_like"):
        setattr(torch, name, _creator)
    for name in ("empty_like", "zeros_like", "ones_like", "rand_like", "randn_like", "full_like", "clone"):
        setattr(torch, name, _like)
    torch.randint = lambda low, high=None, size=(), **kw: _creator(size, **kw)  # type: ignore[attr-defined]
    torch.arange = lambda *a, **kw: Tensor((int(a[-1]) - (int(a[0]) if len(a) > 1 else 0),),  # type: ignore
                                           kw.get("dtype") if isinstance(kw.get("dtype"), dtype) else DTYPES["int64"])
    torch.tensor = _tensor  # type: ignore[attr-defined]
    torch.Tensor = Tensor  # type: ignore[attr-defined]
    torch.dtype = dtype  # type: ignore[attr-defined]
    torch.device = device  # type: ignore[attr-defined]
    torch.Size = Size  # type: ignore[attr-defined]
    torch.manual_seed = lambda *a, **kw: None  # type: ignore[attr-defined]
    torch.allclose = lambda *a, **kw: True  # type: ignore[attr-defined]
    torch.matmul = lambda a, b, **kw: Tensor((a.shape[0], b.shape[-1]), a.dtype)  # type: ignore[attr-defined]
    autograd = _Module("torch.autograd")
    autograd.Function = _Function  # type: ignore[attr-defined]
    torch.autograd = autograd  # type: ignore[attr-defined]
    xpu = _Module("torch.xpu")
    xpu.is_available = lambda: True  # type: ignore[attr-defined]
    torch.xpu = xpu  # type: ignore[attr-defined]
    cuda = _Module("torch.cuda")
    cuda.is_available = lambda: False  # type: ignore[attr-defined]
    torch.cuda = cuda  # type: ignore[attr-defined]
    torch.__version__ = "0.0+zeinspect"  # type: ignore[attr-defined]
    return torch
