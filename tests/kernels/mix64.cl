// 64-bit integer arithmetic and the bit and rounding builtins OpenCL code leans on.
// (In OpenCL C `long long` is 128 bits: the `l` builtins are the 64-bit ones.)
__kernel void mix64(__global const ulong* a, __global const ulong* b, __global ulong* out, __global float* fout, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  ulong x = a[i], y = b[i] | 1;
  long sx = (long)x, sy = (long)(y >> 1) - (long)(1L << 40);
  out[8 * i] = x / y;
  out[8 * i + 1] = x % y;
  out[8 * i + 2] = (ulong)(sx / (sy | 1));
  out[8 * i + 3] = (ulong)(sx % (sy | 1));
  out[8 * i + 4] = __builtin_rotateleft64(x, (uint)(y & 63));
  out[8 * i + 5] = (ulong)__builtin_clzl(x | 1) | (ulong)__builtin_popcountl(y) << 16 | (ulong)__builtin_ctzl(x | (1UL << 63)) << 32;
  out[8 * i + 6] = x * y + (x >> 3);
  out[8 * i + 7] = (ulong)(sx < 0 ? -sx : sx) ^ (ulong)(sx < sy ? sx : sy) ^ (x > y ? x : y);
  float f = (float)(long)x * 1e-12f;
  fout[4 * i] = (float)x;
  fout[4 * i + 1] = __builtin_copysignf(__builtin_fabsf(f), (float)sy);
  fout[4 * i + 2] = __builtin_rintf(f) + __builtin_truncf(f) * 2.0f + __builtin_ceilf(f) * 4.0f + __builtin_floorf(f) * 8.0f;
  fout[4 * i + 3] = __builtin_fminf(f, (float)sy) + __builtin_fmaxf(f, 0.5f);
}
