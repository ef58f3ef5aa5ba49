// clean.cl -- exercises: a kernel that uses no scratch memory on any target.
// Every figure zeinspect reports for it must be zero (spill, private, scratch), and the
// audit must never list it.
__kernel void saxpy(float a, __global const float* x, __global float* y) {
  size_t i = get_global_id(0);
  y[i] = fma(a, x[i], y[i]);
}
