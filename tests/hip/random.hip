// rocRAND (Debian's 5.7, its precompiled kernels unmodified): uniform floats from the
// Philox and MRG32k3a generators and normal ones from Philox, each in (0, 1] with the
// moments it should have, and the same again for the same seed. Prints "ok" when
// every check holds. (XORWOW works too but its state set-up takes the interpreter
// some 20 s.) Needs librocrand-dev (`cargo xtask rocm-env`).
// hipcc: -lrocrand
// profiles: gfx1100 (Debian's rocRAND ships no gfx942 kernels)
#include <hip/hip_runtime.h>
#include <rocrand/rocrand.h>
#include <cmath>
#include <cstdio>
#include <vector>

// 2^16 numbers of generator `type` from seed 1234: uniform, or normal (mean 0, sd 1).
static bool generate(rocrand_rng_type type, bool normal, float* d, std::vector<float>& out) {
  rocrand_generator g;
  if (rocrand_create_generator(&g, type) != ROCRAND_STATUS_SUCCESS) return false;
  bool ok = rocrand_set_seed(g, 1234) == ROCRAND_STATUS_SUCCESS &&
            (normal ? rocrand_generate_normal(g, d, out.size(), 0.0f, 1.0f)
                    : rocrand_generate_uniform(g, d, out.size())) == ROCRAND_STATUS_SUCCESS &&
            hipMemcpy(out.data(), d, out.size() * 4, hipMemcpyDeviceToHost) == hipSuccess;
  rocrand_destroy_generator(g);
  return ok;
}

int main() {
  const size_t n = 1 << 16;
  float* d = nullptr;
  if (hipMalloc(&d, n * 4) != hipSuccess) return 1;
  int bad = 0;
  struct Case {
    rocrand_rng_type type;
    bool normal;
    const char* name;
  } cases[] = {{ROCRAND_RNG_PSEUDO_PHILOX4_32_10, false, "philox uniform"},
               {ROCRAND_RNG_PSEUDO_MRG32K3A, false, "mrg32k3a uniform"},
               {ROCRAND_RNG_PSEUDO_PHILOX4_32_10, true, "philox normal"}};
  for (const Case& c : cases) {
    std::vector<float> a(n), b(n);
    if (!generate(c.type, c.normal, d, a) || !generate(c.type, c.normal, d, b)) {
      printf("FAILED: %s: rocRAND refused\n", c.name);
      return 1;
    }
    double mean = 0, var = 0;
    int outside = 0;
    for (float v : a) {
      mean += v;
      if (!c.normal && (v <= 0 || v > 1)) outside++;
    }
    mean /= n;
    for (float v : a) var += (v - mean) * (v - mean);
    var /= n;
    double want_mean = c.normal ? 0.0 : 0.5, want_var = c.normal ? 1.0 : 1.0 / 12;
    if (outside || std::fabs(mean - want_mean) > 0.02 || std::fabs(var - want_var) > 0.05 * want_var || a != b) {
      bad++;
      printf("%s: mean %g, variance %g, %d outside, repeatable %d\n", c.name, mean, var, outside, int(a == b));
    }
  }
  printf("%s (%d wrong)\n", bad ? "FAILED" : "ok", bad);
  return bad != 0;
}
