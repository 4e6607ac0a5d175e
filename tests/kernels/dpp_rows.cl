// DPP16's lane moves within rows of 16 lanes, which RDNA and CDNA share: row shifts
// and rotations, a quad permutation, masked rows and banks, with and without
// bound_ctrl (an out-of-row source reads 0, or leaves the lane's old value).
__kernel void dpp_rows(__global const uint* a, __global uint* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  uint x = i < n ? a[i] : 0;
  uint s = x;
  s += __builtin_amdgcn_update_dpp(0u, x, 0x111, 0xf, 0xf, true);   // row_shr:1
  s += __builtin_amdgcn_update_dpp(5u, x, 0x112, 0xf, 0xf, false);  // row_shr:2, old 5
  s ^= __builtin_amdgcn_update_dpp(7u, x, 0x123, 0xf, 0xf, false);  // row_ror:3
  s += __builtin_amdgcn_update_dpp(0u, x, 0x1b, 0xf, 0xf, true);    // quad_perm [3,2,1,0]
  s += __builtin_amdgcn_update_dpp(9u, s, 0x101, 0xa, 0x5, false);  // row_shl:1, rows 1 and 3, banks 0 and 2
  s *= __builtin_amdgcn_update_dpp(1u, x, 0x104, 0xf, 0xf, false);  // row_shl:4
  if (i < n) out[i] = s;
}
