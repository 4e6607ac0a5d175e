// Double precision: add, multiply, fma, division, conversions.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void f64math(__global const double* a, __global const double* b, __global double* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  double x = a[i], y = b[i];
  out[i * 4 + 0] = x + y;
  out[i * 4 + 1] = x * y - y;
  out[i * 4 + 2] = __builtin_fma(x, y, 1.0);
  out[i * 4 + 3] = (double)(int)x + (double)i * 0.5;
}
