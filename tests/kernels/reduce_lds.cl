// A tree reduction in LDS with barriers: each group of 256 sums its slice.
__kernel void reduce_lds(__global const float* a, __global float* sums, uint n) {
  __local float tmp[256];
  uint t = __builtin_amdgcn_workitem_id_x();
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + t;
  tmp[t] = i < n ? a[i] : 0.0f;
  for (uint s = 128; s > 0; s >>= 1) {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    if (t < s) tmp[t] += tmp[t + s];
  }
  if (t == 0) sums[__builtin_amdgcn_workgroup_id_x()] = tmp[0];
}
