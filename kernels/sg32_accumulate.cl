// sg32_accumulate.cl -- exercises: a required sub-group size that spills on 32-byte-GRF
// targets only. 40 live accumulators at SIMD32 need 160 32-byte registers on Xe-LP,
// Xe-HPG and Xe-LPG (spill at 128), but only 80 64-byte registers on Xe2 (no spill).
// A large register file cleans Xe-HPG and Xe-LPG but not Xe-LP, which has none; a
// sub-group size of 16, or the compiler's choice, cleans every target.
// zeinspect-launch sg32_accumulate: global=1024 local=32
// zeinspect-arg sg32_accumulate: in float[40968] random
// zeinspect-arg sg32_accumulate: out float[1024] output
// zeinspect-arg sg32_accumulate: steps int 8
#ifndef N
#define N 40  // tests vary it with -DN=...
#endif
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void sg32_accumulate(__global const float* in, __global float* out, int steps) {
  size_t gid = get_global_id(0);
  float acc[N];
  #pragma unroll
  for (int j = 0; j < N; j++) acc[j] = in[gid * N + j];
  for (int s = 0; s < steps; s++) {
    float x = in[gid + s];
    #pragma unroll
    for (int j = 0; j < N; j++) acc[j] = fma(acc[j], x, (float)j);
  }
  float r = 0.0f;
  #pragma unroll
  for (int j = 0; j < N; j++) r += acc[j] * acc[(j * 7) % N];
  out[gid] = r;
}
