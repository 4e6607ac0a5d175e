// wave32 only
// The shape of AMD's rocjitsu "matrix" workload: each one-wave workgroup runs four
// independent chains of `iters` WMMAs (16×16×16, f16 inputs, f32 accumulators), the
// four A matrices and the B matrix shared by every workgroup, and stores its four
// results at C + 1024 × workgroup (four 16×16 f32 matrices, row-major). Operand layouts
// as `wmma.cl` documents them for gfx11 and gfx12.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half half16 __attribute__((ext_vector_type(16)));
typedef half half8 __attribute__((ext_vector_type(8)));
typedef float float8 __attribute__((ext_vector_type(8)));

__kernel void matrix(__global const half* A, __global const half* B, __global float* C, uint iters) {
  uint lane = __builtin_amdgcn_workitem_id_x();
  uint r = lane % 16;
  __global float* out = C + 1024 * __builtin_amdgcn_workgroup_id_x();
  float8 c0 = 0, c1 = 0, c2 = 0, c3 = 0;
#ifdef __GFX12__
  half8 a0, a1, a2, a3, b;
  for (uint e = 0; e < 8; e++) {
    uint k = (e & 3) + 4 * (lane / 16) + 8 * (e / 4);
    a0[e] = A[r * 16 + k];
    a1[e] = A[256 + r * 16 + k];
    a2[e] = A[512 + r * 16 + k];
    a3[e] = A[768 + r * 16 + k];
    b[e] = B[k * 16 + r];
  }
  for (uint i = 0; i < iters; i++) {
    c0 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a0, b, c0);
    c1 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a1, b, c1);
    c2 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a2, b, c2);
    c3 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(a3, b, c3);
  }
  for (uint i = 0; i < 8; i++) {
    uint row = (i + 8 * (lane / 16)) * 16 + r;
    out[row] = c0[i];
    out[256 + row] = c1[i];
    out[512 + row] = c2[i];
    out[768 + row] = c3[i];
  }
#else
  half16 a0, a1, a2, a3, b;
  for (uint k = 0; k < 16; k++) {
    a0[k] = A[r * 16 + k];
    a1[k] = A[256 + r * 16 + k];
    a2[k] = A[512 + r * 16 + k];
    a3[k] = A[768 + r * 16 + k];
    b[k] = B[k * 16 + r];
  }
  for (uint i = 0; i < iters; i++) {
    c0 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a0, b, c0);
    c1 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a1, b, c1);
    c2 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a2, b, c2);
    c3 = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(a3, b, c3);
  }
  for (uint i = 0; i < 8; i++) {
    uint row = (2 * i + lane / 16) * 16 + r;
    out[row] = c0[i];
    out[256 + row] = c1[i];
    out[512 + row] = c2[i];
    out[768 + row] = c3[i];
  }
#endif
}
