// A kernel that runs as long as asked: `iters` steps of a linear congruential
// generator per work-item (the loop cannot be folded away), then one store.
__kernel void spin(__global uint* out, uint iters) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 32 + __builtin_amdgcn_workitem_id_x();
  uint x = i;
  for (uint k = 0; k < iters; k++) x = x * 1664525u + 1013904223u;
  out[i] = x;
}
