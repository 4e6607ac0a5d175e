// C = A · B for n×n floats (n a multiple of 16), tiled 16×16 through LDS.
__kernel void matmul(__global const float* A, __global const float* B, __global float* C, uint n) {
  __local float ta[16][16];
  __local float tb[16][16];
  uint tx = __builtin_amdgcn_workitem_id_x(), ty = __builtin_amdgcn_workitem_id_y();
  uint col = __builtin_amdgcn_workgroup_id_x() * 16 + tx, row = __builtin_amdgcn_workgroup_id_y() * 16 + ty;
  float acc = 0.0f;
  for (uint t = 0; t < n; t += 16) {
    ta[ty][tx] = A[row * n + t + tx];
    tb[ty][tx] = B[(t + ty) * n + col];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
    for (uint k = 0; k < 16; k++) acc += ta[ty][k] * tb[k][tx];
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  }
  C[row * n + col] = acc;
}
