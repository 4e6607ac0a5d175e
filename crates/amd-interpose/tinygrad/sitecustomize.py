"""Compiles tinygrad 0.10.1's AMD kernels with clang-19 instead of ROCm's comgr.

tinygrad's AMD backend compiles its HIP kernel source with comgr (libamd_comgr.so),
which is not installable here for gfx1100. Put this directory on PYTHONPATH (Python
imports `sitecustomize` at startup) and tinygrad's `AMDCompiler.compile` calls
`clang-19 -x hip --cuda-device-only` instead. Only the compiler changes: the runtime
under test (ops_amd.py, support/hcq.py) is tinygrad's, unmodified.

Without ROCm's device libraries, the few functions tinygrad's renderer declares from
them (`__ockl_get_*`, `__ocml_*`) are defined here from clang builtins (sine with its
range reduced first, as ocml's is); the local size comes from the dispatch packet,
which tinygrad fills.
"""
import importlib.abc, importlib.machinery, os, subprocess, sys, tempfile, types

CLANG = os.environ.get("AMD_INTERPOSE_CLANG", "clang-19")

PREAMBLE = r"""
typedef long unsigned int size_t;
#define AI_DEV extern "C" __attribute__((device))
AI_DEV __attribute__((const)) size_t __ockl_get_local_id(unsigned int d) {
  return d == 0 ? __builtin_amdgcn_workitem_id_x() : d == 1 ? __builtin_amdgcn_workitem_id_y() : __builtin_amdgcn_workitem_id_z(); }
AI_DEV __attribute__((const)) size_t __ockl_get_group_id(unsigned int d) {
  return d == 0 ? __builtin_amdgcn_workgroup_id_x() : d == 1 ? __builtin_amdgcn_workgroup_id_y() : __builtin_amdgcn_workgroup_id_z(); }
AI_DEV __attribute__((const)) size_t __ockl_get_local_size(unsigned int d) {
  /* hsa_kernel_dispatch_packet_t: workgroup_size_x/y/z are the u16s at bytes 4, 6, 8. */
  const unsigned short *p = (const unsigned short *)__builtin_amdgcn_dispatch_ptr();
  return p[2 + (d < 3 ? d : 0)]; }
#define AI_F(n, t, expr) AI_DEV t n(t x) { return expr; }
AI_F(__ocml_exp2_f32, float, __builtin_exp2f(x))
AI_F(__ocml_log2_f32, float, __builtin_log2f(x))
AI_F(__ocml_sqrt_f32, float, __builtin_sqrtf(x))
/* llvm.sin lowers to v_sin_f32 on x / 2pi rounded to f32, which keeps no fraction of a
   large argument (sin(1e5) off by 0.03); ocml reduces the range first. So does this:
   the turns in f64, their fraction, then the hardware's sine of turns. */
AI_DEV float __ocml_sin_f32(float x) {
  double t = (double)x * 0.15915494309189533577;
  return __builtin_amdgcn_sinf((float)(t - __builtin_floor(t))); }
AI_F(__ocml_sqrt_f64, double, __builtin_sqrt(x))
AI_F(__ocml_exp2_f16, _Float16, (_Float16)__builtin_exp2f((float)x))
AI_F(__ocml_log2_f16, _Float16, (_Float16)__builtin_log2f((float)x))
AI_F(__ocml_sqrt_f16, _Float16, (_Float16)__builtin_sqrtf((float)x))
AI_F(__ocml_sin_f16, _Float16, (_Float16)__ocml_sin_f32((float)x))
AI_DEV float __ocml_fmax_f32(float a, float b) { return __builtin_fmaxf(a, b); }
AI_DEV double __ocml_fmax_f64(double a, double b) { return __builtin_fmax(a, b); }
AI_DEV _Float16 __ocml_fmax_f16(_Float16 a, _Float16 b) { return __builtin_fmaxf16(a, b); }
"""


def compile_hip(src: str, arch: str) -> bytes:
  with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "pre.h"), "w") as f: f.write(PREAMBLE)
    with open(os.path.join(d, "k.hip"), "w") as f: f.write(src)
    out = os.path.join(d, "k.hsaco")
    r = subprocess.run([CLANG, "-x", "hip", f"--offload-arch={arch}", "--cuda-device-only", "--no-gpu-bundle-output",
                        "-nogpulib", "-nogpuinc", "-O3", "-mcumode", "-std=c++14", "-Wno-unused-command-line-argument",
                        "-include", os.path.join(d, "pre.h"), os.path.join(d, "k.hip"), "-o", out],
                       capture_output=True, text=True)
    if r.returncode != 0: raise RuntimeError(f"clang-19 failed:\n{r.stderr}\n{src}")
    with open(out, "rb") as f: return f.read()


# tinygrad imports its comgr bindings (which load libamd_comgr.so) with the compiler
# module: an empty module stands in for them.
sys.modules.setdefault("tinygrad.runtime.autogen.comgr", types.ModuleType("tinygrad.runtime.autogen.comgr"))


class _PatchCompiler(importlib.abc.MetaPathFinder):
  NAME = "tinygrad.runtime.support.compiler_hip"

  def find_spec(self, name, path, target=None):
    if name != self.NAME: return None
    spec = importlib.machinery.PathFinder.find_spec(name, path)
    if spec is None or spec.loader is None: return spec
    run = spec.loader.exec_module

    def exec_module(module):
      run(module)
      module.compile_hip = lambda src, arch="gfx1100", asm=False: compile_hip(src, arch)

    spec.loader.exec_module = exec_module
    return spec


sys.meta_path.insert(0, _PatchCompiler())
