// wave32 only
// One wave multiplies 16×16 f16 matrices with WMMA into f32: C = A · B + C0.
// gfx11: lane l holds row (l % 16) of A and column (l % 16) of B (both halves of the
// wave hold the same), and C's rows 2i + l / 16 in its eight accumulator registers.
// gfx12: lane l holds half of row (l % 16) of A and of column (l % 16) of B, element
// e of its eight being K = (e & 3) + 4 (l / 16) + 8 (e / 4) (K 0-3 and 8-11 in lanes
// 0-15, 4-7 and 12-15 in lanes 16-31, as tinygrad's emulator and AMD's RDNA4 ISA lay
// them out), and C's rows i + 8 (l / 16).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half half16 __attribute__((ext_vector_type(16)));
typedef half half8 __attribute__((ext_vector_type(8)));
typedef float float8 __attribute__((ext_vector_type(8)));

__kernel void wmma(__global const half* A, __global const half* B, __global float* C) {
  uint lane = __builtin_amdgcn_workitem_id_x();
  uint r = lane % 16;
#ifdef __GFX12__
  half8 a, b;
  for (uint e = 0; e < 8; e++) {
    uint k = (e & 3) + 4 * (lane / 16) + 8 * (e / 4);
    a[e] = A[r * 16 + k];
    b[e] = B[k * 16 + r];
  }
  float8 c;
  for (uint i = 0; i < 8; i++) c[i] = C[(i + 8 * (lane / 16)) * 16 + r];
  c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a, b, c);
  for (uint i = 0; i < 8; i++) C[(i + 8 * (lane / 16)) * 16 + r] = c[i];
#else
  half16 a, b;
  for (uint k = 0; k < 16; k++) {
    a[k] = A[r * 16 + k];
    b[k] = B[k * 16 + r];
  }
  float8 c;
  for (uint i = 0; i < 8; i++) c[i] = C[(2 * i + lane / 16) * 16 + r];
  c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a, b, c);
  for (uint i = 0; i < 8; i++) C[(2 * i + lane / 16) * 16 + r] = c[i];
#endif
}
