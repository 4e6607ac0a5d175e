// A wave-level sum with DPP row shifts and a cross-row permute, then one atomic per wave.
__kernel void wavereduce(__global const uint* a, __global uint* sums, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  uint x = i < n ? a[i] : 0;
  // row_shr:1,2,4,8 (dpp_ctrl 0x111, 0x112, 0x114, 0x118), bound_ctrl: zero fill.
  x += __builtin_amdgcn_update_dpp(0u, x, 0x111, 0xf, 0xf, true);
  x += __builtin_amdgcn_update_dpp(0u, x, 0x112, 0xf, 0xf, true);
  x += __builtin_amdgcn_update_dpp(0u, x, 0x114, 0xf, 0xf, true);
  x += __builtin_amdgcn_update_dpp(0u, x, 0x118, 0xf, 0xf, true);
  // Lane 15 of each row holds the row's sum; lane 31 adds the other row's.
  uint r0 = __builtin_amdgcn_readlane(x, 15);
  uint r1 = __builtin_amdgcn_readlane(x, 31);
  if ((__builtin_amdgcn_workitem_id_x() & 31) == 0) sums[(__builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x()) / 32] = r0 + r1;
}
