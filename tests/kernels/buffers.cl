// Buffer (MUBUF) loads and stores through resources the kernel makes, as compilers
// emit them for bounds-checked accesses: raw buffers (stride 0) whose range check makes
// a load past NUM_RECORDS bytes read 0 and a store past them write nothing. Dwords,
// whole 16-byte vectors, bytes and half-words; an SGPR offset.
#ifdef __GFX9__
// gfx9's V# word 3: DATA_FORMAT 32, NUM_FORMAT float (an untyped access wants a valid
// format there).
#define FLAGS 0x00027000
#else
// gfx11's and gfx12's: FORMAT 32_FLOAT, the raw buffers' range check.
#define FLAGS 0x31014000
#endif

__kernel void buffers(__global const uint* in, __global uint* out, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  __amdgpu_buffer_rsrc_t src = __builtin_amdgcn_make_buffer_rsrc((__global void*)in, 0, n * 4, FLAGS);
  // out holds 4n dwords; its resource covers the first 3n.
  __amdgpu_buffer_rsrc_t dst = __builtin_amdgcn_make_buffer_rsrc(out, 0, 3 * n * 4, FLAGS);
  uint a = __builtin_amdgcn_raw_buffer_load_b32(src, (int)(i * 4), 0, 0);
  // Past the end for the upper half of the lanes: 0.
  uint b = __builtin_amdgcn_raw_buffer_load_b32(src, (int)((i + n / 2) * 4), 0, 0);
  // The 16 bytes of i's group of four, 16 bytes further through the SGPR offset.
  uint4 c = __builtin_amdgcn_raw_buffer_load_b128(src, (int)((i & ~3u) * 4) % (int)(n * 4 - 16), 16, 0);
  uint d = __builtin_amdgcn_raw_buffer_load_b8(src, (int)i, 0, 0);
  uint e = __builtin_amdgcn_raw_buffer_load_b16(src, (int)(2 * i), 0, 0);
  __builtin_amdgcn_raw_buffer_store_b32(a + 3 * b, dst, (int)(i * 4), 0, 0);
  __builtin_amdgcn_raw_buffer_store_b32(c.x ^ c.y ^ c.z ^ c.w, dst, (int)((n + i) * 4), 0, 0);
  __builtin_amdgcn_raw_buffer_store_b16((ushort)e, dst, (int)((2 * n + i) * 4), 0, 0);
  __builtin_amdgcn_raw_buffer_store_b8((uchar)d, dst, (int)((2 * n + i) * 4 + 2), 0, 0);
  // Past the resource's end: nothing written.
  __builtin_amdgcn_raw_buffer_store_b32(0xdead, dst, (int)((3 * n + i) * 4), 0, 0);
}
