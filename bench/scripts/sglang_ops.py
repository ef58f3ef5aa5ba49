"""SGLang 0.5.23's Triton decode attention (sglang.kernels.ops.attention.decode_attention), as its
serving engine calls it for one decode step: a request's query against its paged KV cache, split
over KV, then reduced; once with one KV head per query head (its normal kernels), once with four
query heads per KV head (its grouped kernel), on CPU tensors that name "xpu" as their device: what
bench/triton_libraries.py and the slow test capture with `zeinspect triton --run`."""

import torch
from sglang.kernels.ops.attention.decode_attention import decode_attention_fwd

torch.manual_seed(0)
BATCH, HEAD_DIM, SEQ, SPLITS = 2, 64, 128, 4
dt = torch.bfloat16
for q_heads, kv_heads in ((4, 4), (8, 2)):
    tokens = BATCH * SEQ
    q = torch.randn(BATCH, q_heads, HEAD_DIM, dtype=dt, device="xpu")
    k = torch.randn(tokens, kv_heads, HEAD_DIM, dtype=dt, device="xpu")
    v = torch.randn(tokens, kv_heads, HEAD_DIM, dtype=dt, device="xpu")
    o = torch.empty(BATCH, q_heads, HEAD_DIM, dtype=dt, device="xpu")
    kv_indptr = torch.arange(0, tokens + 1, SEQ, dtype=torch.int32, device="xpu")
    kv_indices = torch.arange(tokens, dtype=torch.int64, device="xpu")
    logits = torch.empty(BATCH, q_heads, SPLITS, HEAD_DIM, dtype=torch.float32, device="xpu")
    lse = torch.empty(BATCH, q_heads, SPLITS, dtype=torch.float32, device="xpu")
    splits = torch.full((BATCH,), SPLITS, dtype=torch.int32, device="xpu")
    decode_attention_fwd(q, k, v, o, kv_indptr, kv_indices, logits, lse, splits, SPLITS, HEAD_DIM ** -0.5, 1.0, 1.0)
print("done")
