// Integer arithmetic: division and remainder (signed and unsigned), shifts, the high
// half of a product, bitfields, population count, min/max. 8 outputs per element.
__kernel void intmix(__global const uint* a, __global const uint* b, __global uint* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  uint x = a[i], y = b[i] | 1;
  int sx = (int)x, sy = (int)(y | 0x100);
  __global uint* o = out + i * 8;
  o[0] = x / y;
  o[1] = x % y;
  o[2] = (uint)(sx / sy);
  o[3] = (uint)(sx % sy);
  o[4] = (x << (y & 31)) ^ (x >> (y & 7)) ^ (uint)(sx >> 3);
  o[5] = (uint)(((ulong)x * (ulong)y) >> 32);
  o[6] = ((x >> 5) & 0x3ff) + __builtin_popcount(y);
  o[7] = (x > y ? x : y) - (uint)(sx < sy ? sx : sy);
}
