"""Liger-Kernel 0.8.5's public ops through its documented entry points, on CPU tensors."""
import torch
from liger_kernel.transformers import LigerCrossEntropyLoss, LigerLayerNorm, LigerRMSNorm
from liger_kernel.transformers.functional import liger_rope, liger_swiglu

hidden, tokens, vocab = 4096, 64, 32000
x = torch.randn(2, tokens, hidden, dtype=torch.bfloat16)
for name, run in [
    ("rms_norm", lambda: LigerRMSNorm(hidden).to(torch.bfloat16)(x)),
    ("layer_norm", lambda: LigerLayerNorm(hidden).to(torch.bfloat16)(x)),
    ("swiglu", lambda: liger_swiglu(x, x)),
    ("cross_entropy", lambda: LigerCrossEntropyLoss()(torch.randn(tokens, vocab), torch.randint(0, vocab, (tokens,)))),
    ("rope", lambda: liger_rope(torch.randn(1, 32, tokens, 128), torch.randn(1, 8, tokens, 128),
                                torch.randn(1, tokens, 128), torch.randn(1, tokens, 128))),
]:
    try:
        run()
        print(name, "ok")
    except Exception as exc:
        print(name, "raised", type(exc).__name__, str(exc)[:200])
