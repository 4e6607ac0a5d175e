// A kernel that traps where its input says so (`__builtin_trap`, what HIP's `assert`
// and `abort` become: `s_trap 2`); elsewhere it adds one. The trap stops the dispatch,
// and the runtime's fault report names the instruction.
__kernel void trap(__global const uint* in, __global uint* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  if (in[i] == 0xdeadu) __builtin_trap();
  out[i] = in[i] + 1;
}
