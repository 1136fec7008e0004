// Shared by the CUDA executor's tests: random inputs, tolerant comparison,
// the arena invariant, and small graphs that cover every step kind (each run
// through the host emulation in plan_test.cc and on the device in gpu_test.cc).
#pragma once

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "exec/cuda/internal.h"
#include "graph/builder.h"
#include "gtest/gtest.h"

namespace aic::cuda::testing {

inline Tensor RandomTensor(const std::vector<int64_t>& dims, uint32_t seed, float scale = 1.0f) {
  Tensor t(DType::kFloat, dims);
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  for (float& v : t.mutable_span<float>()) v = dist(rng);
  return t;
}

inline ::testing::AssertionResult Close(const Tensor& got, const Tensor& want, double rtol, double atol) {
  if (got.dims() != want.dims() || got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure() << "got " << DTypeName(got.dtype()) << DimsToString(got.dims()) << ", want "
                                         << DTypeName(want.dtype()) << DimsToString(want.dims());
  }
  for (int64_t i = 0; i < got.num_elements(); ++i) {
    double a = got.ElementAsDouble(i), b = want.ElementAsDouble(i);
    if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << a << " vs reference " << b;
    }
  }
  return ::testing::AssertionSuccess();
}

inline void ExpectArenaSound(const Plan& plan) {
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const ArenaBuffer& a = plan.buffers[i];
    if (a.first < 0) continue;
    EXPECT_LE(a.offset + a.size, plan.arena_bytes);
    for (size_t j = i + 1; j < plan.buffers.size(); ++j) {
      const ArenaBuffer& b = plan.buffers[j];
      if (b.first < 0 || a.last < b.first || b.last < a.first) continue;
      EXPECT_TRUE(a.offset + a.size <= b.offset || b.offset + b.size <= a.offset) << "buffers " << i << ", " << j;
    }
  }
}

inline std::map<std::string, std::vector<int64_t>> ShapesOf(const std::map<std::string, RuntimeValue>& feeds) {
  std::map<std::string, std::vector<int64_t>> s;
  for (const auto& [k, v] : feeds) s[k] = v.tensor.dims();
  return s;
}

struct Case {
  std::string name;
  std::unique_ptr<Model> model;
  std::map<std::string, RuntimeValue> feeds;
  double tol = 1e-4;
};

// Conv(+bias) -> BatchNorm -> + residual -> Relu -> MaxPool -> GlobalAveragePool, and a grouped, strided,
// dilated 1-D conv without bias.
inline Case ConvCase(uint32_t seed) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 4, 9, 9});
  Value* c =
      b.Op("Conv",
           {x, b.Constant("w", RandomTensor({4, 4, 3, 3}, seed, 0.3f)), b.Constant("b", RandomTensor({4}, seed + 1))},
           {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* bn = b.Op("BatchNormalization",
                   {c, b.Constant("s", RandomTensor({4}, seed + 2)), b.Constant("bb", RandomTensor({4}, seed + 3)),
                    b.Constant("m", RandomTensor({4}, seed + 4)),
                    b.Constant("v", Tensor::FromVector<float>({0.5f, 1.0f, 2.0f, 0.25f}, {4}))});
  Value* r = b.Op("Relu", {b.Op("Add", {bn, x})});
  Value* p = b.Op("MaxPool", {r},
                  {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("strides", {2, 2}),
                   Attribute::Ints("pads", {1, 1, 1, 1})});
  b.Output(b.Op("GlobalAveragePool", {p}));
  b.Output(b.Op("AveragePool", {r}, {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})}));
  Value* x1 = b.Input("x1", DType::kFloat, {1, 4, 20});
  b.Output(b.Op("Conv", {x1, b.Constant("w1", RandomTensor({6, 2, 3}, seed + 5, 0.3f))},
                {Attribute::Int("group", 2), Attribute::Ints("strides", {2}), Attribute::Ints("dilations", {2}),
                 Attribute::Ints("pads", {2, 2})}));
  return {"conv",
          b.Build(),
          {{"x", RuntimeValue(RandomTensor({2, 4, 9, 9}, seed + 6))},
           {"x1", RuntimeValue(RandomTensor({1, 4, 20}, seed + 7))}},
          1e-4};
}

// Linear layers with every epilogue, batched attention-like MatMuls, an erf GELU program.
inline Case GemmCase(uint32_t seed) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3, 7, 32});
  Value* h = b.Op("Relu", {b.Op("Add", {b.Op("MatMul", {x, b.Constant("w1", RandomTensor({32, 64}, seed, 0.2f))}),
                                        b.Constant("b1", RandomTensor({64}, seed + 1))})});
  Value* g = b.Op("Gelu", {b.Op("MatMul", {h, b.Constant("w2", RandomTensor({64, 32}, seed + 2, 0.2f))})},
                  {Attribute::String("approximate", "tanh")});
  Value* res =
      b.Op("Add", {x, b.Op("Add", {b.Op("MatMul", {g, b.Constant("w3", RandomTensor({32, 32}, seed + 3, 0.2f))}),
                                   b.Constant("b3", RandomTensor({32}, seed + 4))})});
  Value* att = b.Op("Softmax", {b.Op("MatMul", {res, b.Op("Transpose", {res}, {Attribute::Ints("perm", {0, 2, 1})})})},
                    {Attribute::Int("axis", -1)});
  b.Output(b.Op("MatMul", {att, res}));
  Value* a2 = b.Input("a2", DType::kFloat, {5, 32});
  b.Output(b.Op(
      "Gemm",
      {a2, b.Constant("w4", RandomTensor({16, 32}, seed + 5, 0.2f)), b.Constant("c4", RandomTensor({5, 1}, seed + 6))},
      {Attribute::Int("transB", 1), Attribute::Float("alpha", 0.5f), Attribute::Float("beta", 2.0f)}));
  return {
      "gemm",
      b.Build(20),
      {{"x", RuntimeValue(RandomTensor({3, 7, 32}, seed + 7))}, {"a2", RuntimeValue(RandomTensor({5, 32}, seed + 8))}},
      1e-3};
}

// Elementwise programs with broadcasting, long rows for the row kernels, data movement.
inline Case DataCase(uint32_t seed) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {3, 5000});
  Value* y = b.Input("y", DType::kFloat, {3, 1});
  Value* e = b.Op("Tanh", {b.Op("Div", {b.Op("Sub", {x, y}), b.Constant("two", Tensor::Scalar<float>(2.0f))})});
  b.Output(b.Op("Softmax", {e}, {Attribute::Int("axis", -1)}));
  b.Output(b.Op("LayerNormalization",
                {x, b.Constant("g", RandomTensor({5000}, seed)), b.Constant("be", RandomTensor({5000}, seed + 1))},
                {Attribute::Int("axis", 1)}));
  b.Output(
      b.Op("ReduceSum", {x, b.Constant("ax", Tensor::FromVector<int64_t>({1}, {1}))}, {Attribute::Int("keepdims", 0)}));
  Value* t = b.Op("Transpose", {b.Op("Reshape", {x, b.Constant("sh", Tensor::FromVector<int64_t>({3, 50, 100}, {3}))})},
                  {Attribute::Ints("perm", {2, 0, 1})});
  Value* s = b.Op("Slice", {t, b.Constant("st", Tensor::FromVector<int64_t>({99, 1}, {2})),
                            b.Constant("en", Tensor::FromVector<int64_t>({-200, 40}, {2})),
                            b.Constant("axs", Tensor::FromVector<int64_t>({0, 2}, {2})),
                            b.Constant("sp", Tensor::FromVector<int64_t>({-3, 3}, {2}))});
  b.Output(b.Op("Concat", {s, s, s}, {Attribute::Int("axis", 1)}));
  b.Output(b.Op("Gather", {t, b.Constant("idx", Tensor::FromVector<int64_t>({0, -1, 7, 7}, {2, 2}))},
                {Attribute::Int("axis", 2)}));
  return {"data",
          b.Build(),
          {{"x", RuntimeValue(RandomTensor({3, 5000}, seed + 2))}, {"y", RuntimeValue(RandomTensor({3, 1}, seed + 3))}},
          1e-4};
}

// A node with no device lowering (TopK): a host fallback between device steps.
inline Case FallbackCase(uint32_t seed) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {4, 9});
  Value* top = b.OpN("TopK", {b.Op("Relu", {x}), b.Constant("k", Tensor::FromVector<int64_t>({3}, {1}))}, 2)[0];
  b.Output(b.Op("Sigmoid", {top}));
  return {"fallback", b.Build(), {{"x", RuntimeValue(RandomTensor({4, 9}, seed))}}, 1e-5};
}

inline std::vector<Case> SmallCases(uint32_t seed) {
  std::vector<Case> cases;
  cases.push_back(ConvCase(seed));
  cases.push_back(GemmCase(seed + 100));
  cases.push_back(DataCase(seed + 200));
  cases.push_back(FallbackCase(seed + 300));
  return cases;
}

}  // namespace aic::cuda::testing
