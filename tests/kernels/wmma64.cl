// wave64 only
// targets: gfx1100 gfx1201
// One wave of 64 lanes multiplies 16×16 f16 matrices with the wave64 WMMA into f32:
// C = A · B + C0, laid out as AMD's matrix instruction calculator gives it for 64
// lanes. gfx11: lane l holds row (l % 16) of A and column (l % 16) of B (the four
// quarters of the wave hold the same), and C's element (i, j) in accumulator register
// i / 4 of lane 16 i % 64 + j, so lane l's register g holds row 4 g + l / 16. gfx12:
// lane l holds k 4 (l / 16) to 4 (l / 16) + 3 of row (column) l % 16 of A (B), and C's
// element (i, j) in register i % 4 of lane 32 ((i / 4) % 2) + 16 (i / 8) + j.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half half16 __attribute__((ext_vector_type(16)));

__kernel void wmma64(__global const half* A, __global const half* B, __global float* C) {
  uint lane = __builtin_amdgcn_workitem_id_x();
  uint r = lane % 16;
#ifdef __GFX12__
  half4 a, b;
  for (uint e = 0; e < 4; e++) {
    uint k = 4 * (lane / 16) + e;
    a[e] = A[r * 16 + k];
    b[e] = B[k * 16 + r];
  }
  float4 c;
  for (uint g = 0; g < 4; g++) c[g] = C[(g + 4 * (lane / 32) + 8 * ((lane / 16) % 2)) * 16 + r];
  c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w64_gfx12(a, b, c);
  for (uint g = 0; g < 4; g++) C[(g + 4 * (lane / 32) + 8 * ((lane / 16) % 2)) * 16 + r] = c[g];
#else
  half16 a, b;
  for (uint k = 0; k < 16; k++) {
    a[k] = A[r * 16 + k];
    b[k] = B[k * 16 + r];
  }
  float4 c;
  for (uint g = 0; g < 4; g++) c[g] = C[(4 * g + lane / 16) * 16 + r];
  c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w64(a, b, c);
  for (uint g = 0; g < 4; g++) C[(4 * g + lane / 16) * 16 + r] = c[g];
#endif
}
