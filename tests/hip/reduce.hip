// A sum of 2^20 integers: a shared-memory tree per block, then one atomicAdd per
// block into a global total; checked against the CPU's sum. Prints "ok" when right.
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

__global__ void reduce(const unsigned* in, unsigned long long* total, int n) {
  __shared__ unsigned s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(total, (unsigned long long)s[0]);
}

int main() {
  const int n = 1 << 20;
  unsigned* h = new unsigned[n];
  unsigned long long want = 0;
  for (int i = 0; i < n; i++) { h[i] = (i * 2654435761u) >> 20; want += h[i]; }
  unsigned* in;
  unsigned long long* total;
  CHECK(hipMalloc(&in, n * 4));
  CHECK(hipMalloc(&total, 8));
  CHECK(hipMemcpy(in, h, n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemset(total, 0, 8));
  reduce<<<n / 256, 256>>>(in, total, n);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  unsigned long long got = 0;
  CHECK(hipMemcpy(&got, total, 8, hipMemcpyDeviceToHost));
  printf("%s (sum %llu, expected %llu)\n", got == want ? "ok" : "FAILED", got, want);
  return got != want;
}
