// A kernel launch as the process's first GPU work: no copy or fill before it, so
// the launch itself loads the code object and brings up the queue, and its
// doorbell is the queue's first (an AQL index of 0). Then hipDeviceSynchronize and a
// copy out. Prints "ok" when every element is right.
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

__global__ void iota3(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 3 * i + 1;
}

int main() {
  const int n = 4096;
  int* out = nullptr;
  CHECK(hipMalloc(&out, n * sizeof(int)));
  hipLaunchKernelGGL(iota3, dim3(n / 256), dim3(256), 0, 0, out, n);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  static int host[n];
  CHECK(hipMemcpy(host, out, n * sizeof(int), hipMemcpyDeviceToHost));
  int wrong = 0;
  for (int i = 0; i < n; i++) wrong += host[i] != 3 * i + 1;
  CHECK(hipFree(out));
  printf("%s (%d wrong)\n", wrong == 0 ? "ok" : "FAILED", wrong);
  return wrong != 0;
}
