// Scalar f16 arithmetic and conversions: each item rounds its inputs to half, computes
// in half, and converts back.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void f16scalar(__global const float* a, __global const float* b, __global float* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  half x = (half)a[i], y = (half)b[i];
  half s = x + y, d = x - y, p = x * y;
  half m = x > y ? x : y;
  half f = __builtin_elementwise_fma(x, y, s);
  out[4 * i] = (float)s;
  out[4 * i + 1] = (float)(d * p);
  out[4 * i + 2] = (float)m;
  out[4 * i + 3] = (float)f;
}
