// gfx9's f64 atomics (HIP's atomicAdd on a double compiles to the first on gfx942):
// every lane adds its value into one of 8 sums, keeping the value it replaced, and
// again into a second set without it (the non-returning form), and takes the minimum
// and maximum of its group of 64 into mins and maxs.
// targets: gfx942
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void atomics_f64(__global const double* x, __global double* sums, __global double* mins,
                          __global double* maxs, __global double* sums2, __global double* olds, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  double v = x[i];
  olds[i] = __builtin_amdgcn_global_atomic_fadd_f64(&sums[i % 8], v);
  __builtin_amdgcn_global_atomic_fmin_f64(&mins[i / 64], v);
  __builtin_amdgcn_global_atomic_fmax_f64(&maxs[i / 64], v);
  __builtin_amdgcn_global_atomic_fadd_f64(&sums2[i % 8], v);
}
