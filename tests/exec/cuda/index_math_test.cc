// The host index math behind the CUDA kernels: broadcast strides against a
// brute-force numpy index mapping, coalescing that keeps every address, and
// the strided copies of Transpose/Slice/Concat/Expand against the reference
// kernels (run through the host version of the copy kernel).
#include "exec/cuda/index_math.h"

#include <random>

#include "exec/cuda/kernels_host.h"
#include "gtest/gtest.h"
#include "tests/testing/op_test_util.h"

namespace aic::cuda {
namespace {

// Brute force: the flat offset numpy broadcasting reads `in` at for output index `idx`.
int64_t BroadcastOffset(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                        const std::vector<int64_t>& idx) {
  size_t pad = out.size() - in.size();
  int64_t off = 0;
  for (size_t d = 0; d < in.size(); ++d) off = off * in[d] + (in[d] == 1 ? 0 : idx[pad + d]);
  return off;
}

std::vector<int64_t> Unflatten(int64_t i, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = i % dims[d];
    i /= dims[d];
  }
  return idx;
}

TEST(BroadcastStridesTest, MatchesBruteForceMapping) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{3, 1, 5}, {2, 3, 4, 5}},    {{5}, {2, 3, 4, 5}},         {{1}, {7, 2}}, {{}, {3, 2}}, {{4, 1}, {4, 6}},
      {{2, 3, 4, 5}, {2, 3, 4, 5}}, {{1, 3, 1, 1}, {2, 3, 4, 4}}};
  for (const auto& [in, out] : cases) {
    auto s = BroadcastStrides(in, out);
    ASSERT_TRUE(s.has_value()) << DimsToString(in) << " -> " << DimsToString(out);
    for (int64_t i = 0; i < NumElements(out); ++i) {
      std::vector<int64_t> idx = Unflatten(i, out);
      int64_t off = 0;
      for (size_t d = 0; d < out.size(); ++d) off += idx[d] * (*s)[d];
      ASSERT_EQ(off, BroadcastOffset(in, out, idx)) << DimsToString(in) << " at " << i;
    }
  }
  EXPECT_FALSE(BroadcastStrides({3}, {4}).has_value());
  EXPECT_FALSE(BroadcastStrides({2, 3}, {3}).has_value());
}

TEST(BroadcastStridesTest, EltShapeCoalescesWithoutMovingAnyRead) {
  std::vector<int64_t> out = {2, 3, 4, 5};
  for (const auto& ins : std::vector<std::vector<std::vector<int64_t>>>{{{2, 3, 4, 5}, {1, 3, 1, 1}, {3, 1, 1}},
                                                                        {{2, 3, 4, 5}, {1, 3, 1, 1}, {5}}}) {
    EltProgram p;
    ASSERT_TRUE(SetEltShape(p, out, ins));
    // The trailing 4x5 block merges unless an input walks it differently ([5] repeats every 5).
    EXPECT_EQ(p.rank, ins[2].size() == 1 ? 4 : 3);
    EXPECT_EQ(p.count, 120);
    for (int64_t i = 0; i < p.count; ++i) {
      std::vector<int64_t> idx = Unflatten(i, out);
      int64_t rem = i;
      for (int j = 0; j < p.n_inputs; ++j) {
        int64_t off = 0;
        rem = i;
        for (int d = p.rank - 1; d >= 0; --d) {
          off += (rem % p.dims[d]) * p.strides[j][d];
          rem /= p.dims[d];
        }
        ASSERT_EQ(off, BroadcastOffset(ins[static_cast<size_t>(j)], out, idx)) << "input " << j << " at " << i;
      }
    }
  }
}

Tensor Iota(const std::vector<int64_t>& dims) {
  Tensor t(DType::kFloat, dims);
  float v = 0;
  for (float& x : t.mutable_span<float>()) x = v++;
  return t;
}

Tensor RunCopy(const StridedCopy& c, const Tensor& in, const std::vector<int64_t>& out_dims) {
  Tensor out(DType::kFloat, out_dims);
  host::StridedCopyRun(c, in.raw_data(), out.mutable_raw_data());
  return out;
}

TEST(StridedCopyTest, TransposeMatchesReference) {
  Tensor x = Iota({2, 3, 4, 5});
  for (std::vector<int64_t> perm : {std::vector<int64_t>{0, 2, 1, 3}, {3, 2, 1, 0}, {0, 2, 3, 1}, {1, 0, 2, 3}}) {
    auto want = testing::RunNode(testing::Op("Transpose", {Attribute::Ints("perm", perm)}), {x});
    ASSERT_TRUE(want.ok()) << want.status();
    auto c = TransposeCopy(x.dims(), perm, 4);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(testing::MaxAbsDiff(RunCopy(*c, x, (*want)[0].dims()), (*want)[0]), 0.0) << DimsToString(perm);
  }
}

TEST(StridedCopyTest, SliceAndConcatAndExpandMatchReference) {
  Tensor x = Iota({4, 6, 5});
  // x[1:4, 5:0:-2, ::2]
  auto want =
      testing::RunNode(testing::Op("Slice"),
                       {x, Tensor::FromVector<int64_t>({1, 5, 0}, {3}), Tensor::FromVector<int64_t>({4, 0, 5}, {3}),
                        Tensor::FromVector<int64_t>({0, 1, 2}, {3}), Tensor::FromVector<int64_t>({1, -2, 2}, {3})});
  ASSERT_TRUE(want.ok()) << want.status();
  auto c = SliceCopy(x.dims(), {1, 5, 0}, {1, -2, 2}, (*want)[0].dims(), 4);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(testing::MaxAbsDiff(RunCopy(*c, x, (*want)[0].dims()), (*want)[0]), 0.0);

  Tensor a = Iota({2, 3, 4}), b = Iota({2, 5, 4});
  auto cat = testing::RunNode(testing::Op("Concat", {Attribute::Int("axis", 1)}), {a, b});
  ASSERT_TRUE(cat.ok()) << cat.status();
  Tensor got(DType::kFloat, {2, 8, 4});
  auto pa = ConcatPartCopy(a.dims(), got.dims(), 1, 0, 4);
  auto pb = ConcatPartCopy(b.dims(), got.dims(), 1, 3, 4);
  ASSERT_TRUE(pa && pb);
  host::StridedCopyRun(*pa, a.raw_data(), got.mutable_raw_data());
  host::StridedCopyRun(*pb, b.raw_data(), got.mutable_raw_data());
  EXPECT_EQ(testing::MaxAbsDiff(got, (*cat)[0]), 0.0);

  Tensor e = Iota({3, 1});
  auto ex = testing::RunNode(testing::Op("Expand"), {e, Tensor::FromVector<int64_t>({2, 3, 4}, {3})});
  ASSERT_TRUE(ex.ok()) << ex.status();
  auto ce = ExpandCopy(e.dims(), {2, 3, 4}, 4);
  ASSERT_TRUE(ce.has_value());
  EXPECT_EQ(testing::MaxAbsDiff(RunCopy(*ce, e, {2, 3, 4}), (*ex)[0]), 0.0);
}

TEST(ReduceDescTest, MatchesReferenceReduceMean) {
  Tensor x = Iota({3, 4, 5, 2});
  auto want = testing::RunNode(
      testing::Op("ReduceMean", {Attribute::Ints("axes", {1, 3}), Attribute::Int("keepdims", 0)}), {x});
  ASSERT_TRUE(want.ok()) << want.status();
  auto r = MakeReduce(x.dims(), {1, 3}, ReduceOp::kMean);
  ASSERT_TRUE(r.has_value());
  Tensor got(DType::kFloat, {3, 5});
  host::Reduce(*r, x.data<float>(), got.mutable_data<float>());
  EXPECT_LT(testing::MaxAbsDiff(got, (*want)[0]), 1e-5);
}

TEST(ConvIndexTest, ImplicitGemmFormulationMatchesDirectConvolution) {
  // The implicit GEMM's (r, col) decomposition, as the kernel computes it, against the plain loops.
  for (int variant = 0; variant < 4; ++variant) {
    ConvDesc d;
    d.n = 2;
    d.c = 6;
    d.h = 9;
    d.w = 7;
    d.k = 4;
    d.kh = 3;
    d.kw = variant == 3 ? 1 : 3;
    d.groups = variant == 1 ? 2 : 1;
    d.sh = variant == 2 ? 2 : 1;
    d.sw = 1;
    d.dh = variant == 3 ? 2 : 1;
    d.ph = 1;
    d.pw = variant == 3 ? 0 : 1;
    d.oh = (d.h + 2 * d.ph - d.dh * (d.kh - 1) - 1) / d.sh + 1;
    d.ow = (d.w + 2 * d.pw - d.dw * (d.kw - 1) - 1) / d.sw + 1;
    Tensor x = Iota({d.n, d.c, d.h, d.w}), w = Iota({d.k, d.c / d.groups, d.kh, d.kw});
    Tensor a(DType::kFloat, {d.n, d.k, d.oh, d.ow}), b(DType::kFloat, {d.n, d.k, d.oh, d.ow});
    host::ConvDirect(d, x.data<float>(), w.data<float>(), a.mutable_data<float>());
    host::ConvImplicitGemm(d, x.data<float>(), w.data<float>(), b.mutable_data<float>());
    EXPECT_EQ(testing::MaxAbsDiff(a, b), 0.0) << "variant " << variant;
  }
}

}  // namespace
}  // namespace aic::cuda
