// IEEE float division, square root and classification, as OpenCL compiles them
// (correctly rounded: div_scale / div_fmas / div_fixup sequences).
__kernel void fdiv(__global const float* a, __global const float* b, __global float* out, __global const double* da, __global double* dout, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  float x = a[i], y = b[i];
  out[4 * i] = x / y;
  out[4 * i + 1] = __builtin_sqrtf(x);
  out[4 * i + 2] = __builtin_isnan(x / y) ? 1.0f : (__builtin_isinf(x / y) ? 2.0f : 0.0f);
  out[4 * i + 3] = __builtin_fabsf(x) / 3.0f;
  double p = da[2 * i], q = da[2 * i + 1];
  dout[2 * i] = p / q;
  dout[2 * i + 1] = __builtin_sqrt(p);
}
