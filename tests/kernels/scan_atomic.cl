// clang-19: -mllvm -amdgpu-atomic-optimizer-strategy=DPP
// One atomic add a wave, as LLVM's atomic optimizer makes it with its DPP strategy:
// the wave scans its lanes' values with DPP (on gfx9 the row shifts, `row_bcast:15`,
// `row_bcast:31` and `wave_shr:1`; on gfx11 and gfx12 the row shifts and lane
// permutes), one lane adds the total, and each lane's returned old value is that
// lane's exclusive prefix sum past what the wave's add found.
__kernel void scan_atomic(__global const uint* a, __global uint* acc, __global uint* old, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  old[i] = __atomic_fetch_add(&acc[0], a[i], __ATOMIC_RELAXED);
}
