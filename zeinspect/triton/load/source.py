"""Which arguments of a @triton.jit kernel are pointers, read from its source.

Offline there is no tensor to tell Triton an argument's type, and Triton's own tutorials do
not always name pointers `*_ptr` (the layer-norm kernel takes `X, Y, W, B, Mean, Rstd`).  A
pointer is what a kernel loads from, stores to or builds a block pointer on: the first
argument of tl.load / tl.store / tl.atomic_* / tl.make_block_ptr / tl.make_tensor_descriptor
(or their `pointer=`/`base=` keyword).  That expression is traced back through the kernel's
assignments (`a_ptrs = a_ptr + offs`, `X += row * stride`) to an argument: the additive terms
of pointer arithmetic are followed (a sum, a difference, indexing, broadcasting), products and
other operations are not, since `ptr + i * stride` has one pointer term.  Where several
arguments are additive terms of one pointer expression, the leftmost is the pointer
(`ptr + offset`, the way kernels are written).  Helpers the kernel calls are not followed.
"""

from __future__ import annotations

import ast
import textwrap

POINTER_CALLS = {"load": ("pointer",), "store": ("pointer",), "make_block_ptr": ("base",),
                 "make_tensor_descriptor": ("base",), "prefetch": ("pointer",)}
_KEEPS_POINTER = {"broadcast_to", "expand_dims", "reshape", "view", "ravel", "permute", "trans", "to",
                  "multiple_of", "max_contiguous", "max_constancy"}


def _pointer_keywords(name: str) -> tuple[str, ...] | None:
    if name in POINTER_CALLS:
        return POINTER_CALLS[name]
    return ("pointer",) if name.startswith("atomic_") else None


class _Tracer(ast.NodeVisitor):
    def __init__(self, params: list[str]):
        self.params = set(params)
        self.derived: dict[str, list[str]] = {}
        self.pointers: list[str] = []

    def roots(self, node: ast.AST | None) -> list[str]:
        """The arguments an expression's additive terms come from, leftmost first."""
        if isinstance(node, ast.Name):
            if node.id in self.derived:
                return self.derived[node.id]
            return [node.id] if node.id in self.params else []
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            return self.roots(node.left) + self.roots(node.right)
        if isinstance(node, ast.Subscript):
            return self.roots(node.value)
        if isinstance(node, ast.IfExp):
            return self.roots(node.body) + self.roots(node.orelse)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _KEEPS_POINTER:
            # tl.broadcast_to(p, ...) / p.to(...): the tensor is the first argument or the receiver.
            if isinstance(node.func.value, ast.Name) and node.func.value.id not in self.params | set(self.derived):
                return self.roots(node.args[0]) if node.args else []
            return self.roots(node.func.value)
        return []

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        if not isinstance(node.func, ast.Attribute):
            return
        keywords = _pointer_keywords(node.func.attr)
        if keywords is None:
            return
        target = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg in keywords), None)
        found = self.roots(target)
        if found and found[0] not in self.pointers:
            self.pointers.append(found[0])

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        found = self.roots(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.derived[target.id] = found

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            if isinstance(node.target, ast.Name):
                self.derived[node.target.id] = self.roots(node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name) and isinstance(node.op, (ast.Add, ast.Sub)):
            name = node.target.id
            before = self.roots(ast.Name(id=name, ctx=ast.Load()))
            self.derived[name] = before + [r for r in self.roots(node.value) if r not in before]


def pointer_arguments(source: str, params: list[str]) -> list[str] | None:
    """The parameters the kernel uses as pointers, in the order first used; None when the
    source cannot be read as a function."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except (SyntaxError, ValueError):
        return None
    function = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if function is None:
        return None
    tracer = _Tracer(params)
    for statement in function.body:
        tracer.visit(statement)
    return tracer.pointers
