// LDS atomics under contention (add, min, max, and, or, xor, exchange, compare-swap),
// a global compare-swap loop, and f32 atomic add, global and in LDS.
__kernel void lds_atomics(__global const uint* a, __global uint* out, __global float* fsum, uint n) {
  __local uint s[10];
  __local float fl;
  uint lid = __builtin_amdgcn_workitem_id_x();
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + lid;
  if (lid < 10) s[lid] = (lid == 1) ? 0xffffffffu : (lid == 3 ? 0xffffffffu : 0u);
  if (lid == 0) fl = 0.0f;
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
  uint x = i < n ? a[i] : 0u;
  if (i < n) {
    __atomic_fetch_add(&s[0], x, __ATOMIC_RELAXED);
    __atomic_fetch_min(&s[1], x, __ATOMIC_RELAXED);
    __atomic_fetch_max(&s[2], x, __ATOMIC_RELAXED);
    __atomic_fetch_and(&s[3], x | 0xf0f0f0f0u, __ATOMIC_RELAXED);
    __atomic_fetch_or(&s[4], x & 0x00ff00ffu, __ATOMIC_RELAXED);
    __atomic_fetch_xor(&s[5], x, __ATOMIC_RELAXED);
    // Exchange: the returned old values form a chain; count the items that saw 0.
    uint old = __atomic_exchange_n(&s[6], i + 1, __ATOMIC_RELAXED);
    if (old == 0) __atomic_fetch_add(&s[7], 1u, __ATOMIC_RELAXED);
    // Compare-swap increment loop in LDS.
    uint cur = __atomic_load_n(&s[8], __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&s[8], &cur, cur + 3, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    // Compare-swap increment loop on global memory, shared by all workgroups.
    uint g = __atomic_load_n(&out[10], __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&out[10], &g, g + 1, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    float f = (float)(x & 0xff);
    __atomic_fetch_add(&fl, f, __ATOMIC_RELAXED);
    __atomic_fetch_add(&fsum[0], f, __ATOMIC_RELAXED);
  }
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
  __builtin_amdgcn_s_barrier();
  if (lid < 9) {
    uint wg = __builtin_amdgcn_workgroup_id_x();
    out[16 + wg * 16 + lid] = s[lid];
  }
  if (lid == 9) fsum[1 + __builtin_amdgcn_workgroup_id_x()] = fl;
}
