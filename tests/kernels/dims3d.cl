// Launch sizes as a kernel sees them: the workgroup size from the hidden arguments,
// the grid (in work-items) from the dispatch packet. Each work-item writes its global
// coordinates; work-item 0 also writes the sizes after the grid.
__kernel void dims3d(__global uint* out) {
  uint lx = __builtin_amdgcn_workgroup_size_x();
  uint ly = __builtin_amdgcn_workgroup_size_y();
  uint lz = __builtin_amdgcn_workgroup_size_z();
  uint gx = __builtin_amdgcn_grid_size_x();
  uint gy = __builtin_amdgcn_grid_size_y();
  uint gz = __builtin_amdgcn_grid_size_z();
  uint x = __builtin_amdgcn_workgroup_id_x() * lx + __builtin_amdgcn_workitem_id_x();
  uint y = __builtin_amdgcn_workgroup_id_y() * ly + __builtin_amdgcn_workitem_id_y();
  uint z = __builtin_amdgcn_workgroup_id_z() * lz + __builtin_amdgcn_workitem_id_z();
  uint n = gx * gy * gz;
  out[(z * gy + y) * gx + x] = x | (y << 8) | (z << 16) | (1u << 24);
  if (x == 0 && y == 0 && z == 0) {
    out[n] = lx | (ly << 8) | (lz << 16);
    out[n + 1] = gx | (gy << 8) | (gz << 16);
  }
}
