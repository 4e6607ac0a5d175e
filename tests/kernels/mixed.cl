// Mixed precision as compilers fuse it: halves widened into single-precision
// multiply-adds (gfx9 and gfx11: v_fma_mix_f32, and v_fma_mixlo_f16 where the result
// narrows back), and a half-pair dot product into a float (gfx942: v_dot2c_f32_f16).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void mixed(__global const half* a, __global const half* b, __global float* c, __global half* d, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i + 1 >= n) return;
  float x = (float)a[i], y = (float)b[i];
  c[3 * i] = x * y + c[3 * i];
  c[3 * i + 1] = x * 0.75f - y;
  d[i] = (half)(x * 3.0f + y);
  half2 p = (half2)(a[i], a[i + 1]), q = (half2)(b[i], b[i + 1]);
  c[3 * i + 2] = __builtin_amdgcn_fdot2(p, q, c[3 * i + 2], false);
}
