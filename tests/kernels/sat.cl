// Saturation: float clamps to [0, 1] and saturating integer adds and subtracts, which
// LLVM folds into the VOP3 clamp bit.
__kernel void sat(__global const float* a, __global const uint* b, __global float* fout, __global uint* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  float x = a[i];
  fout[2 * i] = __builtin_fminf(__builtin_fmaxf(x * 0.25f + 0.5f, 0.0f), 1.0f);
  fout[2 * i + 1] = __builtin_fminf(__builtin_fmaxf(x - 0.75f, 0.0f), 1.0f);
  uint y = b[i], z = b[(i + 1) % n];
  int sy = (int)y, sz = (int)z;
  out[4 * i] = __builtin_elementwise_add_sat(y, z);
  out[4 * i + 1] = __builtin_elementwise_sub_sat(y, z);
  out[4 * i + 2] = (uint)__builtin_elementwise_add_sat(sy, sz);
  out[4 * i + 3] = (uint)__builtin_elementwise_sub_sat(sy, sz);
}
