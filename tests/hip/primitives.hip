// ROCm's parallel primitives, header-only libraries compiled into the program:
// rocThrust (transform, reduce, inclusive scan, sort) and hipCUB over rocPRIM (radix
// sort of key-value pairs, exclusive sum), whose gfx9 warp scans use DPP row
// broadcasts; checked against the CPU. Prints "ok" when every result is right. Needs
// librocprim-dev, libhipcub-dev and librocthrust-dev (`cargo xtask rocm-env`).
#include <hip/hip_runtime.h>
#include <hipcub/hipcub.hpp>
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <vector>

#define CHECK(x)                                                              \
  do {                                                                        \
    hipError_t e = (x);                                                       \
    if (e != hipSuccess) {                                                    \
      printf("FAILED: %s: %s\n", #x, hipGetErrorString(e));                   \
      return 1;                                                               \
    }                                                                         \
  } while (0)

struct mix {
  __host__ __device__ int operator()(int x) const { return (x % 1000) * (x % 7); }
};

int main() {
  const int n = 100000;
  std::vector<int> h(n);
  for (int i = 0; i < n; i++) h[i] = (int)((i * 2654435761u) >> 8);
  std::vector<int> sorted = h;
  std::sort(sorted.begin(), sorted.end());
  int bad = 0;

  thrust::device_vector<int> d(h.begin(), h.end());
  thrust::device_vector<int> t(n);
  thrust::transform(d.begin(), d.end(), t.begin(), mix());
  long long sum = thrust::reduce(t.begin(), t.end(), 0LL, thrust::plus<long long>());
  long long sum_want = 0;
  for (int v : h) sum_want += mix()(v);
  if (sum != sum_want && bad++ < 5) printf("thrust::reduce: %lld, expected %lld\n", sum, sum_want);
  thrust::inclusive_scan(t.begin(), t.end(), t.begin());
  std::vector<int> scan_want(n);
  std::transform(h.begin(), h.end(), scan_want.begin(), mix());
  std::partial_sum(scan_want.begin(), scan_want.end(), scan_want.begin());
  thrust::host_vector<int> scanned = t;
  for (int i = 0; i < n; i++)
    if (scanned[i] != scan_want[i] && bad++ < 5) printf("thrust::inclusive_scan %d\n", i);
  thrust::sort(d.begin(), d.end());
  thrust::host_vector<int> thrust_sorted = d;
  for (int i = 0; i < n; i++)
    if (thrust_sorted[i] != sorted[i] && bad++ < 5) printf("thrust::sort %d\n", i);

  int *keys, *keys_out, *values, *values_out;
  CHECK(hipMalloc(&keys, n * 4));
  CHECK(hipMalloc(&keys_out, n * 4));
  CHECK(hipMalloc(&values, n * 4));
  CHECK(hipMalloc(&values_out, n * 4));
  std::vector<int> index(n);
  std::iota(index.begin(), index.end(), 0);
  CHECK(hipMemcpy(keys, h.data(), n * 4, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(values, index.data(), n * 4, hipMemcpyHostToDevice));
  void* temp = nullptr;
  size_t bytes = 0;
  CHECK(hipcub::DeviceRadixSort::SortPairs(temp, bytes, keys, keys_out, values, values_out, n));
  CHECK(hipMalloc(&temp, bytes));
  CHECK(hipcub::DeviceRadixSort::SortPairs(temp, bytes, keys, keys_out, values, values_out, n));
  std::vector<int> ko(n), vo(n);
  CHECK(hipMemcpy(ko.data(), keys_out, n * 4, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(vo.data(), values_out, n * 4, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; i++)
    if ((ko[i] != sorted[i] || h[vo[i]] != ko[i]) && bad++ < 5) printf("hipcub::DeviceRadixSort %d\n", i);

  void* temp2 = nullptr;
  size_t bytes2 = 0;
  CHECK(hipcub::DeviceScan::ExclusiveSum(temp2, bytes2, values, values_out, n));
  CHECK(hipMalloc(&temp2, bytes2));
  CHECK(hipcub::DeviceScan::ExclusiveSum(temp2, bytes2, values, values_out, n));
  CHECK(hipMemcpy(vo.data(), values_out, n * 4, hipMemcpyDeviceToHost));
  long long prefix = 0;
  for (int i = 0; i < n; i++) {
    if (vo[i] != (int)prefix && bad++ < 5) printf("hipcub::DeviceScan %d: %d, expected %lld\n", i, vo[i], prefix);
    prefix += i;
  }
  CHECK(hipDeviceSynchronize());
  printf("%s (%d wrong)\n", bad ? "FAILED" : "ok", bad);
  return bad != 0;
}
