// Generic (flat) pointers: one helper used on global, local and private memory.
__attribute__((noinline)) static void bump(uint* p, uint n, uint by) {
  for (uint k = 0; k < n; k++) p[k] += by;
}

__kernel void flat_ptrs(__global uint* g, __global uint* out, uint n) {
  __local uint l[256];
  uint priv[8];
  uint lid = __builtin_amdgcn_workitem_id_x();
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + lid;
  l[lid] = lid;
  for (uint k = 0; k < 8; k++) priv[k] = i * k;
  __builtin_amdgcn_s_barrier();
  if (i < n) bump(&g[i], 1, 5);
  bump(&l[lid], 1, 7);
  bump(priv, 8, i & 3);
  uint s = 0;
  for (uint k = 0; k < 8; k++) s += priv[(k + lid) & 7];
  if (i < n) out[i] = l[lid] + s;
}

// Atomics through generic pointers, on LDS, global and private memory.
__attribute__((noinline)) static void count(uint* p, uint v) { __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }

__kernel void flat_atomics(__global uint* g, __global uint* out, __global uint* mine_out) {
  __local uint l;
  uint lid = __builtin_amdgcn_workitem_id_x();
  // A private counter, through the same generic helper.
  volatile uint mine = lid;
  count((uint*)&mine, 1000);
  mine_out[__builtin_amdgcn_workgroup_id_x() * 256 + lid] = mine;
  if (lid == 0) l = 0;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  count(&l, lid);
  count(&g[0], 1);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (lid == 0) out[__builtin_amdgcn_workgroup_id_x()] = l;
}
