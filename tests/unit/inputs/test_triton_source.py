"""Pointer arguments of Triton kernels read from their source, as the tutorials write them."""

from __future__ import annotations

from zeinspect.inputs.triton_source import pointer_arguments

MATMUL = '''
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs_am = (pid * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c_ptrs = c_ptr + stride_cm * offs_am[:, None] + stride_cn * offs_bn[None, :]
    tl.store(c_ptrs, accumulator, mask=(offs_am[:, None] < M) & (offs_bn[None, :] < N))
'''

LAYER_NORM = '''
@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    rstd = 1 / tl.sqrt(mean + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        tl.store(Y + cols, (x - mean) * rstd * w + b, mask=mask)
'''


def test_the_tutorials_pointers_are_found_by_use():
    params = ["a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn",
              "stride_cm", "stride_cn", "BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K"]
    assert pointer_arguments(MATMUL, params) == ["a_ptr", "b_ptr", "c_ptr"]
    # Not named *_ptr: found because the kernel loads from and stores to them.
    params = ["X", "Y", "W", "B", "Mean", "Rstd", "stride", "N", "eps", "BLOCK_SIZE"]
    assert sorted(pointer_arguments(LAYER_NORM, params)) == sorted(["X", "Y", "W", "B", "Mean", "Rstd"])


def test_keyword_block_pointers_and_the_leftmost_term():
    source = '''
def k(base, out, n, off):
    p = tl.make_block_ptr(base=base, shape=(n,), strides=(1,), offsets=(0,), block_shape=(16,), order=(0,))
    v = tl.load(p)
    tl.atomic_add(out + off, v)
    tl.store(pointer=out, value=v)
'''
    assert pointer_arguments(source, ["base", "out", "n", "off"]) == ["base", "out"]


def test_unreadable_source_is_none():
    assert pointer_arguments("def broken(:", ["x"]) is None
    assert pointer_arguments("x = 1", ["x"]) is None
