// Scalar arguments of every size the runtime packs: 8-byte integers and doubles (two
// value words, low first), 4-, 2- and 1-byte integers.
__kernel void args(__global ulong* out, ulong a, double d, uint u, short s, uchar c) {
  if (__builtin_amdgcn_workitem_id_x() != 0) return;
  out[0] = a;
  out[1] = as_ulong(d * 2.0);
  out[2] = u;
  out[3] = (ulong)(long)s;
  out[4] = c;
}
