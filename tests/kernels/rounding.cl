// IEEE operations in each rounding mode: __builtin_set_flt_rounds (FLT_ROUNDS values: 0
// toward zero, 1 nearest, 2 toward +infinity, 3 toward -infinity) writes MODE's round
// fields for every format with s_setreg, then f32 add, sub, mul, fma, the f64 -> f32
// and int -> f32 conversions, and f64 add and mul round in that direction.
__kernel void rounding(__global const float* a, __global const float* b, __global float* out,
                       __global const double* da, __global const double* db, __global double* dout,
                       __global const int* ia, int mode, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  float x = a[i], y = b[i], z = b[n - 1 - i];
  double p = da[i], q = db[i];
  int k = ia[i];
  __builtin_set_flt_rounds(mode);
  out[6 * i] = x + y;
  out[6 * i + 1] = x - y;
  out[6 * i + 2] = x * y;
  out[6 * i + 3] = __builtin_fmaf(x, y, z);
  out[6 * i + 4] = (float)p;
  out[6 * i + 5] = (float)k;
  dout[2 * i] = p + q;
  dout[2 * i + 1] = p * q;
}
