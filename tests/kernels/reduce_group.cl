// A reduction shaped as tinygrad's kernels make one: each of a group's 64 lanes sums
// 16 elements of the group's slice (a stride of 64) in a register, the partial sums meet
// in LDS behind one barrier, and the first lane adds them up.
__kernel void reduce_group(__global const float* a, __global float* sums, uint n) {
  __local float part[64];
  uint t = __builtin_amdgcn_workitem_id_x();
  uint g = __builtin_amdgcn_workgroup_id_x();
  float acc = 0.0f;
  for (uint k = 0; k < 16; k++) {
    uint i = g * 1024 + k * 64 + t;
    acc += i < n ? a[i] : 0.0f;
  }
  part[t] = acc;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (t == 0) {
    float s = 0.0f;
    for (uint k = 0; k < 64; k++) s += part[k];
    sums[g] = s;
  }
}
