// A vector add through HIP's runtime: hipMalloc, hipMemcpy both ways, a kernel
// launch timed with events, hipDeviceSynchronize. Prints "ok" when every element is
// right.
#include <hip/hip_runtime.h>
#include <cstdio>

#define CHECK(x)                                                              \
  do {                                                                        \
    hipError_t e = (x);                                                       \
    if (e != hipSuccess) {                                                    \
      printf("FAILED: %s: %s\n", #x, hipGetErrorString(e));                   \
      return 1;                                                               \
    }                                                                         \
  } while (0)

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1 << 16;
  float *a, *b, *c;
  float *ha = new float[n], *hb = new float[n], *hc = new float[n];
  for (int i = 0; i < n; i++) { ha[i] = i; hb[i] = 2 * i; hc[i] = -1; }
  CHECK(hipMalloc(&a, n * 4));
  CHECK(hipMalloc(&b, n * 4));
  CHECK(hipMalloc(&c, n * 4));
  CHECK(hipMemcpy(a, ha, n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(b, hb, n * 4, hipMemcpyHostToDevice));
  hipEvent_t start, stop;
  CHECK(hipEventCreate(&start));
  CHECK(hipEventCreate(&stop));
  CHECK(hipEventRecord(start, 0));
  vadd<<<n / 256, 256>>>(a, b, c, n);
  CHECK(hipGetLastError());
  CHECK(hipEventRecord(stop, 0));
  CHECK(hipEventSynchronize(stop));
  float ms = -1;
  CHECK(hipEventElapsedTime(&ms, start, stop));
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(hc, c, n * 4, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++) bad += hc[i] != 3.0f * i;
  if (ms < 0) { printf("FAILED: event time %f ms\n", ms); return 1; }
  printf("%s (%d wrong)\n", bad ? "FAILED" : "ok", bad);
  return bad != 0;
}
