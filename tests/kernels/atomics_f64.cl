// gfx9's f64 atomics (HIP's atomicAdd on a double compiles to the first on gfx942):
// every lane adds its value into one of 8 sums, keeping the value it replaced, and
// again into a second set without it (the non-returning form), takes the minimum and
// maximum of its group of 64 into mins and maxs, and adds it into one of its
// workgroup's 4 sums in LDS (written out to lsums, the values the LDS adds returned to
// lolds).
// targets: gfx942
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void atomics_f64(__global const double* x, __global double* sums, __global double* mins,
                          __global double* maxs, __global double* sums2, __global double* olds,
                          __global double* lsums, __global double* lolds, uint n) {
  uint l = __builtin_amdgcn_workitem_id_x();
  uint g = __builtin_amdgcn_workgroup_id_x();
  uint i = g * 256 + l;
  __local double part[4];
  if (l < 4) part[l] = 0.0;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  double v = i < n ? x[i] : 0.0;
  lolds[i] = __builtin_amdgcn_ds_atomic_fadd_f64(&part[l % 4], v);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (l < 4) lsums[4 * g + l] = part[l];
  if (i >= n) return;
  olds[i] = __builtin_amdgcn_global_atomic_fadd_f64(&sums[i % 8], v);
  __builtin_amdgcn_global_atomic_fmin_f64(&mins[i / 64], v);
  __builtin_amdgcn_global_atomic_fmax_f64(&maxs[i / 64], v);
  __builtin_amdgcn_global_atomic_fadd_f64(&sums2[i % 8], v);
}
