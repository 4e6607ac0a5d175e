// rocBLAS (Debian's 5.5, its precompiled Tensile kernels unmodified): sgemm with A
// transposed, dgemm, hgemm, gemm_ex (half inputs, f32 results), sgemv, saxpy and
// snrm2, checked against the CPU. Prints "ok" when every result is right. Needs
// librocblas-dev (`cargo xtask rocm-env`).
// hipcc: -lrocblas
// profiles: gfx1100 (Debian's rocBLAS ships no gfx942 kernels)
#include <hip/hip_fp16.h>
#include <hip/hip_runtime.h>
#include <rocblas/rocblas.h>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#define CHECK(x)                                                              \
  do {                                                                        \
    int e = (int)(x);                                                         \
    if (e != 0) {                                                             \
      printf("FAILED: %s: %d\n", #x, e);                                      \
      return 1;                                                               \
    }                                                                         \
  } while (0)

const int m = 256, n = 192, k = 128;

// Column-major C = op(A) B against the CPU's f64 sum, within `tol` (relative).
template <class T>
int check_gemm(const char* name, const std::vector<T>& got, const std::vector<double>& a,
               const std::vector<double>& b, bool a_transposed, double tol) {
  int bad = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int l = 0; l < k; l++) s += (a_transposed ? a[l + i * k] : a[i + l * m]) * b[l + j * k];
      double g = (double)got[i + j * m];
      if (fabs(g - s) > tol * fmax(1, fabs(s)) && bad++ < 3) printf("%s (%d, %d): %g, expected %g\n", name, i, j, g, s);
    }
  return bad;
}

template <class T>
T* device_copy(const std::vector<T>& v) {
  T* d = nullptr;
  if (hipMalloc(&d, v.size() * sizeof(T)) != hipSuccess) return nullptr;
  if (hipMemcpy(d, v.data(), v.size() * sizeof(T), hipMemcpyHostToDevice) != hipSuccess) return nullptr;
  return d;
}

template <class T>
std::vector<T> host_copy(const T* d, size_t count) {
  std::vector<T> v(count);
  if (hipMemcpy(v.data(), d, count * sizeof(T), hipMemcpyDeviceToHost) != hipSuccess) v.clear();
  return v;
}

rocblas_half half_of(double x) {
  __half h = __float2half((float)x);
  rocblas_half r;
  memcpy(&r, &h, 2);
  return r;
}

float float_of(rocblas_half x) {
  __half h;
  memcpy(&h, &x, 2);
  return __half2float(h);
}

int main() {
  rocblas_handle h;
  CHECK(rocblas_create_handle(&h));
  std::vector<double> a(m * k), b(k * n);
  for (int i = 0; i < m * k; i++) a[i] = (i % 13) * 0.25 - 1.5;
  for (int i = 0; i < k * n; i++) b[i] = (i % 7) * 0.5 - 1.0;
  std::vector<float> fa(a.begin(), a.end()), fb(b.begin(), b.end());
  std::vector<rocblas_half> ha(m * k), hb(k * n);
  for (int i = 0; i < m * k; i++) ha[i] = half_of(a[i]);
  for (int i = 0; i < k * n; i++) hb[i] = half_of(b[i]);
  int bad = 0;

  float *da = device_copy(fa), *db = device_copy(fb), *dc = device_copy(std::vector<float>(m * n));
  double *dda = device_copy(a), *ddb = device_copy(b), *ddc = device_copy(std::vector<double>(m * n));
  rocblas_half *dha = device_copy(ha), *dhb = device_copy(hb), *dhc = device_copy(std::vector<rocblas_half>(m * n));
  if (!da || !db || !dc || !dda || !ddb || !ddc || !dha || !dhb || !dhc) {
    printf("FAILED: device buffers\n");
    return 1;
  }
  float one = 1, zero = 0, two = 2;
  double one_d = 1, zero_d = 0;
  rocblas_half one_h = half_of(1), zero_h = half_of(0);
  const rocblas_operation N = rocblas_operation_none, T = rocblas_operation_transpose;

  CHECK(rocblas_sgemm(h, T, N, m, n, k, &one, da, k, db, k, &zero, dc, m));
  bad += check_gemm("sgemm (A transposed)", host_copy(dc, m * n), a, b, true, 1e-5);
  CHECK(rocblas_dgemm(h, N, N, m, n, k, &one_d, dda, m, ddb, k, &zero_d, ddc, m));
  bad += check_gemm("dgemm", host_copy(ddc, m * n), a, b, false, 1e-12);
  CHECK(rocblas_hgemm(h, N, N, m, n, k, &one_h, dha, m, dhb, k, &zero_h, dhc, m));
  std::vector<float> hc;
  for (rocblas_half x : host_copy(dhc, m * n)) hc.push_back(float_of(x));
  bad += check_gemm("hgemm", hc, a, b, false, 2e-3);
  CHECK(rocblas_gemm_ex(h, N, N, m, n, k, &one, dha, rocblas_datatype_f16_r, m, dhb, rocblas_datatype_f16_r, k,
                        &zero, dc, rocblas_datatype_f32_r, m, dc, rocblas_datatype_f32_r, m,
                        rocblas_datatype_f32_r, rocblas_gemm_algo_standard, 0, 0));
  bad += check_gemm("gemm_ex (f16 in, f32 out)", host_copy(dc, m * n), a, b, false, 1e-5);

  // y = 3 A x, by sgemv then y += 2 y; its norm.
  std::vector<float> x(k);
  for (int i = 0; i < k; i++) x[i] = (i % 5) - 2.0f;
  float *dx = device_copy(x), *dy = device_copy(std::vector<float>(m));
  if (!dx || !dy) {
    printf("FAILED: device buffers\n");
    return 1;
  }
  CHECK(rocblas_sgemv(h, N, m, k, &one, da, m, dx, 1, &zero, dy, 1));
  CHECK(rocblas_saxpy(h, m, &two, dy, 1, dy, 1));
  float norm = 0;
  CHECK(rocblas_snrm2(h, m, dy, 1, &norm));
  std::vector<float> y = host_copy(dy, m);
  double norm_want = 0;
  for (int i = 0; i < m; i++) {
    double s = 0;
    for (int l = 0; l < k; l++) s += a[i + l * m] * x[l];
    s *= 3;
    norm_want += s * s;
    if (fabs(y[i] - s) > 1e-4 * fmax(1, fabs(s)) && bad++ < 3) printf("sgemv, saxpy %d: %g, expected %g\n", i, y[i], s);
  }
  norm_want = sqrt(norm_want);
  if (fabs(norm - norm_want) > 1e-4 * norm_want) {
    bad++;
    printf("snrm2: %g, expected %g\n", norm, norm_want);
  }
  CHECK(hipDeviceSynchronize());
  CHECK(rocblas_destroy_handle(h));
  printf("%s (%d wrong)\n", bad ? "FAILED" : "ok", bad);
  return bad != 0;
}
