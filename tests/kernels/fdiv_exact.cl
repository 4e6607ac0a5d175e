// clang-19: -cl-fp32-correctly-rounded-divide-sqrt
// Correctly rounded f32 and f64 division: with this option LLVM divides f32 as it does
// f64, v_div_scale -> v_rcp -> v_fma refinements -> v_div_fmas -> v_div_fixup (without
// it, OpenCL's 2.5-ulp f32 division is a v_rcp product). The operands the test picks
// reach every branch of v_div_scale and v_div_fixup.
__kernel void fdiv_exact(__global const float* a, __global const float* b, __global float* out,
                         __global const double* da, __global const double* db, __global double* dout, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  out[i] = a[i] / b[i];
  dout[i] = da[i] / db[i];
}
