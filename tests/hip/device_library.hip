// What HIP's device library and intrinsics give a kernel: single- and double-precision
// math (ROCm's OCML: sin, cos, exp, log, pow, tanh, erf, cbrt, log1p), warp shuffles
// and ballots, float and integer atomics, half-precision arithmetic, halves widened
// into float multiply-adds (gfx942: v_fma_mix_f32), `__threadfence()` (gfx942:
// buffer_wbl2 and buffer_inv), and dynamic shared memory; checked against the CPU.
// Prints "ok" when every result is right.
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#include <cmath>
#include <cstdio>

#define CHECK(x)                                                              \
  do {                                                                        \
    hipError_t e = (x);                                                       \
    if (e != hipSuccess) {                                                    \
      printf("FAILED: %s: %s\n", #x, hipGetErrorString(e));                   \
      return 1;                                                               \
    }                                                                         \
  } while (0)

__global__ void math(const float* x, float* out, double* dout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[8 * i + 0] = sinf(v);
  out[8 * i + 1] = cosf(v);
  out[8 * i + 2] = expf(v);
  out[8 * i + 3] = logf(fabsf(v) + 1.0f);
  out[8 * i + 4] = powf(fabsf(v), 1.5f);
  out[8 * i + 5] = tanhf(v);
  out[8 * i + 6] = sqrtf(fabsf(v));
  out[8 * i + 7] = erff(v);
  double d = v;
  dout[2 * i] = sin(d) * exp(d);
  dout[2 * i + 1] = log1p(fabs(d)) + cbrt(d);
}

// Per lane: its warp's sum (by shuffles down, in lane 0), its neighbour's value (by
// shuffle xor), how many of its warp's values are odd (by ballot); into two atomics,
// a float sum and an integer maximum.
__global__ void warp(const int* x, int* out, float* fsum, int* imax, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? x[i] : 0;
  int s = v;
  for (int o = warpSize / 2; o > 0; o /= 2) s += __shfl_down(s, o);
  int neighbour = __shfl_xor(v, 1);
  unsigned long long odd = __ballot(v & 1);
  if (i < n) {
    out[3 * i] = s;
    out[3 * i + 1] = neighbour;
    out[3 * i + 2] = __popcll(odd);
    atomicAdd(fsum, (float)(v & 15));
    atomicMax(imax, v);
  }
}

__global__ void halves(const __half* a, __half* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __hadd(__hmul(a[i], a[i]), hsqrt(a[i]));
}

// Each thread publishes a value, fences, and its block's first thread counts the
// block in; the halves' products widen into floats.
__global__ void fenced(int* published, int* blocks, float* out, const __half* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) published[i] = 3 * i;
  __threadfence();
  if (threadIdx.x == 0) atomicAdd(blocks, 1);
  if (i < n) out[i] = (float)a[i] * (float)a[(i + 1) % n] + 0.5f;
}

// Each block reverses its part of x through shared memory sized at launch.
extern __shared__ float reversed[];
__global__ void reverse(const float* x, float* out, int n) {
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  reversed[t] = i < n ? x[i] : 0;
  __syncthreads();
  if (i < n) out[i] = reversed[blockDim.x - 1 - t];
}

int main() {
  const int n = 4096, block = 256;
  float* hx = new float[n];
  int* hi = new int[n];
  __half* ha = new __half[n];
  for (int i = 0; i < n; i++) {
    hx[i] = (i % 200) * 0.05f - 5.0f;
    hi[i] = (i * 2654435761u) >> 22;
    ha[i] = __float2half((i % 64) * 0.25f);
  }
  float *x, *out, *rev, *fsum, *mix;
  double* dout;
  int *ix, *iout, *imax, *published, *blocks;
  __half *a, *c;
  CHECK(hipMalloc(&x, n * 4));
  CHECK(hipMalloc(&out, n * 32));
  CHECK(hipMalloc(&rev, n * 4));
  CHECK(hipMalloc(&dout, n * 16));
  CHECK(hipMalloc(&ix, n * 4));
  CHECK(hipMalloc(&iout, n * 12));
  CHECK(hipMalloc(&fsum, 4));
  CHECK(hipMalloc(&imax, 4));
  CHECK(hipMalloc(&a, n * 2));
  CHECK(hipMalloc(&c, n * 2));
  CHECK(hipMalloc(&mix, n * 4));
  CHECK(hipMalloc(&published, n * 4));
  CHECK(hipMalloc(&blocks, 4));
  CHECK(hipMemset(blocks, 0, 4));
  CHECK(hipMemcpy(x, hx, n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(ix, hi, n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(a, ha, n * 2, hipMemcpyHostToDevice));
  CHECK(hipMemset(fsum, 0, 4));
  CHECK(hipMemset(imax, 0, 4));
  math<<<n / block, block>>>(x, out, dout, n);
  CHECK(hipGetLastError());
  warp<<<n / block, block>>>(ix, iout, fsum, imax, n);
  CHECK(hipGetLastError());
  halves<<<n / block, block>>>(a, c, n);
  CHECK(hipGetLastError());
  reverse<<<n / block, block, block * 4>>>(x, rev, n);
  CHECK(hipGetLastError());
  fenced<<<n / block, block>>>(published, blocks, mix, a, n);
  CHECK(hipGetLastError());
  CHECK(hipDeviceSynchronize());
  float* ho = new float[n * 8];
  float* hr = new float[n];
  double* hd = new double[n * 2];
  int* hio = new int[n * 3];
  __half* hc = new __half[n];
  float hf;
  int hm;
  CHECK(hipMemcpy(ho, out, n * 32, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hr, rev, n * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hd, dout, n * 16, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hio, iout, n * 12, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hc, c, n * 2, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hf, fsum, 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hm, imax, 4, hipMemcpyDeviceToHost));
  float* hmix = new float[n];
  int* hpub = new int[n];
  int hblocks = 0;
  CHECK(hipMemcpy(hmix, mix, n * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(hpub, published, n * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(&hblocks, blocks, 4, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; i++) {
    float v = hx[i];
    float want[8] = {sinf(v), cosf(v), expf(v), logf(fabsf(v) + 1), powf(fabsf(v), 1.5f),
                     tanhf(v), sqrtf(fabsf(v)), erff(v)};
    for (int k = 0; k < 8; k++)
      if (fabsf(ho[8 * i + k] - want[k]) > 1e-5f * fmaxf(1.0f, fabsf(want[k])) && bad++ < 5)
        printf("math %d, function %d: %g, expected %g\n", i, k, ho[8 * i + k], want[k]);
    double d = v, d0 = sin(d) * exp(d), d1 = log1p(fabs(d)) + cbrt(d);
    if (fabs(hd[2 * i] - d0) > 1e-12 * fmax(1, fabs(d0)) && bad++ < 5) printf("sin*exp %d\n", i);
    if (fabs(hd[2 * i + 1] - d1) > 1e-12 * fmax(1, fabs(d1)) && bad++ < 5) printf("log1p+cbrt %d\n", i);
    float h = __half2float(ha[i]), hwant = h * h + sqrtf(h);
    if (fabsf(__half2float(hc[i]) - hwant) > 0.01f * fmaxf(1, hwant) && bad++ < 5)
      printf("half %d: %g, expected %g\n", i, __half2float(hc[i]), hwant);
    int t = i % block, first = i - t;
    if (hr[i] != hx[first + block - 1 - t] && bad++ < 5) printf("reverse %d\n", i);
    float mwant = __half2float(ha[i]) * __half2float(ha[(i + 1) % n]) + 0.5f;
    if ((hmix[i] != mwant || hpub[i] != 3 * i) && bad++ < 5) printf("fenced %d: %g, expected %g\n", i, hmix[i], mwant);
  }
  hipDeviceProp_t p;
  CHECK(hipGetDeviceProperties(&p, 0));
  int ws = p.warpSize;
  for (int i = 0; i < n; i++) {
    int lane = i % ws, first = i - lane, sum = 0, odd = 0;
    for (int k = 0; k < ws; k++) {
      sum += hi[first + k];
      odd += hi[first + k] & 1;
    }
    if (lane == 0 && hio[3 * i] != sum && bad++ < 5) printf("shuffle sum %d: %d, expected %d\n", i, hio[3 * i], sum);
    if (hio[3 * i + 1] != hi[i ^ 1] && bad++ < 5) printf("shuffle xor %d\n", i);
    if (hio[3 * i + 2] != odd && bad++ < 5) printf("ballot %d: %d, expected %d\n", i, hio[3 * i + 2], odd);
  }
  float fwant = 0;
  int mwant = 0;
  for (int i = 0; i < n; i++) {
    fwant += hi[i] & 15;
    mwant = hi[i] > mwant ? hi[i] : mwant;
  }
  if (hblocks != n / block && bad++ < 5) printf("fenced blocks: %d, expected %d\n", hblocks, n / block);
  if (hf != fwant || hm != mwant) {
    bad++;
    printf("atomics: sum %g, expected %g; max %d, expected %d\n", hf, fwant, hm, mwant);
  }
  printf("%s (%d wrong, warps of %d)\n", bad ? "FAILED" : "ok", bad, ws);
  return bad != 0;
}
