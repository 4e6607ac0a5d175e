// clang-19: -fdenormal-fp-math=preserve-sign -Xclang -fdenormal-fp-math-f32=ieee
// f16 and f64 denormals flushed, f32 ones kept: the kernel descriptor's FLOAT_MODE is
// 0x30 (MODE bits 7:6 clear), so f16/f64 inputs and results that are denormal read and
// write as signed zeros, while f32 arithmetic keeps them.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void denormals(__global const double* da, __global double* dout, __global const half* ha,
                        __global half* hout, __global const float* fa, __global float* fout, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  double p = da[2 * i], q = da[2 * i + 1];
  dout[4 * i] = p + q;
  dout[4 * i + 1] = p * q;
  dout[4 * i + 2] = p < q ? 1.0 : 0.0;
  dout[4 * i + 3] = (double)fa[i];
  half h = ha[2 * i], g = ha[2 * i + 1];
  hout[2 * i] = h + g;
  hout[2 * i + 1] = h * g;
  fout[2 * i] = fa[i] + fa[i];
  fout[2 * i + 1] = (float)p;
}
