// Divergent control flow: an if/else on the lane and a loop with an early exit.
__kernel void divergent(__global const uint* a, __global uint* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  uint x = a[i];
  uint r;
  if (x & 1) r = x * 3 + 1; else r = x / 2;
  uint steps = 0;
  while (r != 1 && steps < 200) {
    if (r & 1) r = 3 * r + 1; else r >>= 1;
    steps++;
    if (r == 4242) break;
  }
  out[i] = steps * 1000 + (r & 0xff);
}
