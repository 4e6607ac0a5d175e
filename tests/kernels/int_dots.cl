// Dot products of packed integers into 32-bit accumulators, as quantized kernels use
// them (`__dp4a`): on gfx9 `v_dot4_i32_i8`, `v_dot8_i32_i4`, `v_dot2_i32_i16`,
// `v_dot2_u32_u16` and the accumulating VOP2 forms (`v_dot4c_i32_i8`, …); on gfx11 and
// gfx12 the `_iu` forms with both sources signed, and the 16-bit ones in plain
// arithmetic (they have none). Clamped forms saturate.
__kernel void int_dots(__global const int* a, __global const int* b, __global int* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  int x = a[i], y = b[i], c = out[8 * i];
  // The accumulators the clamped forms saturate from (shifted as unsigned: no
  // signed overflow).
  int c12 = (int)((uint)c << 12), c16 = (int)((uint)c << 16);
  short2 xs = (short2)((short)x, (short)(x >> 16)), ys = (short2)((short)y, (short)(y >> 16));
#ifdef __GFX9__
  out[8 * i] = __builtin_amdgcn_sdot4(x, y, c, false);
  out[8 * i + 1] = __builtin_amdgcn_sdot4(x, y, c12, true);
  out[8 * i + 2] = __builtin_amdgcn_sdot8(x, y, c, false);
  out[8 * i + 3] = __builtin_amdgcn_sdot2(xs, ys, c, false);
  out[8 * i + 4] = (int)__builtin_amdgcn_udot2(as_ushort2(xs), as_ushort2(ys), (uint)c, false);
  out[8 * i + 5] = __builtin_amdgcn_sdot2(xs, ys, c16, true);
#else
  out[8 * i] = __builtin_amdgcn_sudot4(true, x, true, y, c, false);
  out[8 * i + 1] = __builtin_amdgcn_sudot4(true, x, true, y, c12, true);
  out[8 * i + 2] = __builtin_amdgcn_sudot8(true, x, true, y, c, false);
  out[8 * i + 3] = (int)((uint)c + (uint)(xs.x * ys.x) + (uint)(xs.y * ys.y));
  out[8 * i + 4] = (int)((uint)c + (uint)(ushort)xs.x * (ushort)ys.x + (uint)(ushort)xs.y * (ushort)ys.y);
  long s = (long)c16 + xs.x * ys.x + xs.y * ys.y;
  out[8 * i + 5] = s > 2147483647L ? 2147483647 : s < -2147483647L - 1 ? (int)(-2147483647L - 1) : (int)s;
#endif
}
