"""fla-core 0.6.0's linear-attention ops (chunk_simple_gla, fused_recurrent_simple_gla, chunk_gla,
chunk_delta_rule), forward and backward, on CPU tensors: what bench/triton_libraries.py and the
slow test capture with `zeinspect triton --run` (FLA_OPS_BACKWARD=0: the forward passes only,
what the slow test runs to stay short)."""

import os

import torch
from fla.ops.delta_rule import chunk_delta_rule
from fla.ops.gla import chunk_gla
from fla.ops.simple_gla import chunk_simple_gla, fused_recurrent_simple_gla

BACKWARD = os.environ.get("FLA_OPS_BACKWARD", "1") != "0"
torch.manual_seed(0)
B, T, H, K, V = 1, 256, 2, 64, 64
dt = torch.bfloat16


def t(*shape, dtype=dt):
    return torch.randn(*shape, dtype=dtype).requires_grad_()


q, k, v = t(B, T, H, K), t(B, T, H, K), t(B, T, H, V)
g = torch.nn.functional.logsigmoid(torch.randn(B, T, H)).requires_grad_()
o, _ = chunk_simple_gla(q, k, v, g)
if BACKWARD:
    o.sum().backward()
o, _ = fused_recurrent_simple_gla(q, k, v, g)
if BACKWARD:
    o.sum().backward()
gk = torch.nn.functional.logsigmoid(torch.randn(B, T, H, K)).requires_grad_()
o, _ = chunk_gla(q, k, v, gk)
if BACKWARD:
    o.sum().backward()
beta = torch.rand(B, T, H, dtype=dt).sigmoid().requires_grad_()
o, _ = chunk_delta_rule(q, torch.nn.functional.normalize(k.float(), dim=-1).to(dt), v, beta)
if BACKWARD:
    o.sum().backward()
print("done")
