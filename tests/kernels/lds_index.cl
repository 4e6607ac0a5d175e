// A workgroup's LDS array read at the indices a buffer gives: the sanitizer's test of
// LDS bounds. An index past the array reads 0 on the hardware (its range check covers
// the workgroup's allocation, here the array's 1 KiB) or, under the mock's sanitizer,
// stops the dispatch naming the access.
__kernel void lds_index(__global const uint* idx, __global uint* out) {
  __local uint s[256];
  uint l = __builtin_amdgcn_workitem_id_x();
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + l;
  s[l] = l * 3 + 1;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  out[i] = s[idx[i]];
}
