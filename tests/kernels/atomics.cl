// Global atomics under contention: every work-item adds to one counter, and min, max,
// and, or, xor and exchange on a few shared words.
__kernel void atomics(__global const uint* a, __global uint* acc, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  uint x = a[i];
  __atomic_fetch_add(&acc[0], x, __ATOMIC_RELAXED);
  __atomic_fetch_min(&acc[1], x, __ATOMIC_RELAXED);
  __atomic_fetch_max(&acc[2], x, __ATOMIC_RELAXED);
  __atomic_fetch_and(&acc[3], x | 0xff00ff00u, __ATOMIC_RELAXED);
  __atomic_fetch_or(&acc[4], x & 0x0f0f0f0fu, __ATOMIC_RELAXED);
  __atomic_fetch_xor(&acc[5], x, __ATOMIC_RELAXED);
  __atomic_fetch_add(&acc[6 + (x & 7)], 1u, __ATOMIC_RELAXED);
}
