// Nothing to run: a workgroup of it is the interpreter's fixed cost of starting and
// ending one (the interp bench's `workgroup_start`).
__kernel void empty(__global uint* out) { }
