// fma_tile.cl -- exercises: register spills on every target. Each work-item owns an 8x8
// micro-tile of C (64 accumulators) and the K loop is unrolled by two, all fully unrolled
// in registers, at a required sub-group size of 32: at SIMD32 a float takes four 32-byte
// registers (two 64-byte ones on Xe2), so the tile cannot fit in 128 registers anywhere,
// and not in 256 either. Left to its own choice the compiler builds it at SIMD8 (SIMD16 on
// Xe2), where it fits.
// zeinspect-launch fma_tile: global=32,8 local=32,1
// zeinspect-arg fma_tile: a float[1024] random
// zeinspect-arg fma_tile: b float[4096] random
// zeinspect-arg fma_tile: c float[16384] output
// zeinspect-arg fma_tile: k_total int 16
#define TM 8
#define TN 8
#define KU 2
__attribute__((intel_reqd_sub_group_size(32)))
__kernel void fma_tile(__global const float* a, __global const float* b, __global float* c, int k_total) {
  const int row = get_global_id(1) * TM, col = get_global_id(0) * TN, n = get_global_size(0) * TN;
  float acc[TM][TN];
  #pragma unroll
  for (int i = 0; i < TM; i++)
    #pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < k_total; k0 += KU) {
    #pragma unroll
    for (int k = k0; k < k0 + KU; k++) {
      float av[TM], bv[TN];
      #pragma unroll
      for (int i = 0; i < TM; i++) av[i] = a[(row + i) * k_total + k];
      #pragma unroll
      for (int j = 0; j < TN; j++) bv[j] = b[k * n + col + j];
      #pragma unroll
      for (int i = 0; i < TM; i++)
        #pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
  }
  #pragma unroll
  for (int i = 0; i < TM; i++)
    #pragma unroll
    for (int j = 0; j < TN; j++) c[(row + i) * n + col + j] = acc[i][j];
}
