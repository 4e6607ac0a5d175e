// rdna only
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

// A wave-level maximum with DPP8 swaps (lane ^ 1, ^ 2, ^ 4), a permlane16 swap of the
// halves of each row (lane ^ 8) and a permlanex16 exchange between the rows: every lane
// ends with the wave's maximum.
static uint umax(uint a, uint b) { return a > b ? a : b; }

__kernel void wavemax(__global const uint* a, __global uint* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  uint x = i < n ? a[i] : 0;
  // DPP8 selects, 3 bits per lane of a group of eight.
  x = umax(x, (uint)__builtin_amdgcn_mov_dpp8(x, 1 | 0 << 3 | 3 << 6 | 2 << 9 | 5 << 12 | 4 << 15 | 7 << 18 | 6 << 21));
  x = umax(x, (uint)__builtin_amdgcn_mov_dpp8(x, 2 | 3 << 3 | 0 << 6 | 1 << 9 | 6 << 12 | 7 << 15 | 4 << 18 | 5 << 21));
  x = umax(x, (uint)__builtin_amdgcn_mov_dpp8(x, 4 | 5 << 3 | 6 << 6 | 7 << 9 | 0 << 12 | 1 << 15 | 2 << 18 | 3 << 21));
  x = umax(x, __builtin_amdgcn_permlane16(x, x, 0xfedcba98u, 0x76543210u, false, false));
  x = umax(x, __builtin_amdgcn_permlanex16(x, x, 0x76543210u, 0xfedcba98u, false, false));
  if (i < n) out[i] = x;
}
