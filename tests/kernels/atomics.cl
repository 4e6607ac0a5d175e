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

// 64-bit atomics and the wrapping increment/decrement, under contention.
__kernel void atomics64(__global const uint* a, __global ulong* acc, __global uint* wrap, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  ulong x = (ulong)a[i] << 20 | i;
  __atomic_fetch_add(&acc[0], x, __ATOMIC_RELAXED);
  __atomic_fetch_min((__global long*)&acc[1], (long)x - (1L << 40), __ATOMIC_RELAXED);
  __atomic_fetch_max(&acc[2], x, __ATOMIC_RELAXED);
  __atomic_fetch_xor(&acc[3], x, __ATOMIC_RELAXED);
  ulong cur = __atomic_load_n(&acc[4], __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(&acc[4], &cur, cur + x, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  __builtin_amdgcn_atomic_inc32((volatile __global uint*)&wrap[0], 99u, __ATOMIC_RELAXED, "agent");
  __builtin_amdgcn_atomic_dec32((volatile __global uint*)&wrap[1], 99u, __ATOMIC_RELAXED, "agent");
}
