// A private array read at the indices a buffer gives: the sanitizer's test of private
// (scratch) bounds. An index past the array reads past the lane's share of the wave's
// scratch on the hardware (another lane's or wave's, or a fault) or, under the mock's
// sanitizer, stops the dispatch naming the access.
__kernel void private_index(__global const uint* idx, __global uint* out) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  volatile uint tbl[64];
  for (uint k = 0; k < 64; k++) tbl[k] = k * 3 + 1;
  out[i] = tbl[idx[i]];
}
