// A tiled matrix multiply with shared memory and barriers (16x16 tiles), checked
// against the same product on the CPU. Prints "ok" when every element matches.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <cmath>

#define CHECK(x)                                                              \
  do {                                                                        \
    hipError_t e = (x);                                                       \
    if (e != hipSuccess) {                                                    \
      printf("FAILED: %s: %s\n", #x, hipGetErrorString(e));                   \
      return 1;                                                               \
    }                                                                         \
  } while (0)

#define TILE 16

__global__ void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[TILE][TILE];
  __shared__ float tb[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0;
  for (int t = 0; t < n / TILE; t++) {
    ta[threadIdx.y][threadIdx.x] = a[row * n + t * TILE + threadIdx.x];
    tb[threadIdx.y][threadIdx.x] = b[(t * TILE + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

int main() {
  const int n = 128;
  float *ha = new float[n * n], *hb = new float[n * n], *hc = new float[n * n];
  for (int i = 0; i < n * n; i++) { ha[i] = (i % 7) - 3; hb[i] = (i % 5) * 0.5f; }
  float *a, *b, *c;
  CHECK(hipMalloc(&a, n * n * 4));
  CHECK(hipMalloc(&b, n * n * 4));
  CHECK(hipMalloc(&c, n * n * 4));
  CHECK(hipMemcpy(a, ha, n * n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(b, hb, n * n * 4, hipMemcpyHostToDevice));
  matmul<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(a, b, c, n);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  CHECK(hipMemcpy(hc, c, n * n * 4, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float want = 0;
      for (int k = 0; k < n; k++) want += ha[i * n + k] * hb[k * n + j];
      bad += fabsf(hc[i * n + j] - want) > 1e-3f;
    }
  printf("%s (%d wrong)\n", bad ? "FAILED" : "ok", bad);
  return bad != 0;
}
