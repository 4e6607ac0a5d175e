// rocFFT (Debian's 5.7): a 256-point single-precision complex forward FFT, in place,
// checked against a direct DFT on the CPU. rocFFT compiles its kernels at run time
// (hipRTC) for the GPU it finds, so this runs on every profile. Prints "ok" when
// every bin is right. Needs librocfft-dev (`cargo xtask rocm-env`).
// hipcc: -lrocfft
#include <hip/hip_runtime.h>
#include <rocfft/rocfft.h>
#include <cmath>
#include <complex>
#include <cstdio>
#include <vector>

int main() {
  const size_t n = 256;
  std::vector<std::complex<float>> x(n);
  for (size_t i = 0; i < n; i++) x[i] = {std::cos(0.1f * i) + 0.01f * (i % 7), std::sin(0.3f * i)};
  if (rocfft_setup() != rocfft_status_success) {
    printf("FAILED: rocfft_setup\n");
    return 1;
  }
  rocfft_plan plan = nullptr;
  size_t len = n;
  if (rocfft_plan_create(&plan, rocfft_placement_inplace, rocfft_transform_type_complex_forward,
                         rocfft_precision_single, 1, &len, 1, nullptr) != rocfft_status_success) {
    printf("FAILED: rocfft_plan_create\n");
    return 1;
  }
  size_t work_bytes = 0;
  rocfft_plan_get_work_buffer_size(plan, &work_bytes);
  rocfft_execution_info info = nullptr;
  rocfft_execution_info_create(&info);
  void* work = nullptr;
  if (work_bytes) {
    if (hipMalloc(&work, work_bytes) != hipSuccess) return 1;
    rocfft_execution_info_set_work_buffer(info, work, work_bytes);
  }
  void* d = nullptr;
  if (hipMalloc(&d, n * 8) != hipSuccess || hipMemcpy(d, x.data(), n * 8, hipMemcpyHostToDevice) != hipSuccess) {
    printf("FAILED: device buffer\n");
    return 1;
  }
  if (rocfft_execute(plan, &d, nullptr, info) != rocfft_status_success) {
    printf("FAILED: rocfft_execute\n");
    return 1;
  }
  std::vector<std::complex<float>> y(n);
  if (hipDeviceSynchronize() != hipSuccess || hipMemcpy(y.data(), d, n * 8, hipMemcpyDeviceToHost) != hipSuccess) {
    printf("FAILED: copying the result out\n");
    return 1;
  }
  int bad = 0;
  double worst = 0;
  for (size_t k = 0; k < n; k++) {
    std::complex<double> s = 0;
    for (size_t j = 0; j < n; j++) s += std::complex<double>(x[j]) * std::polar(1.0, -2 * M_PI * double(j * k) / n);
    double e = std::abs(s - std::complex<double>(y[k]));
    worst = std::max(worst, e);
    if (e > 1e-3 * std::max(1.0, std::abs(s)) && bad++ < 5) printf("bin %zu: off by %g\n", k, e);
  }
  rocfft_execution_info_destroy(info);
  rocfft_plan_destroy(plan);
  rocfft_cleanup();
  printf("%s (%d wrong, largest error %.2g)\n", bad ? "FAILED" : "ok", bad, worst);
  return bad != 0;
}
