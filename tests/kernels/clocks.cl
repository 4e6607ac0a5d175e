// gfx9's clocks, as HIP's `clock64()` and `wall_clock64()` read them on gfx942:
// `s_memtime` (the shader clock) and `s_memrealtime` (the constant 100 MHz counter),
// each read before and after a loop whose trip count the input sets; lane 0 of each
// workgroup writes the four 64-bit readings.
// targets: gfx942
__kernel void clocks(__global ulong* out, uint spins) {
  uint g = __builtin_amdgcn_workgroup_id_x();
  ulong t0 = __builtin_amdgcn_s_memtime();
  ulong r0 = __builtin_amdgcn_s_memrealtime();
  uint acc = g;
  for (uint k = 0; k < spins; k++) acc = acc * 1664525u + 1013904223u;
  ulong t1 = __builtin_amdgcn_s_memtime();
  ulong r1 = __builtin_amdgcn_s_memrealtime();
  if (__builtin_amdgcn_workitem_id_x() == 0) {
    out[5 * g] = t0;
    out[5 * g + 1] = t1;
    out[5 * g + 2] = r0;
    out[5 * g + 3] = r1;
    out[5 * g + 4] = acc;
  }
}
