// private_array.cl -- exercises: private memory. A 32-entry histogram indexed by loaded
// data (a run-time index), at a required sub-group size of 32. At SIMD32 IGC cannot keep
// the array in registers: it lives in scratch (Xe-LP, Xe2) or in stateless private memory
// (Xe-HPG, Xe-LPG), 128 bytes per work-item = 4096 bytes per hardware thread.
// Left to choose its sub-group size, the compiler picks SIMD16 and keeps the array in
// registers (indirect addressing): that shape removes the private memory.
// zeinspect-launch private_histogram: global=256 local=32
// zeinspect-arg private_histogram: in uint[16384] below:100
// zeinspect-arg private_histogram: out uint[8192] output
// zeinspect-arg private_histogram: n uint 64
#define BINS 32
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void private_histogram(__global const uint* in, __global uint* out, uint n) {
  uint hist[BINS];
  for (int i = 0; i < BINS; i++) hist[i] = 0;
  size_t gid = get_global_id(0);
  for (uint i = 0; i < n; i++) hist[in[gid * n + i] & (BINS - 1)] += 1;
  for (int i = 0; i < BINS; i++) out[gid * BINS + i] = hist[i];
}
