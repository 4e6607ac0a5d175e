// C = A · B for n×n halves (n a multiple of 16), tiled 16×16 through LDS; each
// work-item computes two columns with packed f16 math and accumulates in f16.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void matmul_f16(__global const half* A, __global const half* B, __global half* C, uint n) {
  __local half ta[16][16];
  __local half2 tb[16][8];
  uint tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
  uint col2 = __builtin_amdgcn_workgroup_id_x() * 8 + tx, row = __builtin_amdgcn_workgroup_id_y() * 16 + ty;
  half2 acc = (half2)(0.0h, 0.0h);
  for (uint t = 0; t < n; t += 16) {
    ta[ty][tx] = A[row * n + t + tx];
    ta[ty][tx + 8] = A[row * n + t + tx + 8];
    tb[ty][tx] = ((__global const half2*)B)[((t + ty) * n) / 2 + col2];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    for (uint k = 0; k < 16; k++) acc += (half2)(ta[ty][k], ta[ty][k]) * tb[k][tx];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  }
  ((__global half2*)C)[(row * n) / 2 + col2] = acc;
}
