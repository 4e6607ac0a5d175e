// 8-bit floats: the conversions to and from f32 (OCP's formats on gfx1201, FNUZ on
// gfx942), and on gfx942 an FP8 matrix multiply-add.
// targets: gfx1201 gfx942

// Each byte of in[i] to f32 (out[8i..8i+4]), then its two 16-bit halves as pairs
// (FP8 from the low half, BF8 from the high one).
__kernel void fp8_to_f32(__global const uint *in, __global float *out) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  uint v = in[i];
  out[8 * i + 0] = __builtin_amdgcn_cvt_f32_fp8(v, 0);
  out[8 * i + 1] = __builtin_amdgcn_cvt_f32_fp8(v, 1);
  out[8 * i + 2] = __builtin_amdgcn_cvt_f32_bf8(v, 2);
  out[8 * i + 3] = __builtin_amdgcn_cvt_f32_bf8(v, 3);
  float2 p = __builtin_amdgcn_cvt_pk_f32_fp8(v, false);
  float2 q = __builtin_amdgcn_cvt_pk_f32_bf8(v, true);
  out[8 * i + 4] = p.x;
  out[8 * i + 5] = p.y;
  out[8 * i + 6] = q.x;
  out[8 * i + 7] = q.y;
}

// in[2i] and in[2i+1] to FP8 (the low half of out[2i]) and to BF8 (its high half,
// in the other order), and rounded stochastically with the random bits `seed · (i+1)`
// (FP8, byte 0 of out[2i+1]) and `seed ^ i` (BF8, byte 3).
__kernel void fp8_from_f32(__global const float *in, __global uint *out, uint seed) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  float a = in[2 * i], b = in[2 * i + 1];
  uint w = __builtin_amdgcn_cvt_pk_fp8_f32(a, b, 0, false);
  w = __builtin_amdgcn_cvt_pk_bf8_f32(b, a, w, true);
  out[2 * i] = w;
  uint s = __builtin_amdgcn_cvt_sr_fp8_f32(a, seed * (i + 1), 0, 0);
  s = __builtin_amdgcn_cvt_sr_bf8_f32(b, seed ^ i, s, 3);
  out[2 * i + 1] = s;
}

#ifdef __gfx942__
// D = A · B + C for a 16×32 A (row-major bytes, FP8 or with `bf8_a` BF8), a 32×16 B
// (row-major FP8 bytes) and 16×16 C and D (row-major floats), by one wave of 64.
// Lane l holds A's row l % 16 and B's column l % 16 at k = 8 (l / 16) to 8 (l / 16) + 7,
// and C's and D's column l % 16 at rows 4 (l / 16) to 4 (l / 16) + 3.
__kernel void mfma_fp8(__global const uchar *a, __global const uchar *b, __global const float *c,
                       __global float *d, uint bf8_a) {
  uint l = __builtin_amdgcn_workitem_id_x();
  uint row = l % 16, k0 = 8 * (l / 16);
  long av = 0, bv = 0;
  for (uint j = 0; j < 8; j++) {
    av |= (long)a[row * 32 + k0 + j] << (8 * j);
    bv |= (long)b[(k0 + j) * 16 + row] << (8 * j);
  }
  float4 acc;
  for (uint j = 0; j < 4; j++) acc[j] = c[(4 * (l / 16) + j) * 16 + row];
  float4 r = bf8_a ? __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8(av, bv, acc, 0, 0, 0)
                   : __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(av, bv, acc, 0, 0, 0);
  for (uint j = 0; j < 4; j++) d[(4 * (l / 16) + j) * 16 + row] = r[j];
}
#endif
