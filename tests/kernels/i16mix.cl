// 16-bit integers (short / ushort arithmetic, shifts, compares, division), f16<->f32
// packing, and bit tests: each item computes from its inputs and stores every result.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void i16mix(__global const short* a, __global const short* b, __global short* s, __global ushort* u,
                    __global uint* bits, __global const float* f, __global uint* packed, __global float* back, uint n) {
  uint i = __builtin_amdgcn_workgroup_id_x() * 256 + __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  short x = a[i], y = b[i];
  s[4 * i] = (short)(x + y);
  s[4 * i + 1] = (short)(x * y);
  s[4 * i + 2] = (short)(x >> (y & 7));
  s[4 * i + 3] = x < y ? x : y;
  ushort ux = (ushort)x, uy = (ushort)y;
  u[4 * i] = (ushort)(ux / (ushort)(uy | 1));
  u[4 * i + 1] = (ushort)(ux >> (uy & 15));
  u[4 * i + 2] = ux > uy ? ux : uy;
  u[4 * i + 3] = (ushort)(ux * 3 + uy);
  // Bit tests and counts.
  uint w = (uint)(int)x;
  bits[4 * i] = ((w >> (uy & 31)) & 1) ? 7u : 9u;
  bits[4 * i + 1] = (uint)__builtin_popcount((uint)(ux ^ uy));
  bits[4 * i + 2] = (uint)__builtin_ctz(w | 0x80000000u);
  bits[4 * i + 3] = (w & (1u << (ux & 31))) != 0;
  // Two floats to halves, packed (round toward zero), and back.
  float p = f[2 * i], q = f[2 * i + 1];
  half2 h = __builtin_amdgcn_cvt_pkrtz(p, q);
  packed[i] = as_uint(h);
  half hp = (half)p;
  back[2 * i] = (float)hp;
  back[2 * i + 1] = (float)h.y + (float)hp;
}
