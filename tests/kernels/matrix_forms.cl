// wave32 only
// The matrix workload's shape (see matrix.cl) for the other WMMA forms: each one-wave
// workgroup runs four independent chains of `iters` WMMAs of one form, every lane
// loading its operand registers straight from A (four chains) and B and storing its
// accumulators at C + (workgroup × 32 + lane) × 4 chains × 8 dwords. The registers hold
// whatever the buffers hold (the benchmark times the instructions, whose cost does not
// depend on which matrix element a register is).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
typedef half half16 __attribute__((ext_vector_type(16)));
typedef half half8 __attribute__((ext_vector_type(8)));
typedef short short16 __attribute__((ext_vector_type(16)));
typedef short short8 __attribute__((ext_vector_type(8)));
typedef float float8 __attribute__((ext_vector_type(8)));
typedef int int8 __attribute__((ext_vector_type(8)));

#define LANE() __builtin_amdgcn_workitem_id_x()
#define GROUP() __builtin_amdgcn_workgroup_id_x()

// Four chains: the operand type AT (one lane's A or B registers), the accumulator type
// CT, the step `STEP(a, b, c)`.
#define CHAINS(AT, CT, STEP)                                                    \
  __global const AT* a = (__global const AT*)A + LANE() * 4;                    \
  AT a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];                                \
  AT b = ((__global const AT*)B)[LANE()];                                       \
  CT c0 = 0, c1 = 0, c2 = 0, c3 = 0;                                            \
  for (uint i = 0; i < iters; i++) {                                            \
    c0 = STEP(a0, b, c0);                                                       \
    c1 = STEP(a1, b, c1);                                                       \
    c2 = STEP(a2, b, c2);                                                       \
    c3 = STEP(a3, b, c3);                                                       \
  }                                                                             \
  __global CT* out = (__global CT*)C + (GROUP() * 32 + LANE()) * 4;             \
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;

#ifdef __GFX12__
#define BF16(a, b, c) __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(a, b, c)
#define F16ACC(a, b, c) __builtin_amdgcn_wmma_f16_16x16x16_f16_w32_gfx12(a, b, c)
#define BF16ACC(a, b, c) __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w32_gfx12(a, b, c)
#define IU8(a, b, c) __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32_gfx12(true, a, true, b, c, false)
#define IU4(a, b, c) __builtin_amdgcn_wmma_i32_16x16x16_iu4_w32_gfx12(true, a, true, b, c, false)
typedef short8 bf16_regs;
typedef half8 f16_regs;
typedef half8 f16_acc;
typedef short8 bf16_acc;
typedef int2 iu8_regs;
typedef int iu4_regs;
#else
#define BF16(a, b, c) __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a, b, c)
#define F16ACC(a, b, c) __builtin_amdgcn_wmma_f16_16x16x16_f16_w32(a, b, c, false)
#define BF16ACC(a, b, c) __builtin_amdgcn_wmma_bf16_16x16x16_bf16_w32(a, b, c, false)
#define IU8(a, b, c) __builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, a, true, b, c, false)
#define IU4(a, b, c) __builtin_amdgcn_wmma_i32_16x16x16_iu4_w32(true, a, true, b, c, false)
typedef short16 bf16_regs;
typedef half16 f16_regs;
typedef half16 f16_acc;
typedef short16 bf16_acc;
typedef int4 iu8_regs;
typedef int2 iu4_regs;
#endif

__kernel void matrix_bf16(__global const void* A, __global const void* B, __global void* C, uint iters) {
  CHAINS(bf16_regs, float8, BF16)
}

__kernel void matrix_f16acc(__global const void* A, __global const void* B, __global void* C, uint iters) {
  CHAINS(f16_regs, f16_acc, F16ACC)
}

__kernel void matrix_bf16acc(__global const void* A, __global const void* B, __global void* C, uint iters) {
  CHAINS(bf16_regs, bf16_acc, BF16ACC)
}

__kernel void matrix_iu8(__global const void* A, __global const void* B, __global void* C, uint iters) {
  CHAINS(iu8_regs, int8, IU8)
}

__kernel void matrix_iu4(__global const void* A, __global const void* B, __global void* C, uint iters) {
  CHAINS(iu4_regs, int8, IU4)
}
