"""fla-core 0.6.0's linear-attention ops (chunk_simple_gla, fused_recurrent_simple_gla, chunk_gla,
chunk_delta_rule), forward and backward, on CPU tensors: what bench/triton_libraries.py captures
with `zeinspect triton --run`, every op both ways (572 specializations: 38 minutes cold here).

FLA_OPS=name,... runs only those ops, and FLA_OPS_BACKWARD=0 their forward passes only: the slow
test runs one op forward, to stay within CI's time (tests/integration/triton/test_run_front_end.py).
"""

import os

import torch
from fla.ops.delta_rule import chunk_delta_rule
from fla.ops.gla import chunk_gla
from fla.ops.simple_gla import chunk_simple_gla, fused_recurrent_simple_gla

OPS = ("chunk_simple_gla", "fused_recurrent_simple_gla", "chunk_gla", "chunk_delta_rule")
BACKWARD = os.environ.get("FLA_OPS_BACKWARD", "1") != "0"
WANTED = os.environ.get("FLA_OPS", ",".join(OPS)).split(",")
if set(WANTED) - set(OPS):
    raise SystemExit(f"FLA_OPS: unknown ops {sorted(set(WANTED) - set(OPS))}; known: {', '.join(OPS)}")
torch.manual_seed(0)
B, T, H, K, V = 1, 256, 2, 64, 64
dt = torch.bfloat16


def t(*shape, dtype=dt):
    return torch.randn(*shape, dtype=dtype).requires_grad_()


def run(o):
    if BACKWARD:
        o.sum().backward()


q, k, v = t(B, T, H, K), t(B, T, H, K), t(B, T, H, V)
g = torch.nn.functional.logsigmoid(torch.randn(B, T, H)).requires_grad_()
if "chunk_simple_gla" in WANTED:
    run(chunk_simple_gla(q, k, v, g)[0])
if "fused_recurrent_simple_gla" in WANTED:
    run(fused_recurrent_simple_gla(q, k, v, g)[0])
if "chunk_gla" in WANTED:
    gk = torch.nn.functional.logsigmoid(torch.randn(B, T, H, K)).requires_grad_()
    run(chunk_gla(q, k, v, gk)[0])
if "chunk_delta_rule" in WANTED:
    beta = torch.rand(B, T, H, dtype=dt).sigmoid().requires_grad_()
    run(chunk_delta_rule(q, torch.nn.functional.normalize(k.float(), dim=-1).to(dt), v, beta)[0])
print("done")
