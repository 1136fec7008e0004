// Tests of the indexing family: Slice, Gather*, Compress, the scatters and
// the search ops (TopK, ArgMax/ArgMin, NonZero, Unique).
#include <gtest/gtest.h>

#include "ops/registry.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::Op;
using testing::SingleNode;

Tensor F(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, dims); }
Tensor I(std::vector<int64_t> v, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(v.size())};
  return Tensor::FromVector<int64_t>(v, dims);
}
TypeInfo FT(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(dims)); }
TypeInfo I64T(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kInt64, Shape(dims)); }
Dim S(const char* name) { return Dim::Symbol(name); }
std::vector<float> Vals(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements()); }
std::vector<int64_t> Ints(const Tensor& t) {
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.num_elements());
}

std::vector<Tensor> RunAll(const SingleNode& spec, const std::vector<Tensor>& in) {
  auto out = RunNode(spec, in);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<Tensor>(spec.num_outputs);
}

TEST(IndexingTest, SliceStepsAndClamping) {
  Tensor x = F({0, 1, 2, 3, 4, 5}, {6});
  EXPECT_EQ(Vals(RunAll(Op("Slice"), {x, I({1}), I({100})})[0]), (std::vector<float>{1, 2, 3, 4, 5}));
  EXPECT_EQ(Vals(RunAll(Op("Slice"), {x, I({-1}), I({-100}), I({0}), I({-2})})[0]),
            (std::vector<float>{5, 3, 1}));
  EXPECT_EQ(Vals(RunAll(Op("Slice", {Attribute::Ints("starts", {2}), Attribute::Ints("ends", {4})}, 9),
                     {x})[0]),
            (std::vector<float>{2, 3}));
  Tensor starts = I({0}), ends = I({2}), axes = I({1});
  auto t = InferNode(Op("Slice"), {FT({S("b"), 5}), I64T({1}), I64T({1}), I64T({1})},
                     {nullptr, &starts, &ends, &axes});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 2}));
  Tensor zero_step = I({0});
  EXPECT_FALSE(InferNode(Op("Slice"), {FT({5}), I64T({1}), I64T({1}), I64T({1}), I64T({1})},
                         {nullptr, &starts, &ends, &zero_step, &zero_step})
                   .ok());
}

TEST(IndexingTest, Gather) {
  Tensor x = F({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor y = RunAll(Op("Gather"), {x, I({2, -3})})[0];
  EXPECT_EQ(y.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Vals(y), (std::vector<float>{5, 6, 1, 2}));
  Tensor y1 = RunAll(Op("Gather", {Attribute::Int("axis", 1)}), {x, I({1}, {1, 1})})[0];
  EXPECT_EQ(y1.dims(), (std::vector<int64_t>{3, 1, 1}));
  EXPECT_EQ(Vals(y1), (std::vector<float>{2, 4, 6}));
  auto t = InferNode(Op("Gather", {Attribute::Int("axis", 1)}), {FT({S("b"), 7, 3}), I64T({S("k")})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), S("k"), 3}));
  EXPECT_FALSE(RunNode(Op("Gather"), {x, I({3})}).ok());
}

TEST(IndexingTest, GatherElementsAndND) {
  Tensor x = F({1, 2, 3, 4}, {2, 2});
  Tensor ge = RunAll(Op("GatherElements", {Attribute::Int("axis", 1)}), {x, I({0, 0, 1, 0}, {2, 2})})[0];
  EXPECT_EQ(Vals(ge), (std::vector<float>{1, 1, 4, 3}));
  Tensor nd = RunAll(Op("GatherND"), {x, I({1, 0, 0, 1}, {2, 2})})[0];
  EXPECT_EQ(Vals(nd), (std::vector<float>{3, 2}));
  Tensor batched = RunAll(Op("GatherND", {Attribute::Int("batch_dims", 1)}), {x, I({1, 0}, {2, 1})})[0];
  EXPECT_EQ(Vals(batched), (std::vector<float>{2, 3}));
  auto t = InferNode(Op("GatherND"), {FT({S("b"), 4, 5}), I64T({S("n"), 2})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("n"), 5}));
  EXPECT_FALSE(InferNode(Op("GatherND"), {FT({4}), I64T({1, 2})}).ok());
  EXPECT_FALSE(RunNode(Op("GatherElements"), {x, I({2}, {1, 1})}).ok());
}

TEST(IndexingTest, Compress) {
  Tensor x = F({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor cond = Tensor::FromVector<bool>({false, true, true}, {3});
  Tensor y = RunAll(Op("Compress", {Attribute::Int("axis", 0)}), {x, cond})[0];
  EXPECT_EQ(Vals(y), (std::vector<float>{3, 4, 5, 6}));
  Tensor flat = RunAll(Op("Compress"), {x, cond})[0];
  EXPECT_EQ(Vals(flat), (std::vector<float>{2, 3}));
  auto t = InferNode(Op("Compress", {Attribute::Int("axis", 1)}),
                     {FT({S("b"), 4}), TypeInfo::Tensor(DType::kBool, Shape({4}))});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape.rank(), 2);
  EXPECT_EQ((*t)[0].shape[0], S("b"));
  EXPECT_FALSE(RunNode(Op("Compress", {Attribute::Int("axis", 0)}),
                       {x, Tensor::FromVector<bool>({true, true, true, true}, {4})})
                   .ok());
}

TEST(IndexingTest, ScatterElementsAndND) {
  Tensor x = F({0, 0, 0, 0}, {2, 2});
  Tensor y = RunAll(Op("ScatterElements", {Attribute::Int("axis", 1)}),
                 {x, I({1, 0}, {2, 1}), F({5, 6}, {2, 1})})[0];
  EXPECT_EQ(Vals(y), (std::vector<float>{0, 5, 6, 0}));
  Tensor add = RunAll(Op("ScatterElements", {Attribute::String("reduction", "add")}, 16),
                   {F({1, 1}, {2}), I({0, 0}), F({2, 3}, {2})})[0];
  EXPECT_EQ(Vals(add), (std::vector<float>{6, 1}));
  Tensor nd = RunAll(Op("ScatterND"), {x, I({1}, {1, 1}), F({7, 8}, {1, 2})})[0];
  EXPECT_EQ(Vals(nd), (std::vector<float>{0, 0, 7, 8}));
  Tensor mul = RunAll(Op("ScatterND", {Attribute::String("reduction", "mul")}, 16),
                   {F({2, 3}, {2}), I({1, 1}, {2, 1}), F({2, 5}, {2})})[0];
  EXPECT_EQ(Vals(mul), (std::vector<float>{2, 30}));
  auto t = InferNode(Op("ScatterND"), {FT({S("b"), 2}), I64T({1, 1}), FT({1, 2})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 2}));
  EXPECT_FALSE(RunNode(Op("ScatterND"), {x, I({2}, {1, 1}), F({7, 8}, {1, 2})}).ok());
}

TEST(IndexingTest, TopK) {
  Tensor x = F({3, 1, 4, 1, 5, 9}, {2, 3});
  auto out = RunAll(Op("TopK", {}, 11, 2), {x, I({2})});
  EXPECT_EQ(Vals(out[0]), (std::vector<float>{4, 3, 9, 5}));
  EXPECT_EQ(Ints(out[1]), (std::vector<int64_t>{2, 0, 2, 1}));
  auto small = RunAll(Op("TopK", {Attribute::Int("largest", 0)}, 11, 2), {x, I({1})});
  EXPECT_EQ(Vals(small[0]), (std::vector<float>{1, 1}));
  Tensor k = I({2});
  auto t = InferNode(Op("TopK", {}, 11, 2), {FT({S("b"), 10}), I64T({1})}, {nullptr, &k});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 2}));
  EXPECT_EQ((*t)[1].dtype, DType::kInt64);
  EXPECT_FALSE(RunNode(Op("TopK", {}, 11, 2), {x, I({4})}).ok());
}

TEST(IndexingTest, ArgMaxArgMin) {
  Tensor x = F({1, 3, 3, 2, 0, 2}, {2, 3});
  EXPECT_EQ(Ints(RunAll(Op("ArgMax", {Attribute::Int("axis", 1)}), {x})[0]), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Ints(RunAll(Op("ArgMax", {Attribute::Int("axis", 1), Attribute::Int("select_last_index", 1)}), {x})[0]),
            (std::vector<int64_t>{2, 2}));
  Tensor mn = RunAll(Op("ArgMin", {Attribute::Int("keepdims", 0)}), {x})[0];
  EXPECT_EQ(mn.dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(Ints(mn), (std::vector<int64_t>{0, 1, 1}));
  auto t = InferNode(Op("ArgMax", {Attribute::Int("axis", -1)}), {FT({S("b"), 4})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 1}));
  EXPECT_FALSE(InferNode(Op("ArgMax", {Attribute::Int("axis", 2)}), {FT({2, 2})}).ok());
}

TEST(IndexingTest, NonZeroAndUnique) {
  Tensor nz = RunAll(Op("NonZero"), {F({0, 1, 2, 0}, {2, 2})})[0];
  EXPECT_EQ(nz.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Ints(nz), (std::vector<int64_t>{0, 1, 1, 0}));
  // Rank 3: coordinates carried across every dim; a trailing run of zeros; all zeros.
  Tensor nz3 = RunAll(Op("NonZero"), {F({0, 1, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0}, {2, 2, 3})})[0];
  EXPECT_EQ(nz3.dims(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(Ints(nz3), (std::vector<int64_t>{0, 0, 1, 0, 1, 0, 1, 2, 0}));
  EXPECT_EQ(RunAll(Op("NonZero"), {F({0, 0, 0}, {1, 3})})[0].dims(), (std::vector<int64_t>{2, 0}));
  auto t = InferNode(Op("NonZero"), {FT({S("b"), 3})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape[0], Dim(2));

  auto u = RunAll(Op("Unique", {Attribute::Int("sorted", 0)}, 11, 4), {F({2, 1, 1, 3, 2}, {5})});
  EXPECT_EQ(Vals(u[0]), (std::vector<float>{2, 1, 3}));
  EXPECT_EQ(Ints(u[1]), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(Ints(u[2]), (std::vector<int64_t>{0, 1, 1, 2, 0}));
  EXPECT_EQ(Ints(u[3]), (std::vector<int64_t>{2, 2, 1}));
  auto s = RunAll(Op("Unique", {}, 11, 4), {F({2, 1, 1, 3, 2}, {5})});
  EXPECT_EQ(Vals(s[0]), (std::vector<float>{1, 2, 3}));
  auto ax = RunAll(Op("Unique", {Attribute::Int("axis", 0)}, 11, 4), {F({1, 2, 0, 0, 1, 2}, {3, 2})});
  EXPECT_EQ(Vals(ax[0]), (std::vector<float>{0, 0, 1, 2}));
  EXPECT_FALSE(InferNode(Op("Unique", {Attribute::Int("axis", 3)}, 11, 4), {FT({2})}).ok());
}

}  // namespace
}  // namespace aic
