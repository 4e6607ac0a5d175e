// y[i] = a * x[i] + y[i], 256 work-items per group.
__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i < n) y[i] = a * x[i] + y[i];
}
