// gfx9's loads from memory straight into LDS, through M0: each wave of 64 loads a dword
// a lane into its own stretch of LDS with `global_load_lds_dword` (plainly, and with an
// instruction offset, which moves the global address and the LDS address alike, under
// a divergent branch that leaves the skipping lanes' dwords as they were),
// `buffer_load_dword … lds` (a raw buffer over the workgroup's part of src, with an
// offset) and `global_load_lds_sshort` (a short a lane, sign-extended into its dword);
// the values are read back from LDS by other lanes. The loads are written in assembly:
// clang-19 crashes on gfx942's `__builtin_amdgcn_global_load_lds` (in the hazard
// recognizer).
// targets: gfx942
// optimised only
// clang-19: -Wno-inline-asm
__kernel void lds_dma(__global const uint* src, __global const short* halves, __global uint* out) {
  uint l = __builtin_amdgcn_workitem_id_x();
  uint g = __builtin_amdgcn_workgroup_id_x();
  uint i = g * 256 + l;
  uint wave = l / 64, lane = l % 64;
  __local uint tile[4 * 512];
  __local uint* mine = tile + wave * 512;
  mine[128 + 4 + lane] = 0xdead0000u + lane;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  // M0 and the resource are scalar operands: readfirstlane makes them so at -O0 too.
#define SCALAR(x) __builtin_amdgcn_readfirstlane(x)
  uint base = SCALAR((uint)(ulong)mine);
  __global const uint* p = src + i;
  __asm volatile("s_mov_b32 m0, %0\n\ts_nop 0\n\tglobal_load_lds_dword %1, off\n\ts_waitcnt vmcnt(0)"
                 :: "s"(base), "v"(p) : "memory", "m0");
  if (lane % 5 != 0) {
    __asm volatile("s_mov_b32 m0, %0\n\ts_nop 0\n\tglobal_load_lds_dword %1, off offset:16\n\ts_waitcnt vmcnt(0)"
                   :: "s"(SCALAR(base + 128 * 4)), "v"(p) : "memory", "m0");
  }
  // A raw buffer of the workgroup's 256 + 8 dwords of src (gfx9's V#: base, stride 0,
  // NUM_RECORDS in bytes, DST_SEL and the 32-bit float format in word 3).
  ulong at = (ulong)(src + g * 256);
  uint4 rsrc = (uint4)(SCALAR((uint)at), SCALAR((uint)(at >> 32) & 0xffff), SCALAR(264 * 4), SCALAR(0x27000));
  __asm volatile("s_mov_b32 m0, %0\n\ts_nop 0\n\tbuffer_load_dword %1, %2, 0 offen offset:8 lds\n\ts_waitcnt vmcnt(0)"
                 :: "s"(SCALAR(base + 256 * 4)), "v"(l * 4), "s"(rsrc) : "memory", "m0");
  __global const short* h = halves + i;
  __asm volatile("s_mov_b32 m0, %0\n\ts_nop 0\n\tglobal_load_lds_sshort %1, off\n\ts_waitcnt vmcnt(0)"
                 :: "s"(SCALAR(base + 384 * 4)), "v"(h) : "memory", "m0");
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  out[4 * i] = mine[(lane + 1) % 64];
  out[4 * i + 1] = mine[128 + 4 + lane];
  out[4 * i + 2] = mine[256 + 2 + (lane + 63) % 64];
  out[4 * i + 3] = mine[384 + (lane + 2) % 64];
}
