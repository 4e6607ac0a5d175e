// C = A · B for n×n floats, each lane one element of C read straight from global memory
// (no local memory, no barrier), as tinygrad's kernels without a local tile compute it.
__kernel void matmul_direct(__global const float* A, __global const float* B, __global float* C, uint n) {
  uint col = __builtin_amdgcn_workgroup_id_x() * 16 + __builtin_amdgcn_workitem_id_x();
  uint row = __builtin_amdgcn_workgroup_id_y() * 16 + __builtin_amdgcn_workitem_id_y();
  float acc = 0.0f;
  for (uint k = 0; k < n; k++) acc += A[row * n + k] * B[k * n + col];
  C[row * n + col] = acc;
}
