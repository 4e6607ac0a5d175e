// gfx942's sparse matrix multiply-accumulate (SMFMAC, what 2:4 sparse GEMMs run on
// MI300): one wave of 64 lanes, each lane's A pair registers, B registers,
// accumulator and compression index read from memory as the instruction takes them
// (`v_smfmac_f32_16x16x32_f16`, `v_smfmac_i32_16x16x64_i8`), D written back.
// targets: gfx942
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void smfmac_f16(__global const uint* a, __global const uint* b, __global const float* c,
                         __global const int* idx, __global float* d) {
  uint l = __builtin_amdgcn_workitem_id_x();
  half4 av = as_half4((uint2)(a[2 * l], a[2 * l + 1]));
  half8 bv = as_half8((uint4)(b[4 * l], b[4 * l + 1], b[4 * l + 2], b[4 * l + 3]));
  float4 cv = (float4)(c[4 * l], c[4 * l + 1], c[4 * l + 2], c[4 * l + 3]);
  float4 dv = __builtin_amdgcn_smfmac_f32_16x16x32_f16(av, bv, cv, idx[l], 0, 0);
  d[4 * l] = dv.x;
  d[4 * l + 1] = dv.y;
  d[4 * l + 2] = dv.z;
  d[4 * l + 3] = dv.w;
}

__kernel void smfmac_i8(__global const int* a, __global const int* b, __global const int* c,
                        __global const int* idx, __global int* d) {
  uint l = __builtin_amdgcn_workitem_id_x();
  int2 av = (int2)(a[2 * l], a[2 * l + 1]);
  int4 bv = (int4)(b[4 * l], b[4 * l + 1], b[4 * l + 2], b[4 * l + 3]);
  int4 cv = (int4)(c[4 * l], c[4 * l + 1], c[4 * l + 2], c[4 * l + 3]);
  int4 dv = __builtin_amdgcn_smfmac_i32_16x16x64_i8(av, bv, cv, idx[l], 0, 0);
  d[4 * l] = dv.x;
  d[4 * l + 1] = dv.y;
  d[4 * l + 2] = dv.z;
  d[4 * l + 3] = dv.w;
}
