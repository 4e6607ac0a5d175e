// Transcendentals through the hardware instructions: exp2, log2, rcp, rsq, sqrt, sin, cos.
__kernel void transcend(__global const float* a, __global float* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  float x = a[i];
  __global float* o = out + i * 7;
  o[0] = __builtin_amdgcn_exp2f(x);
  o[1] = __builtin_amdgcn_logf(x);
  o[2] = __builtin_amdgcn_rcpf(x);
  o[3] = __builtin_amdgcn_rsqf(x);
  o[4] = __builtin_amdgcn_sqrtf(x);
  o[5] = __builtin_amdgcn_sinf(x);
  o[6] = __builtin_amdgcn_cosf(x);
}
