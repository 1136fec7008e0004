// numpy's pairwise summation of floats (the float accumulator of its float16
// add.reduce along a contiguous axis): 8 partial sums per block of up to 128
// elements, halves above. The reference Softmax of half tensors sums this way
// (ops/nn/softmax.cc), and so does the CPU backend's (exec/cpu/kernels/softmax.cc),
// so both round the same float sum to half.
#pragma once

#include <cstdint>

namespace aic {

inline float PairwiseSum(const float* a, int64_t n) {
  if (n < 8) {
    float res = 0;
    for (int64_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= 128) {
    float r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  int64_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(a, n2) + PairwiseSum(a + n2, n - n2);
}

}  // namespace aic
