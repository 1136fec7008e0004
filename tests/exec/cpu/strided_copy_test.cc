// The strided copy kernel (Slice with steps, Transpose, Tile) against a
// plain element-by-element copy, bit for bit: every permutation of 2-, 3-
// and 4-D shapes whose tile dims leave ragged edges (and span several column
// chunks), at every element size; rows in source order and in output order.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exec/cpu/kernels/strided_copy.h"
#include "exec/cpu/kernels/transpose_blocks.h"
#include "gtest/gtest.h"

namespace aic::cpu::kernels {
namespace {

// Bytes of in_dims' dense tensor permuted by perm, one element at a time.
std::vector<uint8_t> NaiveTranspose(const std::vector<uint8_t>& in, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& perm, int64_t size) {
  const auto rank = static_cast<int64_t>(dims.size());
  std::vector<int64_t> stride(rank, 1);
  for (int64_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * dims[d + 1];
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<uint8_t> out(in.size());
  std::vector<int64_t> idx(rank, 0);  // output index
  for (int64_t o = 0; o < n; ++o) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d) src += idx[d] * stride[perm[d]];
    std::memcpy(&out[o * size], &in[src * size], size);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++idx[d] < dims[perm[d]]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<uint8_t> Pattern(size_t bytes) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<uint8_t>((i * 131 + i / 251) & 0xff);
  return v;
}

TEST(StridedCopyTest, EveryPermutationIsExactAtEveryElementSize) {
  const std::vector<std::vector<int64_t>> shapes = {{19, 300},        {3, 10, 17},     {2, 9, 11, 13},
                                                    {1, 12, 130, 9},  {2, 16, 8, 24},  {1, 5, 3, 200},
                                                    {4, 1, 33, 17}};
  for (const auto& dims : shapes) {
    std::vector<int64_t> perm(dims.size());
    std::iota(perm.begin(), perm.end(), 0);
    do {
      for (int64_t size : {1, 2, 4, 8}) {
        SCOPED_TRACE(absl::StrCat("[", absl::StrJoin(dims, ","), "] perm ", absl::StrJoin(perm, ""), " size ", size));
        int64_t n = 1;
        for (int64_t d : dims) n *= d;
        std::vector<uint8_t> in = Pattern(static_cast<size_t>(n * size));
        std::vector<uint8_t> out(in.size(), 0xAB);
        RunStridedCopy(MakeTransposeCopy(dims, perm, size), in.data(), out.data());
        ASSERT_EQ(out, NaiveTranspose(in, dims, perm, size));
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(StridedCopyTest, TilesAndSteppedSlicesStayExact) {
  // Tile [3,1,5] by [2,4,3] and a slice with steps 2 and -1: stride-0 and
  // negative source strides through the same paths.
  std::vector<int64_t> dims = {3, 1, 5};
  std::vector<uint8_t> in = Pattern(15 * 4);
  std::vector<uint8_t> out(6 * 4 * 15 * 4);
  RunStridedCopy(MakeTileCopy(dims, {2, 4, 3}, 4), in.data(), out.data());
  for (int64_t a = 0; a < 6; ++a) {
    for (int64_t b = 0; b < 4; ++b) {
      for (int64_t c = 0; c < 15; ++c) {
        ASSERT_EQ(0, std::memcmp(&out[((a * 4 + b) * 15 + c) * 4], &in[((a % 3) * 5 + c % 5) * 4], 4));
      }
    }
  }
  std::vector<int64_t> big = {6, 40, 70};
  std::vector<uint8_t> src = Pattern(6 * 40 * 70 * 2);
  // rows 1, 3, 5; columns 39 down to 0; every second of 70 from 2.
  std::vector<int64_t> sub = {3, 40, 34};
  std::vector<uint8_t> got(3 * 40 * 34 * 2);
  RunStridedCopy(MakeStridedCopy(big, {1, 39, 2}, {2, -1, 2}, sub, 2), src.data(), got.data());
  for (int64_t a = 0; a < 3; ++a) {
    for (int64_t b = 0; b < 40; ++b) {
      for (int64_t c = 0; c < 34; ++c) {
        int64_t s = ((1 + 2 * a) * 40 + (39 - b)) * 70 + (2 + 2 * c);
        ASSERT_EQ(0, std::memcmp(&got[((a * 40 + b) * 34 + c) * 2], &src[s * 2], 2));
      }
    }
  }
}

TEST(StridedCopyTest, RegisterTilesTakeTransposesThatMoveTheLastAxis) {
  // NCHW -> NHWC and a swap of the last two axes are tiled; a copy whose
  // last axis stays contiguous (attention's head split) is left to rows.
  std::vector<uint8_t> in = Pattern(2 * 16 * 9 * 24 * 4), out(in.size());
  EXPECT_TRUE(TransposeInBlocks(MakeTransposeCopy({2, 16, 9, 24}, {0, 2, 3, 1}, 4), in.data(), out.data()));
  EXPECT_TRUE(TransposeInBlocks(MakeTransposeCopy({2, 16, 9, 24}, {0, 1, 3, 2}, 4), in.data(), out.data()));
  EXPECT_FALSE(TransposeInBlocks(MakeTransposeCopy({2, 16, 9, 24}, {0, 2, 1, 3}, 4), in.data(), out.data()));
}

}  // namespace
}  // namespace aic::cpu::kernels
