// A private array indexed by data: lives in scratch memory.
__kernel void private_array(__global const uint* idx, __global uint* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  uint tbl[40];
  for (uint k = 0; k < 40; k++) tbl[k] = k * k + i;
  uint j = idx[i] % 40;
  tbl[(j * 7) % 40] += j;
  out[i] = tbl[j] + tbl[(j + 3) % 40];
}
