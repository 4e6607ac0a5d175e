// wave64 only
// targets: gfx1100
// One wave of 64 lanes multiplies 16×16 f16 matrices with gfx11's wave64 WMMA into
// f32: C = A · B + C0. As AMD's matrix instruction calculator lays them out for
// wave64: lane l holds row (l % 16) of A and column (l % 16) of B (the four quarters
// of the wave hold the same), and C's element (i, j) in accumulator register i / 4 of
// lane 16 i % 64 + j, so lane l's register g holds row 4 g + l / 16.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half half16 __attribute__((ext_vector_type(16)));

__kernel void wmma64(__global const half* A, __global const half* B, __global float* C) {
  uint lane = __builtin_amdgcn_workitem_id_x();
  uint r = lane % 16;
  half16 a, b;
  for (uint k = 0; k < 16; k++) {
    a[k] = A[r * 16 + k];
    b[k] = B[k * 16 + r];
  }
  float4 c;
  for (uint g = 0; g < 4; g++) c[g] = C[(4 * g + lane / 16) * 16 + r];
  c = __builtin_amdgcn_wmma_f32_16x16x16_f16_w64(a, b, c);
  for (uint g = 0; g < 4; g++) C[(4 * g + lane / 16) * 16 + r] = c[g];
}
