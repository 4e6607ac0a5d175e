// A bug the mock's sanitizer finds: a kernel reads a hipMalloc buffer nothing wrote
// (no copy, no memset). On a GPU without large BAR (AMD_MOCK_LARGE_BAR=0) ROCr's
// device memory is GPU-only VRAM, which the sanitizer watches: with
// AMD_MOCK_SANITIZE=1 the launch stops with a memory fault and the mock's report
// names the byte; without it the program prints "ran" and whatever the memory held.
#include <hip/hip_runtime.h>
#include <cstdio>

__global__ void inc(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1;
}

int main() {
  const int n = 1024;
  int *in = nullptr, *out = nullptr;
  if (hipMalloc(&in, n * sizeof(int)) != hipSuccess || hipMalloc(&out, n * sizeof(int)) != hipSuccess) {
    printf("FAILED: hipMalloc\n");
    return 1;
  }
  hipLaunchKernelGGL(inc, dim3(n / 256), dim3(256), 0, 0, in, out, n);
  hipError_t e = hipDeviceSynchronize();
  printf("ran: %s\n", hipGetErrorString(e));
  return e == hipSuccess ? 0 : 1;
}
