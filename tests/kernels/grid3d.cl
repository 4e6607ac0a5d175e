// A 3-D grid: workgroup ids in x, y and z, 8x4x2 work-items per group; partial
// groups at the edges are masked by the bounds.
__kernel void grid3d(__global uint* out, uint nx, uint ny, uint nz) {
  uint x = __builtin_amdgcn_workgroup_id_x() * 8 + __builtin_amdgcn_workitem_id_x();
  uint y = __builtin_amdgcn_workgroup_id_y() * 4 + __builtin_amdgcn_workitem_id_y();
  uint z = __builtin_amdgcn_workgroup_id_z() * 2 + __builtin_amdgcn_workitem_id_z();
  if (x < nx && y < ny && z < nz) out[(z * ny + y) * nx + x] = x | (y << 10) | (z << 20);
}
