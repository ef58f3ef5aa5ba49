__kernel void scale(__global float* x, float a) { x[get_global_id(0)] *= a; }
