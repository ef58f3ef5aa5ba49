// A test kernel whose code depends on its sub-group size (sub_group_reduce_add), spilling
// at its required size of 32 like sg32_accumulate.cl: the shape search must not give it
// another size unless asked to.
// zeinspect-launch subgroup_scan: global=1024 local=32
// zeinspect-arg subgroup_scan: in float[40968] random
// zeinspect-arg subgroup_scan: out float[1024] output
// zeinspect-arg subgroup_scan: steps int 8
#define N 40
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void subgroup_scan(__global const float* in, __global float* out, int steps) {
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
  out[gid] = sub_group_reduce_add(r);
}
