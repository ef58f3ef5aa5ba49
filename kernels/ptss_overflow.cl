// ptss_overflow.cl -- exercises: the per-thread scratch cap (PTSS, 256 KiB on Xe-HP and
// later). 144 float16 values (2304 floats per work-item) are all live at once, at a
// required sub-group size of 32. IGC 2.x on Xe2 (lnl-m, bmg-*) needs about 290 KB of
// spill space per thread and refuses to build it ("total scratch space exceeds HW
// supported limit"); on 32-byte-GRF targets it builds with about 150 KB of spills.
// No shape makes a live set this size fit in registers: the compiler's choice of
// sub-group size brings it under the cap (it builds everywhere) but it still spills.
// zeinspect-launch ptss_live_set: global=32 local=32
// zeinspect-arg ptss_live_set: in float[9437696] random
// zeinspect-arg ptss_live_set: out float[32] output
#define N 144
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void ptss_live_set(__global const float* in, __global float* out) {
  size_t gid = get_global_id(0);
  float16 v[N];
  #pragma unroll
  for (int i = 0; i < N; i++) v[i] = vload16(gid + i * 4096, in);
  float16 r = (float16)(0.0f);
  #pragma unroll
  for (int i = 0; i < N; i++) r = fma(r, v[N - 1 - i], v[(i * 7) % N].s3456789abcdef012);
  out[gid] = r.s0 + r.s1 + r.s2 + r.s3 + r.s4 + r.s5 + r.s6 + r.s7 + r.s8 + r.s9 + r.sa + r.sb + r.sc + r.sd + r.se + r.sf;
}
