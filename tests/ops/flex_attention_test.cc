// Tests of FlexAttention (ai.onnx.preview, ops/nn/flex_attention.cc): plain
// and grouped-query attention, the scale attribute, score_mod and prob_mod
// subgraphs run through the reference executor, float16 and double inputs,
// symbolic shape inference, cost, and one-line errors naming the node for bad
// inputs. Expected values come from a direct double-precision loop in this
// file (the formula of the ONNX spec, no rounding), on small random inputs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "ops/infer_shapes.h"
#include "ops/math/matmul_util.h"
#include "ops/registry.h"
#include "tests/testing/op_expect.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::ExpectErrorNaming;
using testing::ExpectValues;
using testing::NormalTensor;

constexpr char kDomain[] = "ai.onnx.preview";
constexpr char kOpName[] = "ai.onnx.preview::FlexAttention";

// score_mod(b, h, i, j, s) and prob_mod(p) of the naive loop.
using ScoreFn = std::function<double(int64_t b, int64_t h, int64_t i, int64_t j, double s)>;
using ProbFn = std::function<double(double p)>;

// Y = prob_mod(softmax(score_mod(Q·Kᵀ·scale)))·V, query head h reading KV head
// h / (Hq / Hkv), all in double; scale <= 0 means 1/√E.
std::vector<double> NaiveFlexAttention(const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                                       const ScoreFn& score_mod = nullptr, const ProbFn& prob_mod = nullptr) {
  const int64_t b_n = q.dim(0), hq = q.dim(1), l_n = q.dim(2), e = q.dim(3);
  const int64_t hkv = k.dim(1), s_n = k.dim(2), ev = v.dim(3);
  if (scale <= 0) scale = 1 / std::sqrt(static_cast<double>(e));
  auto at = [](const Tensor& t, int64_t a, int64_t b, int64_t c, int64_t d) {
    return t.ElementAsDouble(((a * t.dim(1) + b) * t.dim(2) + c) * t.dim(3) + d);
  };
  std::vector<double> y;
  for (int64_t b = 0; b < b_n; ++b) {
    for (int64_t h = 0; h < hq; ++h) {
      const int64_t kh = h / (hq / hkv);
      for (int64_t i = 0; i < l_n; ++i) {
        std::vector<double> p(static_cast<size_t>(s_n));
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < s_n; ++j) {
          double s = 0;
          for (int64_t c = 0; c < e; ++c) s += at(q, b, h, i, c) * at(k, b, kh, j, c);
          s *= scale;
          if (score_mod) s = score_mod(b, h, i, j, s);
          p[static_cast<size_t>(j)] = s;
          mx = std::max(mx, s);
        }
        for (double& x : p) {
          x = std::exp(x - mx);
          sum += x;
        }
        for (double& x : p) x = prob_mod ? prob_mod(x / sum) : x / sum;
        for (int64_t c = 0; c < ev; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < s_n; ++j) acc += p[static_cast<size_t>(j)] * at(v, b, kh, j, c);
          y.push_back(acc);
        }
      }
    }
  }
  return y;
}

testing::SingleNode FlexOp(std::vector<Attribute> attrs = {}) {
  testing::SingleNode spec = testing::Op("FlexAttention", std::move(attrs), 26);
  spec.domain = kDomain;
  return spec;
}

// Q, K, V of the given sizes, distinct seeds per tensor.
struct Qkv {
  Tensor q, k, v;
};
Qkv RandomQkv(int64_t b, int64_t hq, int64_t hkv, int64_t l, int64_t s, int64_t e, int64_t ev,
              uint32_t seed) {
  return {NormalTensor({b, hq, l, e}, seed), NormalTensor({b, hkv, s, e}, seed + 1),
          NormalTensor({b, hkv, s, ev}, seed + 2)};
}

// A one-input modifier body nested in `parent`: out = op(x, c).
std::shared_ptr<Graph> ModifierBody(Graph* parent, const std::string& op, const Tensor& c,
                                    DType dtype = DType::kFloat) {
  auto g = std::make_shared<Graph>(parent);
  g->name = op + "_mod";
  GraphBuilder b(g.get());
  Shape bhls({Dim::Symbol("B"), Dim::Symbol("H"), Dim::Symbol("L"), Dim::Symbol("S")});
  TypeInfo t = TypeInfo::Tensor(dtype, bhls);
  Value* x = b.Input("x", t);
  Value* out = b.Op(op, {x, b.Constant("c", c)});
  out->set_type(t);
  b.Output(out);
  return g;
}

// A model of one FlexAttention node whose graph attributes are made by
// `bodies` (given the main graph, the bodies' parent).
std::unique_ptr<Model> FlexModel(const Qkv& in, const std::function<std::vector<Attribute>(Graph*)>& bodies) {
  GraphBuilder b;
  std::vector<Value*> ins;
  const Tensor* ts[] = {&in.q, &in.k, &in.v};
  for (int i = 0; i < 3; ++i) {
    ins.push_back(b.Input("in" + std::to_string(i),
                          TypeInfo::Tensor(ts[i]->dtype(), Shape::FromValues(ts[i]->dims()))));
  }
  std::vector<Value*> outs = b.OpN("FlexAttention", ins, 1, bodies(&b.graph()), kDomain);
  b.Output(outs[0]);
  auto model = b.Build(26);
  model->opset_imports.push_back({kDomain, 1});
  return model;
}

absl::StatusOr<Tensor> RunModel(const Model& m, const Qkv& in) {
  ReferenceExecutor exec(m);
  AIC_ASSIGN_OR_RETURN(auto outs, exec.Run({{"in0", in.q}, {"in1", in.k}, {"in2", in.v}}));
  return outs[0].tensor;
}

TEST(FlexAttentionTest, MatchesTheFormula) {
  Qkv in = RandomQkv(2, 2, 2, 3, 4, 4, 3, 11);
  auto out = testing::RunNode(FlexOp(), {in.q, in.k, in.v});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat);
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 2, 3, 3}));
  ExpectValues((*out)[0], NaiveFlexAttention(in.q, in.k, in.v, 0), "Y", 1e-5);
}

TEST(FlexAttentionTest, GroupedQueryHeadsShareKeyValueHeads) {
  Qkv in = RandomQkv(1, 4, 2, 3, 5, 4, 2, 21);
  auto out = testing::RunNode(FlexOp(), {in.q, in.k, in.v});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 4, 3, 2}));
  ExpectValues((*out)[0], NaiveFlexAttention(in.q, in.k, in.v, 0), "Y", 1e-5);
  // The same as repeating each KV head for its two query heads.
  auto repeat = [](const Tensor& t) {
    std::vector<double> v = TensorToDoubles(t), r;
    const size_t head = static_cast<size_t>(t.dim(2) * t.dim(3));
    for (size_t h = 0; h < 2; ++h)
      for (int rep = 0; rep < 2; ++rep) r.insert(r.end(), v.begin() + h * head, v.begin() + (h + 1) * head);
    return DoublesToTensor(r, {1, 4, t.dim(2), t.dim(3)}, DType::kFloat);
  };
  auto full = testing::RunNode(FlexOp(), {in.q, repeat(in.k), repeat(in.v)});
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_LE(testing::MaxAbsDiff((*out)[0], (*full)[0]), 1e-6);
}

TEST(FlexAttentionTest, ScaleAttributeReplacesOneOverRootE) {
  Qkv in = RandomQkv(1, 2, 2, 3, 3, 8, 4, 31);
  auto out = testing::RunNode(FlexOp({Attribute::Float("scale", 0.1f)}), {in.q, in.k, in.v});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectValues((*out)[0], NaiveFlexAttention(in.q, in.k, in.v, 0.1f), "Y", 1e-5);
  // A large scale sharpens the softmax: not the default's output.
  auto sharp = testing::RunNode(FlexOp({Attribute::Float("scale", 4.0f)}), {in.q, in.k, in.v});
  ASSERT_TRUE(sharp.ok()) << sharp.status();
  EXPECT_GT(testing::MaxAbsDiff((*out)[0], (*sharp)[0]), 1e-2);
}

TEST(FlexAttentionTest, ScoreModAddsACausalBias) {
  // score_mod(s) = s + bias, bias [L, S] = 0 on and below the diagonal,
  // -inf above: causal masking written as a subgraph.
  const int64_t l = 3, s = 3;
  std::vector<float> bias;
  for (int64_t i = 0; i < l; ++i)
    for (int64_t j = 0; j < s; ++j) bias.push_back(j <= i ? 0.0f : -INFINITY);
  Qkv in = RandomQkv(1, 2, 1, l, s, 4, 3, 41);
  auto m = FlexModel(in, [&](Graph* g) {
    return std::vector<Attribute>{Attribute::GraphValue(
        "score_mod", ModifierBody(g, "Add", Tensor::FromVector<float>(bias, {l, s})))};
  });
  ASSERT_TRUE(InferShapes(*m, {.best_effort = false}).ok());
  EXPECT_EQ(m->graph->outputs()[0]->type().ToString(), "float[1, 2, 3, 3]");
  auto out = RunModel(*m, in);
  ASSERT_TRUE(out.ok()) << out.status();
  auto causal = [](int64_t, int64_t, int64_t i, int64_t j, double x) { return j <= i ? x : -INFINITY; };
  std::vector<double> want = NaiveFlexAttention(in.q, in.k, in.v, 0, causal);
  ExpectValues(*out, want, "Y", 1e-5);
  // Query 0 sees key 0 only: its output is V[0] of its KV head.
  for (int64_t c = 0; c < 3; ++c) EXPECT_NEAR(out->ElementAsDouble(c), in.v.ElementAsDouble(c), 1e-6);
}

TEST(FlexAttentionTest, FullyMaskedQueryGivesNaNLikeSoftmax) {
  // Query 0's keys all masked: softmax of a row of -inf is NaN (numpy's
  // reference and the function body's Softmax); query 1 is untouched.
  Qkv in = RandomQkv(1, 1, 1, 2, 2, 4, 2, 45);
  auto m = FlexModel(in, [](Graph* g) {
    Tensor bias = Tensor::FromVector<float>({-INFINITY, -INFINITY, 0, 0}, {2, 2});
    return std::vector<Attribute>{Attribute::GraphValue("score_mod", ModifierBody(g, "Add", bias))};
  });
  auto out = RunModel(*m, in);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(out->ElementAsDouble(0)));
  EXPECT_TRUE(std::isnan(out->ElementAsDouble(1)));
  std::vector<double> want = NaiveFlexAttention(in.q, in.k, in.v, 0);
  EXPECT_NEAR(out->ElementAsDouble(2), want[2], 1e-5);
  EXPECT_NEAR(out->ElementAsDouble(3), want[3], 1e-5);
}

TEST(FlexAttentionTest, ProbModScalesTheProbabilities) {
  Qkv in = RandomQkv(2, 2, 2, 2, 3, 4, 4, 51);
  auto m = FlexModel(in, [](Graph* g) {
    return std::vector<Attribute>{
        Attribute::GraphValue("prob_mod", ModifierBody(g, "Mul", Tensor::Scalar<float>(0.5f)))};
  });
  auto out = RunModel(*m, in);
  ASSERT_TRUE(out.ok()) << out.status();
  auto half_probs = [](double p) { return p * 0.5; };
  ExpectValues(*out, NaiveFlexAttention(in.q, in.k, in.v, 0, nullptr, half_probs), "Y", 1e-5);
  // Both modifiers at once, score_mod first.
  auto both = FlexModel(in, [](Graph* g) {
    return std::vector<Attribute>{
        Attribute::GraphValue("score_mod", ModifierBody(g, "Mul", Tensor::Scalar<float>(3.0f))),
        Attribute::GraphValue("prob_mod", ModifierBody(g, "Mul", Tensor::Scalar<float>(2.0f)))};
  });
  auto out2 = RunModel(*both, in);
  ASSERT_TRUE(out2.ok()) << out2.status();
  ExpectValues(*out2,
               NaiveFlexAttention(
                   in.q, in.k, in.v, 0, [](int64_t, int64_t, int64_t, int64_t, double x) { return 3 * x; },
                   [](double p) { return 2 * p; }),
               "Y both", 1e-5);
}

TEST(FlexAttentionTest, Float16InputsGiveFloat16WithinItsPrecision) {
  Qkv f = RandomQkv(1, 2, 1, 4, 5, 8, 4, 61);
  auto half = [](const Tensor& t) { return DoublesToTensor(TensorToDoubles(t), t.dims(), DType::kFloat16); };
  Qkv in = {half(f.q), half(f.k), half(f.v)};
  auto out = testing::RunNode(FlexOp(), {in.q, in.k, in.v});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kFloat16);
  // The exact formula on the float16 values, within float16's rounding.
  ExpectValues((*out)[0], NaiveFlexAttention(in.q, in.k, in.v, 0), "Y", 3e-3);
  // Every output is a float16 value: the result was rounded to it.
  for (int64_t i = 0; i < (*out)[0].num_elements(); ++i) {
    double x = (*out)[0].ElementAsDouble(i);
    EXPECT_EQ(x, DoublesToTensor({x}, {1}, DType::kFloat16).ElementAsDouble(0));
  }
}

TEST(FlexAttentionTest, DoubleAndExplicitSoftmaxPrecision) {
  Qkv f = RandomQkv(1, 1, 1, 2, 3, 4, 2, 71);
  auto to = [](const Tensor& t, DType d) { return DoublesToTensor(TensorToDoubles(t), t.dims(), d); };
  Qkv in = {to(f.q, DType::kDouble), to(f.k, DType::kDouble), to(f.v, DType::kDouble)};
  auto out = testing::RunNode(FlexOp(), {in.q, in.k, in.v});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dtype(), DType::kDouble);
  // √scale is taken in float32 (the reference's rounding), so double agrees to ~1e-7.
  ExpectValues((*out)[0], NaiveFlexAttention(in.q, in.k, in.v, 0), "Y", 1e-6);
  // A float softmax for double inputs: still double out, float's precision.
  const auto float_softmax = Attribute::Int("softmax_precision", static_cast<int64_t>(DType::kFloat));
  auto low = testing::RunNode(FlexOp({float_softmax}), {in.q, in.k, in.v});
  ASSERT_TRUE(low.ok()) << low.status();
  EXPECT_EQ((*low)[0].dtype(), DType::kDouble);
  ExpectValues((*low)[0], NaiveFlexAttention(in.q, in.k, in.v, 0), "Y float softmax", 1e-5);
}

TEST(FlexAttentionTest, InfersSymbolicDims) {
  auto f32 = [](std::vector<Dim> d) { return TypeInfo::Tensor(DType::kFloat, Shape(std::move(d))); };
  Dim batch = Dim::Symbol("batch"), seq = Dim::Symbol("seq"), kv = Dim::Symbol("kv");
  auto out = testing::InferNode(
      FlexOp(), {f32({batch, 8, seq, 64}), f32({batch, 2, kv, 64}), f32({Dim(), 2, kv, 32})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].ToString(), "float[batch, 8, seq, 32]");
  // A V of unknown rank leaves Ev a fresh symbol; the rank is still 4.
  TypeInfo any_rank = TypeInfo::Tensor(DType::kFloat, Shape::UnknownRank());
  auto open = testing::InferNode(FlexOp(), {f32({batch, 8, seq, 64}), f32({batch, 2, kv, 64}), any_rank});
  ASSERT_TRUE(open.ok()) << open.status();
  ASSERT_EQ((*open)[0].shape.rank(), 4);
  EXPECT_EQ((*open)[0].shape[0], batch);
  EXPECT_TRUE((*open)[0].shape[3].is_symbol());
}

TEST(FlexAttentionTest, CostCountsBothProducts) {
  GraphBuilder b;
  std::vector<Value*> ins = {b.Input("q", DType::kFloat, {2, 4, 8, 16}),
                             b.Input("k", DType::kFloat, {2, 2, 6, 16}),
                             b.Input("v", DType::kFloat, {2, 2, 6, 32})};
  b.OpN("FlexAttention", ins, 1, {}, kDomain);
  Node* node = b.last_node();
  auto m = b.Build(26);
  m->opset_imports.push_back({kDomain, 1});
  ASSERT_TRUE(InferShapes(*m, {.best_effort = false}).ok());
  std::vector<TypeInfo> types;
  for (Value* v : node->inputs()) types.push_back(v->type());
  OpContext ctx(*node, 1, types, {nullptr, nullptr, nullptr}, nullptr);
  ctx.set_output_type(0, node->output(0)->type());
  const OpDef* def = OpRegistry::Global().Find(kDomain, "FlexAttention", 1);
  ASSERT_NE(def, nullptr);
  Cost c = def->cost(ctx);
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.macs, 2 * 4 * 8 * 6 * (16 + 32));
  Traits t = def->traits(ctx);
  EXPECT_EQ(t.semantic_name, "FlexAttention");
  EXPECT_EQ(t.linearity, Linearity::kNonlinear);
}

TEST(FlexAttentionTest, BadInputsNameTheNode) {
  Tensor q = NormalTensor({1, 3, 2, 4}, 1), k = NormalTensor({1, 2, 2, 4}, 2);
  Tensor v = NormalTensor({1, 2, 2, 4}, 3), q2 = NormalTensor({1, 2, 2, 4}, 6);
  auto run = [](std::vector<Tensor> in, std::vector<Attribute> attrs = {}) {
    return testing::RunNode(FlexOp(std::move(attrs)), in).status();
  };
  // 3 query heads do not group over 2 KV heads: at run time and statically.
  ExpectErrorNaming(run({q, k, v}), kOpName, "not a multiple of kv_num_heads");
  auto f32 = [](const Tensor& t) { return TypeInfo::Tensor(DType::kFloat, Shape::FromValues(t.dims())); };
  ExpectErrorNaming(testing::InferNode(FlexOp(), {f32(q), f32(k), f32(v)}).status(), kOpName,
                    "not a multiple of kv_num_heads");
  // Rank 3 Q.
  Tensor q3 = NormalTensor({1, 2, 4}, 4);
  ExpectErrorNaming(run({q3, k, v}), kOpName, "Q must be 4-D");
  // Q and K head sizes differ.
  Tensor q5 = NormalTensor({1, 2, 2, 5}, 5);
  ExpectErrorNaming(run({q5, k, v}), kOpName, "head_size");
  // K and V disagree on the sequence length.
  ExpectErrorNaming(run({q2, k, NormalTensor({1, 2, 3, 4}, 7)}), kOpName, "kv_sequence_length");
  // Mixed dtypes, and a softmax_precision that is not a float type.
  Tensor kd = DoublesToTensor(TensorToDoubles(k), k.dims(), DType::kDouble);
  ExpectErrorNaming(run({q2, kd, v}), kOpName, "share one dtype");
  ExpectErrorNaming(run({q2, k, v}, {Attribute::Int("softmax_precision", 7)}), kOpName,
                    "softmax_precision 7");
}

TEST(FlexAttentionTest, ModifierMustKeepTheScoresShape) {
  // score_mod = scores · c with c [1, 1, 1, 5]: broadcasting widens S from 1 to 5.
  Qkv in = RandomQkv(1, 2, 2, 2, 1, 4, 4, 81);
  auto m = FlexModel(in, [](Graph* g) {
    Tensor wide = Tensor::FromVector<float>({1, 1, 1, 1, 1}, {1, 1, 1, 5});
    return std::vector<Attribute>{Attribute::GraphValue("score_mod", ModifierBody(g, "Mul", wide))};
  });
  ExpectErrorNaming(RunModel(*m, in).status(), kOpName, "score_mod gave shape");
  // A body whose declared input is not the softmax precision is refused statically.
  auto wrong = FlexModel(in, [](Graph* g) {
    auto body = ModifierBody(g, "Mul", Tensor::Scalar<double>(2.0), DType::kDouble);
    return std::vector<Attribute>{Attribute::GraphValue("prob_mod", body)};
  });
  ExpectErrorNaming(InferShapes(*wrong, {.best_effort = false}), kOpName, "softmax precision is float");
}

}  // namespace
}  // namespace aic
