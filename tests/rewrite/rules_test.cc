// Every rule: it fires (the rewritten graph's ops checked), its guard declines
// a near miss, a second run changes nothing, and the outputs match the
// reference executor's on fresh random inputs (bitwise for exact rules).
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "rewrite/rules/rule.h"
#include "rewrite/rules/rule_util.h"
#include "tests/rewrite/rewrite_test_util.h"

namespace aic::rewrite {
namespace {

using testing::MaxOutputDiff;
using testing::ModelFn;
using testing::OpCounts;
using testing::OptimizeModel;
using testing::OptimizeWith;

Tensor Floats(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, dims); }
Tensor Ints(std::vector<int64_t> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>(v, {n});
}
Tensor Ramp(std::vector<int64_t> dims, float scale = 0.1f, float offset = 0.f) {
  Tensor t(DType::kFloat, dims);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = offset + scale * static_cast<float>((i * 7) % 11 - 5);
  return t;
}

struct RuleCase {
  RuleCase(std::string n, std::string r, ModelFn f, std::map<std::string, int> e, ModelFn d,
           std::set<std::string> x = {})
      : name(std::move(n)), rule(std::move(r)), fires(std::move(f)), expect(std::move(e)),
        declines(std::move(d)), extra(std::move(x)) {}
  std::string name;   // test name
  std::string rule;
  ModelFn fires;      // a graph where the rule applies
  std::map<std::string, int> expect;  // op counts after (only those listed)
  ModelFn declines;   // a near miss; nullptr: none
  std::set<std::string> extra;  // helper rules (e.g. fold_constants)
};

ModelFn Unary(const std::string& op, std::vector<Attribute> attrs, std::vector<Dim> dims = {2, 3},
              int64_t opset = 17) {
  return [=] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, dims);
    b.Output(b.Op("Relu", {b.Op(op, {x}, attrs)}));
    return b.Build(opset);
  };
}

ModelFn WithConst(const std::string& op, Tensor c, std::vector<Dim> dims = {2, 3}, bool const_first = false,
                  int64_t opset = 17) {
  return [=] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, dims);
    Value* k = b.Constant("k", c);
    Value* y = const_first ? b.Op(op, {k, x}) : b.Op(op, {x, k});
    b.Output(b.Op("Relu", {y}));
    return b.Build(opset);
  };
}

// A 3x3 conv at `dilation` with pads equal to it (DeepLab's ASPP branch):
// on an input narrower than the dilation its outer taps read only padding.
ModelFn DilatedConv(std::vector<Dim> in, int64_t dilation, std::vector<int64_t> strides = {1, 1},
                    std::vector<int64_t> pads = {}) {
  return [=] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, in);
    Value* w = b.Constant("w", Ramp({4, in[1].value(), 3, 3}));
    Value* bias = b.Constant("b", Floats({0.1f, -0.2f, 0.3f, 0.4f}, {4}));
    std::vector<int64_t> p = pads.empty() ? std::vector<int64_t>(4, dilation) : pads;
    b.Output(b.Op("Conv", {x, w, bias},
                  {Attribute::Ints("dilations", {dilation, dilation}), Attribute::Ints("pads", p),
                   Attribute::Ints("strides", strides)}));
    return b.Build(13);
  };
}

// A block of parallel branches over one input, summed (RepVGG, MobileOne):
// each branch a conv {kernel, pads (begin.., end..), group} or, with kernel
// 0, the input itself (or BN(x) with `bn`).
struct ParallelBranch {
  int64_t kernel;
  std::vector<int64_t> pads;
  int64_t group = 1;
  bool bn = false;
  std::vector<int64_t> strides = {1, 1};
  std::vector<int64_t> dilations = {1, 1};
};

Tensor Cast(const Tensor& t, DType dtype) { return FromDoubles(ToDoubles(t), dtype, t.dims()); }

ModelFn ParallelConvs(std::vector<ParallelBranch> branches, int64_t channels = 4, DType dtype = DType::kFloat,
                      float inf_weight = 0.0f) {
  return [=] {
    GraphBuilder b;
    Value* x = b.Input("x", dtype, {1, channels, 7, 7});
    Value* sum = nullptr;
    int i = 0;
    for (const ParallelBranch& br : branches) {
      Value* v = x;
      const std::string k = std::to_string(i++);
      if (br.kernel > 0) {
        Tensor w = Ramp({channels, channels / br.group, br.kernel, br.kernel}, 0.01f * i);
        if (inf_weight != 0.0f && i == 1) w.mutable_data<float>()[0] = inf_weight;
        Tensor bias = Floats(std::vector<float>(static_cast<size_t>(channels), 0.1f * i), {channels});
        if (dtype == DType::kFloat16) {
          w = Cast(w, DType::kFloat16);
          bias = Cast(bias, DType::kFloat16);
        }
        v = b.Op("Conv", {x, b.Constant("w" + k, w), b.Constant("b" + k, bias)},
                 {Attribute::Ints("pads", br.pads), Attribute::Int("group", br.group),
                  Attribute::Ints("strides", br.strides), Attribute::Ints("dilations", br.dilations)});
      } else if (br.bn) {
        auto c = [&](const char* n, float base) {
          std::vector<float> vals;
          for (int64_t j = 0; j < channels; ++j) vals.push_back(base + 0.1f * static_cast<float>(j));
          Tensor t = Floats(vals, {channels});
          return b.Constant(n + k, dtype == DType::kFloat16 ? Cast(t, DType::kFloat16) : t);
        };
        v = b.Op("BatchNormalization", {x, c("s", 0.5f), c("t", -0.2f), c("m", 0.1f), c("v", 1.0f)});
      }
      sum = sum == nullptr ? v : b.Op("Add", {sum, v});
    }
    b.Output(b.Op("Relu", {sum}));
    return b.Build(13);
  };
}

ModelFn ConvThen(const std::function<Value*(GraphBuilder&, Value*)>& after, bool bias = true) {
  return [=] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, 2, 5, 5});
    Value* w = b.Constant("w", Ramp({3, 2, 3, 3}));
    std::vector<Value*> ins = {x, w};
    if (bias) ins.push_back(b.Constant("b", Floats({0.1f, -0.2f, 0.3f}, {3})));
    Value* y = b.Op("Conv", ins, {Attribute::Ints("pads", {1, 1, 1, 1})});
    b.Output(after(b, y));
    return b.Build(13);
  };
}

Value* Bn(GraphBuilder& b, Value* y) {
  return b.Op("BatchNormalization",
              {y, b.Constant("g", Floats({1.5f, 0.5f, 2.f}, {3})), b.Constant("be", Floats({0.1f, 0.2f, 0.3f}, {3})),
               b.Constant("m", Floats({0.3f, -0.1f, 0.f}, {3})), b.Constant("v", Floats({1.f, 2.f, 0.5f}, {3}))});
}

ModelFn HardSwishGraph(int64_t opset, float three = 3.f) {
  return [=] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {2, 4});
    Value* a = b.Op("Add", {x, b.Constant("three", Tensor::Scalar<float>(three))});
    Value* c = opset >= 11 ? b.Op("Clip", {a, b.Constant("lo", Tensor::Scalar<float>(0.f)),
                                          b.Constant("hi", Tensor::Scalar<float>(6.f))})
                           : b.Op("Clip", {a}, {Attribute::Float("min", 0.f), Attribute::Float("max", 6.f)});
    Value* m = b.Op("Mul", {x, c});
    b.Output(b.Op("Div", {m, b.Constant("six", Tensor::Scalar<float>(6.f))}));
    return b.Build(opset);
  };
}

std::vector<RuleCase> Cases() {
  std::vector<RuleCase> cases;
  cases.push_back({"FoldConstants", "fold_constants",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     Value* c = b.Op("Add", {b.Constant("a", Ramp({2, 3})), b.Constant("c", Ramp({2, 3}, 0.5f))});
                     b.Output(b.Op("Mul", {x, c}));
                     return b.Build(17);
                   },
                   {{"Add", 0}, {"Mul", 1}},
                   [] {  // Expand to a bigger tensor would grow the file.
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {64, 64});
                     Value* c = b.Op("Expand", {b.Constant("a", Floats({1.f}, {1})), b.Constant("s", Ints({64, 64}))});
                     b.Output(b.Op("Mul", {x, c}));
                     return b.Build(17);
                   }});
  cases.push_back({"RemoveIdentity", "remove_identity", Unary("Identity", {}), {{"Identity", 0}}, nullptr});
  cases.push_back({"RemoveDropout", "remove_dropout", Unary("Dropout", {}), {{"Dropout", 0}},
                   [] {  // training mode: Dropout drops (the node stays opaque)
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     Value* d = b.Op("Dropout", {x, b.Constant("r", Tensor::Scalar<float>(0.f)),
                                                 b.Constant("t", Tensor::Scalar<bool>(true))});
                     b.Output(b.Op("Relu", {d}));
                     return b.Build(17);
                   }});
  cases.push_back({"CastLikeToCast", "cast_like_to_cast",
                   [] {  // the target's type only matters: a computed int64
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     Value* i = b.Input("i", DType::kInt64, {4});
                     Value* like = b.Op("Add", {i, i});
                     b.Output(b.Op("CastLike", {x, like}));
                     return b.Build(15);
                   },
                   {{"CastLike", 0}, {"Cast", 1}}, nullptr});
  cases.push_back({"SelectByConstantCondition", "select_by_constant_condition",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     Value* y = b.Input("y", DType::kFloat, {2, 3});
                     Tensor c(DType::kBool, {2, 3});  // all false: y
                     b.Output(b.Op("Relu", {b.Op("Where", {b.Constant("c", c), x, y})}));
                     return b.Build(17);
                   },
                   {{"Where", 0}, {"Relu", 1}},
                   [] {  // all true, but the chosen branch broadcasts to the result's shape
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {3});
                     Value* y = b.Input("y", DType::kFloat, {2, 3});
                     Tensor c = Tensor::FromVector<bool>({true, true, true, true, true, true}, {2, 3});
                     b.Output(b.Op("Relu", {b.Op("Where", {b.Constant("c", c), x, y})}));
                     return b.Build(17);
                   }});
  cases.push_back({"RemoveNoopCast", "remove_noop_cast", Unary("Cast", {Attribute::Int("to", 1)}), {{"Cast", 0}},
                   Unary("Cast", {Attribute::Int("to", 11)})});
  cases.push_back({"RemoveNoopReshape", "remove_noop_reshape", WithConst("Reshape", Ints({2, 3})), {{"Reshape", 0}},
                   WithConst("Reshape", Ints({3, 2}))});
  cases.push_back({"RemoveNoopExpand", "remove_noop_expand", WithConst("Expand", Ints({1, 3})), {{"Expand", 0}},
                   WithConst("Expand", Ints({4, 2, 3}))});
  cases.push_back({"RemoveNoopSqueeze", "remove_noop_unsqueeze", Unary("Unsqueeze", {}, {2, 3}, 11),
                   {{"Unsqueeze", 0}}, Unary("Unsqueeze", {Attribute::Ints("axes", {0})}, {2, 3}, 11)});
  cases.push_back({"RemoveNoopTranspose", "remove_noop_transpose", Unary("Transpose", {Attribute::Ints("perm", {0, 1})}),
                   {{"Transpose", 0}}, Unary("Transpose", {Attribute::Ints("perm", {1, 0})})});
  cases.push_back({"RemoveNoopSlice", "remove_noop_slice",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     b.Output(b.Op("Relu", {b.Op("Slice", {x, b.Constant("s", Ints({0})), b.Constant("e", Ints({9}))})}));
                     return b.Build(17);
                   },
                   {{"Slice", 0}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     b.Output(b.Op("Relu", {b.Op("Slice", {x, b.Constant("s", Ints({1})), b.Constant("e", Ints({9}))})}));
                     return b.Build(17);
                   }});
  cases.push_back({"RemoveSingleConcat", "remove_single_concat", Unary("Concat", {Attribute::Int("axis", 0)}),
                   {{"Concat", 0}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     b.Output(b.Op("Concat", {x, x}, {Attribute::Int("axis", 0)}));
                     return b.Build(17);
                   }});
  cases.push_back({"RemoveSingleSplit", "remove_single_split", Unary("Split", {Attribute::Int("axis", 0)}),
                   {{"Split", 0}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     std::vector<Value*> parts = b.OpN("Split", {x}, 2, {Attribute::Int("axis", 0)});
                     b.Output(b.Op("Add", {parts[0], parts[1]}));
                     return b.Build(17);
                   }});
  cases.push_back({"RemoveZeroPad", "remove_zero_pad", WithConst("Pad", Ints({0, 0, 0, 0})), {{"Pad", 0}},
                   WithConst("Pad", Ints({0, 1, 0, 0}))});
  cases.push_back({"RemoveAddZero", "remove_add_zero", WithConst("Add", Floats({0, 0, 0}, {3}), {2, 3}, true),
                   {{"Add", 0}}, WithConst("Add", Floats({0, 0, 0, 0, 0, 0}, {2, 1, 3}))});
  cases.push_back({"RemoveSubZero", "remove_sub_zero", WithConst("Sub", Tensor::Scalar<float>(0.f)), {{"Sub", 0}},
                   WithConst("Sub", Tensor::Scalar<float>(1.f))});
  cases.push_back({"RemoveMulOne", "remove_mul_one", WithConst("Mul", Tensor::Scalar<float>(1.f)), {{"Mul", 0}},
                   WithConst("Mul", Tensor::Scalar<float>(2.f))});
  cases.push_back({"RemoveDivOne", "remove_div_one", WithConst("Div", Tensor::Scalar<float>(1.f)), {{"Div", 0}},
                   WithConst("Div", Tensor::Scalar<float>(-1.f))});
  cases.push_back({"RemovePowOne", "remove_pow_one", WithConst("Pow", Tensor::Scalar<float>(1.f)), {{"Pow", 0}},
                   WithConst("Pow", Tensor::Scalar<float>(2.f))});
  cases.push_back({"ComposeTransposes", "compose_transposes",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3, 4});
                     Value* t = b.Op("Transpose", {x}, {Attribute::Ints("perm", {1, 0, 2})});
                     b.Output(b.Op("Transpose", {t}, {Attribute::Ints("perm", {2, 0, 1})}));
                     return b.Build(17);
                   },
                   {{"Transpose", 1}},
                   Unary("Transpose", {Attribute::Ints("perm", {1, 0})})});
  cases.push_back({"TransposeAsReshape", "transpose_as_reshape",
                   Unary("Transpose", {Attribute::Ints("perm", {0, 1, 3, 2, 4, 5})},
                         {Dim::Symbol("n"), 1, 7, 1, 7, 5}),
                   {{"Transpose", 0}, {"Reshape", 1}},
                   Unary("Transpose", {Attribute::Ints("perm", {0, 1, 3, 2, 4, 5})},
                         {Dim::Symbol("n"), 1, 7, 2, 7, 5})});
  cases.push_back({"TransposeAsReshapeOneMovedSymbol", "transpose_as_reshape",
                   Unary("Transpose", {Attribute::Ints("perm", {1, 0, 2})}, {1, Dim::Symbol("n"), 4}),
                   {{"Transpose", 0}, {"Reshape", 1}},
                   // Two unknown dims that move: no single -1 can say them.
                   Unary("Transpose", {Attribute::Ints("perm", {1, 2, 0})}, {1, Dim::Symbol("n"), Dim::Symbol("m")})});
  auto two_slices = [](std::vector<int64_t> axes1, std::vector<int64_t> axes2, std::vector<int64_t> steps2) {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {4, 10});
      std::vector<int64_t> s1(axes1.size(), 1), e1(axes1.size(), 9), s2(axes2.size(), 1), e2(axes2.size(), 7);
      Value* y = b.Op("Slice", {x, b.Constant("s1", Ints(s1)), b.Constant("e1", Ints(e1)), b.Constant("a1", Ints(axes1))});
      std::vector<int64_t> st2 = steps2;
      b.Output(b.Op("Relu", {b.Op("Slice", {y, b.Constant("s2", Ints(s2)), b.Constant("e2", Ints(e2)),
                                             b.Constant("a2", Ints(axes2)), b.Constant("st2", Ints(st2))})}));
      return b.Build(17);
    };
  };
  cases.push_back({"ComposeSlicesSameAxis", "compose_slices", two_slices({1}, {1}, {2}), {{"Slice", 1}},
                   two_slices({1}, {1}, {-1})});  // a negative step on the shared axis
  cases.push_back({"ComposeSlicesDisjointAxes", "compose_slices", two_slices({1}, {0}, {1}), {{"Slice", 1}},
                   nullptr});
  cases.push_back({"ReshapeTargetWithAProduct", "use_reshape_copies",
                   [] {
                     // Reshape(x, [batch * 3, 4]): the product is not followed, its parts are.
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 3, 4});
                     Value* n = b.Op("Gather", {b.Op("Shape", {x}), b.Constant("zero", Tensor::Scalar<int64_t>(0))});
                     Value* n3 = b.Op("Mul", {n, b.Constant("three", Tensor::Scalar<int64_t>(3))});
                     Value* first = b.Op("Unsqueeze", {n3, b.Constant("axes", Ints({0}))});
                     Value* shape = b.Op("Concat", {first, b.Constant("four", Ints({4}))}, {Attribute::Int("axis", 0)});
                     b.Output(b.Op("Relu", {b.Op("Reshape", {x, shape})}));
                     return b.Build(17);
                   },
                   {{"Mul", 0}, {"Concat", 0}, {"Shape", 0}, {"Reshape", 1}},
                   [] {
                     // Two parts not followed (n * 3 and n * 4 / n): one -1 cannot stand for both.
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 3, 4});
                     Value* n = b.Op("Gather", {b.Op("Shape", {x}), b.Constant("zero", Tensor::Scalar<int64_t>(0))});
                     Value* n3 = b.Op("Mul", {n, b.Constant("three", Tensor::Scalar<int64_t>(3))});
                     Value* four = b.Op("Div", {b.Op("Mul", {n, b.Constant("four", Tensor::Scalar<int64_t>(4))}), n});
                     Value* axes = b.Constant("axes", Ints({0}));
                     Value* shape = b.Op("Concat", {b.Op("Unsqueeze", {n3, axes}), b.Op("Unsqueeze", {four, axes})},
                                         {Attribute::Int("axis", 0)});
                     b.Output(b.Op("Relu", {b.Op("Reshape", {x, shape})}));
                     return b.Build(17);
                   }});
  auto unsqueezes = [](std::vector<int64_t> a1, std::vector<int64_t> a2, int64_t opset) {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 3});
      Value* u = opset < 13 ? b.Op("Unsqueeze", {x}, {Attribute::Ints("axes", a1)})
                            : b.Op("Unsqueeze", {x, b.Constant("a1", Ints(a1))});
      Value* v = opset < 13 ? b.Op("Unsqueeze", {u}, {Attribute::Ints("axes", a2)})
                            : b.Op("Unsqueeze", {u, b.Constant("a2", Ints(a2))});
      b.Output(b.Op("Relu", {v}));
      return b.Build(opset);
    };
  };
  // [n, 3] -> [n, 1, 3] -> [n, 1, 1, 3, 1] (-1 and 2 of the outer: the output's 4 and 2).
  cases.push_back({"ComposeUnsqueezes", "compose_unsqueezes", unsqueezes({1}, {-1, 2}, 17), {{"Unsqueeze", 1}},
                   nullptr});
  cases.push_back({"ComposeUnsqueezesOpset11", "compose_unsqueezes", unsqueezes({0}, {0, 3}, 11), {{"Unsqueeze", 1}},
                   nullptr});
  auto expand_by_compared_shape = [](std::vector<int64_t> against) {
    return [=] {
      // torch's Expand target: Where(Shape(x) == -1, 1, Shape(x)).
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 3});
      Value* s = b.Op("Shape", {x});
      Value* eq = b.Op("Equal", {s, b.Constant("against", Ints(against))});
      Value* w = b.Op("Where", {eq, b.Constant("ones", Ints({1, 1})), s});
      b.Output(b.Op("Relu", {b.Op("Expand", {x, w})}));
      return b.Build(17);
    };
  };
  cases.push_back({"FoldShapeComparison", "fold_shape_comparison", expand_by_compared_shape({-1, -1}), {{"Equal", 0}},
                   expand_by_compared_shape({3, 3})});  // n == 3 is not decided
  cases.push_back({"ComposeReshapes", "compose_reshapes",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3, 4});
                     Value* r = b.Op("Reshape", {x, b.Constant("s1", Ints({6, 4}))});
                     b.Output(b.Op("Reshape", {r, b.Constant("s2", Ints({4, -1}))}));
                     return b.Build(17);
                   },
                   {{"Reshape", 1}},
                   [] {  // 0 copies a dim of the intermediate: not exact on x.
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 3, 4});
                     Value* r = b.Op("Reshape", {x, b.Constant("s1", Ints({6, -1}))});
                     b.Output(b.Op("Reshape", {r, b.Constant("s2", Ints({0, 2, -1}))}));
                     return b.Build(17);
                   }});
  cases.push_back({"SqueezeUnsqueezePair", "compose_reshapes",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 3});
                     Value* u = b.Op("Unsqueeze", {x, b.Constant("a", Ints({1}))});
                     b.Output(b.Op("Relu", {b.Op("Squeeze", {u, b.Constant("a2", Ints({1}))})}));
                     return b.Build(17);
                   },
                   {{"Squeeze", 0}, {"Unsqueeze", 0}}, nullptr});
  cases.push_back({"FoldShapeArithmetic", "fold_shape_arithmetic",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("batch"), 3, 4});
                     Value* g = b.Op("Gather", {b.Op("Shape", {x}), b.Constant("i", Tensor::Scalar<int64_t>(2))});
                     b.Output(b.Op("Add", {g, b.Constant("one", Tensor::Scalar<int64_t>(1))}));
                     return b.Build(17);
                   },
                   {{"Shape", 0}, {"Gather", 0}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("batch"), 3, 4});
                     Value* g = b.Op("Gather", {b.Op("Shape", {x}), b.Constant("i", Tensor::Scalar<int64_t>(0))});
                     b.Output(b.Op("Add", {g, b.Constant("one", Tensor::Scalar<int64_t>(1))}));
                     return b.Build(17);
                   },
                   {"fold_constants"}});
  cases.push_back({"UseReshapeCopies", "use_reshape_copies",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("batch"), 3, 4});
                     Value* s = b.Op("Shape", {x});
                     Value* n = b.Op("Slice", {s, b.Constant("st", Ints({0})), b.Constant("en", Ints({1}))});
                     Value* shape = b.Op("Concat", {n, b.Constant("rest", Ints({-1}))}, {Attribute::Int("axis", 0)});
                     b.Output(b.Op("Reshape", {x, shape}));
                     return b.Build(17);
                   },
                   {{"Reshape", 1}, {"Shape", 0}, {"Concat", 0}},
                   [] {  // two unknown dims of another tensor: no constant shape is exact
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("b"), Dim::Symbol("t"), 4});
                     Value* y = b.Input("y", DType::kFloat, {Dim::Symbol("t"), Dim::Symbol("b"), 4});
                     Value* s = b.Op("Shape", {y});
                     Value* n = b.Op("Slice", {s, b.Constant("st", Ints({0})), b.Constant("en", Ints({2}))});
                     Value* shape = b.Op("Concat", {n, b.Constant("rest", Ints({-1}))}, {Attribute::Int("axis", 0)});
                     b.Output(b.Op("Reshape", {x, shape}));
                     return b.Build(17);
                   }});
  cases.push_back({"UseReshapeCopiesOfInferredDims", "use_reshape_copies",
                   [] {
                     // view(-1, seq, 32) of a [1, 8, seq, 32]: the -1 is 8 and seq moves to
                     // position 1 (llama's attention batch): [8, -1, 32].
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {1, 8, Dim::Symbol("seq"), 32});
                     Value* s = b.Op("Shape", {x});
                     Value* seq = b.Op("Slice", {s, b.Constant("st", Ints({-2})), b.Constant("en", Ints({-1}))});
                     Value* shape = b.Op("Concat", {b.Constant("m1", Ints({-1})), seq, b.Constant("d", Ints({32}))},
                                         {Attribute::Int("axis", 0)});
                     b.Output(b.Op("Relu", {b.Op("Reshape", {x, shape})}));
                     return b.Build(17);
                   },
                   {{"Reshape", 1}, {"Shape", 0}, {"Concat", 0}, {"Slice", 0}},
                   nullptr});
  auto bmm_keys = [](std::vector<int64_t> middle) {
    return [=] {
      // k.transpose(1, 2).reshape(middle).transpose(1, 2).reshape(1, 6, 4, t): whisper's keys.
      GraphBuilder b;
      Value* k = b.Input("k", DType::kFloat, {1, Dim::Symbol("t"), 6, 4});
      Value* heads = b.Op("Transpose", {k}, {Attribute::Ints("perm", {0, 2, 1, 3})});
      Value* flat = b.Op("Reshape", {heads, b.Constant("m", Ints(middle))});
      Value* kt = b.Op("Transpose", {flat}, {Attribute::Ints("perm", {0, 2, 1})});
      Value* back = b.Op("Reshape", {kt, b.Constant("s", Ints({1, 6, 4, -1}))});
      b.Output(b.Op("Relu", {back}));
      return b.Build(17);
    };
  };
  cases.push_back({"TransposeThroughUnitReshape", "transpose_through_unit_reshape", bmm_keys({6, -1, 4}),
                   {{"Transpose", 1}, {"Reshape", 0}},
                   bmm_keys({3, -1, 4}),  // [1, 6, t, 4] -> [3, 2t, 4] mixes axes: not a unit reshape
                   {"compose_transposes", "compose_reshapes"}});
  cases.push_back({"FuseConvBn", "fuse_conv_bn", ConvThen(Bn), {{"BatchNormalization", 0}, {"Conv", 1}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {1, 3, 4, 4});
                     b.Output(Bn(b, b.Op("Relu", {x})));
                     return b.Build(13);
                   }});
  cases.push_back({"FuseConvAddBias", "fuse_conv_add_bias",
                   ConvThen([](GraphBuilder& b, Value* y) {
                     return b.Op("Add", {y, b.Constant("c", Floats({1.f, 2.f, 3.f}, {3, 1, 1}))});
                   }),
                   {{"Add", 0}, {"Conv", 1}},
                   ConvThen([](GraphBuilder& b, Value* y) {
                     return b.Op("Add", {y, b.Constant("c", Ramp({1, 1, 5, 5}))});
                   })});
  cases.push_back({"FuseConvMulScale", "fuse_conv_mul_scale",
                   ConvThen([](GraphBuilder& b, Value* y) {
                     return b.Op("Mul", {b.Constant("c", Floats({1.f, 2.f, 3.f}, {1, 3, 1, 1})), y});
                   }, false),
                   {{"Mul", 0}, {"Conv", 1}},
                   ConvThen([](GraphBuilder& b, Value* y) { return b.Op("Mul", {y, b.Op("Relu", {y})}); })});
  cases.push_back({"FuseMatMulAddIntoGemm", "fuse_matmul_add_into_gemm",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 4});
                     Value* y = b.Op("MatMul", {x, b.Constant("w", Ramp({4, 3}))});
                     b.Output(b.Op("Add", {y, b.Constant("c", Floats({1.f, 2.f, 3.f}, {3}))}));
                     return b.Build(13);
                   },
                   {{"Gemm", 1}, {"MatMul", 0}, {"Add", 0}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 5, 4});
                     Value* y = b.Op("MatMul", {x, b.Constant("w", Ramp({4, 3}))});
                     b.Output(b.Op("Add", {y, b.Constant("c", Floats({1.f, 2.f, 3.f}, {3}))}));
                     return b.Build(13);
                   }});
  cases.push_back({"FoldTransposeIntoGemm", "fold_transpose_into_gemm",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {4, 2});
                     Value* t = b.Op("Transpose", {x}, {Attribute::Ints("perm", {1, 0})});
                     b.Output(b.Op("Gemm", {t, b.Constant("w", Ramp({4, 3}))}));
                     return b.Build(13);
                   },
                   {{"Gemm", 1}, {"Transpose", 0}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 4});
                     b.Output(b.Op("Gemm", {b.Op("Relu", {x}), b.Constant("w", Ramp({4, 3}))}));
                     return b.Build(13);
                   }});
  cases.push_back({"FusePadIntoConv", "fuse_pad_into_conv",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {1, 2, 5, 5});
                     Value* p = b.Op("Pad", {x, b.Constant("p", Ints({0, 0, 1, 2, 0, 0, 1, 0}))});
                     b.Output(b.Op("Conv", {p, b.Constant("w", Ramp({3, 2, 3, 3}))}));
                     return b.Build(13);
                   },
                   {{"Pad", 0}, {"Conv", 1}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {1, 2, 5, 5});
                     Value* p = b.Op("Pad", {x, b.Constant("p", Ints({0, 0, 1, 2, 0, 0, 1, 0}))},
                                     {Attribute::String("mode", "reflect")});
                     b.Output(b.Op("Conv", {p, b.Constant("w", Ramp({3, 2, 3, 3}))}));
                     return b.Build(13);
                   }});
  cases.push_back({"DropDeadConvTaps", "drop_dead_conv_taps", DilatedConv({1, 3, 6, 6}, 8),
                   {{"Conv", 1}}, DilatedConv({1, 3, 6, 6}, 5)});
  // RepVGG's block: 3x3 + 1x1 + BN(x); the near miss dilates one 3x3 (the
  // same output size, other input positions).
  cases.push_back({"MergeParallelConvs", "merge_parallel_convs",
                   ParallelConvs({{3, {1, 1, 1, 1}}, {1, {0, 0, 0, 0}}, {0, {}, 1, true}}),
                   {{"Conv", 1}, {"Add", 0}, {"BatchNormalization", 0}},
                   ParallelConvs({{3, {2, 2, 2, 2}, 1, false, {1, 1}, {2, 2}}, {3, {1, 1, 1, 1}}})});
  cases.push_back({"FuseHardSwish", "fuse_hard_swish", HardSwishGraph(14),
                   {{"HardSwish", 1}, {"Clip", 0}, {"Div", 0}}, HardSwishGraph(14, 2.f)});
  auto x_hard_sigmoid = [](float alpha) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {2, 6});
      Value* hs = b.Op("HardSigmoid", {x}, {Attribute::Float("alpha", alpha), Attribute::Float("beta", 0.5f)});
      b.Output(b.Op("Mul", {hs, x}));
      return b.Build(14);
    };
  };
  cases.push_back({"FuseHardSigmoidIntoHardSwish", "fuse_hard_sigmoid_into_hard_swish", x_hard_sigmoid(1.0f / 6),
                   {{"HardSwish", 1}, {"HardSigmoid", 0}, {"Mul", 0}}, x_hard_sigmoid(0.2f)});
  auto x_sigmoid = [](bool same_input, int64_t opset) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {2, 6});
      Value* y = b.Input("y", DType::kFloat, {2, 6});
      b.Output(b.Op("Mul", {x, b.Op("Sigmoid", {same_input ? x : y})}));
      return b.Build(opset);
    };
  };
  auto einsum = [](const std::string& equation, std::vector<Dim> da, std::vector<Dim> db) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, da);
      Value* y = b.Input("y", DType::kFloat, db);
      b.Output(b.Op("Einsum", {x, y}, {Attribute::String("equation", equation)}));
      return b.Build(13);
    };
  };
  cases.push_back({"EinsumToMatMul", "einsum_to_matmul", einsum("bhqd,bhkd->bhqk", {1, 2, 16, 8}, {1, 2, 12, 8}),
                   {{"Einsum", 0}, {"MatMul", 1}, {"Transpose", 1}},
                   einsum("bij,bkj->bk", {2, 3, 4}, {2, 5, 4})});
  cases.push_back({"EinsumToMatMulOutputOrder", "einsum_to_matmul", einsum("ij,jk->ki", {12, 16}, {16, 20}),
                   {{"Einsum", 0}, {"MatMul", 1}, {"Transpose", 1}}, einsum("ii,ij->ij", {3, 3}, {3, 4})});
  // Funnel Transformer's attention: two row letters (b, i), a symbolic batch
  // letter shared by both operands; then two column letters (n, h) of a
  // weight. Near miss: batch dims that are different symbols (one may be 1
  // where MatMul would broadcast and Einsum would not).
  cases.push_back({"EinsumToMatMulExtraRowLetters", "einsum_to_matmul",
                   einsum("binh,tnh->bnit", {2, 5, 3, 4}, {6, 3, 4}),
                   {{"Einsum", 0}, {"MatMul", 1}, {"Unsqueeze", 1}},
                   einsum("bind,bjnd->bnij", {Dim::Symbol("b"), 5, 3, 4}, {Dim::Symbol("c"), 6, 3, 4})});
  cases.push_back({"EinsumToMatMulExtraColumnLetters", "einsum_to_matmul", einsum("td,dnh->tnh", {7, 8}, {8, 3, 4}),
                   {{"Einsum", 0}, {"MatMul", 1}, {"Unsqueeze", 1}}, einsum("td,dnh->th", {7, 8}, {8, 3, 4})});
  cases.push_back({"EinsumToMatMulSymbolicBatch", "einsum_to_matmul",
                   einsum("bind,bjnd->bnij", {Dim::Symbol("b"), 5, 3, 4}, {Dim::Symbol("b"), 6, 3, 4}),
                   {{"Einsum", 0}, {"MatMul", 1}}, nullptr});
  // MaxViT's attention spells its labels as spaced capitals; XLNet's output
  // projection contracts two letters (heads and their width), of known
  // sizes (near miss: symbolic ones); XLNet's one-operand "ijbn->bnij" is a
  // Transpose, "ijk->ki" a ReduceSum too (near miss: a diagonal).
  cases.push_back({"EinsumToMatMulCapitalsAndSpaces", "einsum_to_matmul",
                   einsum("B G H I D, B G H J D -> B G H I J", {1, 2, 3, 5, 4}, {1, 2, 3, 6, 4}),
                   {{"Einsum", 0}, {"MatMul", 1}}, einsum("Ab,Ab->Ab", {3, 4}, {3, 4})});
  cases.push_back({"EinsumToMatMulSeveralContracted", "einsum_to_matmul",
                   einsum("ibnd,hnd->ibh", {5, 2, 3, 4}, {6, 3, 4}), {{"Einsum", 0}, {"MatMul", 1}, {"Reshape", 2}},
                   einsum("ibnd,hnd->ibh", {5, 2, Dim::Symbol("n"), 4}, {6, Dim::Symbol("n"), 4})});
  auto einsum1 = [](const std::string& equation, std::vector<Dim> da) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, da);
      b.Output(b.Op("Einsum", {x}, {Attribute::String("equation", equation)}));
      return b.Build(13);
    };
  };
  cases.push_back({"EinsumOneOperandTranspose", "einsum_to_matmul", einsum1("ijbn->bnij", {2, 3, 4, 5}),
                   {{"Einsum", 0}, {"Transpose", 1}}, einsum1("ii->i", {3, 3})});
  cases.push_back({"EinsumOneOperandSum", "einsum_to_matmul", einsum1("ijk->ki", {2, 3, 4}),
                   {{"Einsum", 0}, {"ReduceSum", 1}, {"Transpose", 1}}, einsum1("ij...->ij", {2, 3, 4})});
  cases.push_back({"FuseSwish", "fuse_swish", x_sigmoid(true, 24), {{"Swish", 1}, {"Sigmoid", 0}, {"Mul", 0}},
                   x_sigmoid(false, 24)});
  // silu(gate) * up -> SwiGLU; the near miss broadcasts up over the rows.
  auto swiglu = [](std::vector<Dim> up_dims) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* gate = b.Input("gate", DType::kFloat, {2, 6});
      Value* up = b.Input("up", DType::kFloat, up_dims);
      b.Output(b.Op("Mul", {b.Op("Mul", {gate, b.Op("Sigmoid", {gate})}), up}));
      return b.Build(28);
    };
  };
  cases.push_back({"FuseSwiGlu", "fuse_swiglu", swiglu({2, 6}), {{"SwiGLU", 1}, {"Sigmoid", 0}, {"Mul", 0}},
                   swiglu({1, 6}), {"fuse_swish"}});
  cases.push_back({"FuseHardSigmoidMul", "fuse_hard_sigmoid_mul", HardSwishGraph(9),
                   {{"HardSigmoid", 1}, {"Mul", 1}, {"Clip", 0}, {"Div", 0}}, HardSwishGraph(14)});
  auto padded_pool = [](int64_t pool_pad, bool count_include_pad, bool ceil_mode) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {1, 2, 5, 5});
      Value* p = b.Op("Pad", {x, b.Constant("p", Ints({0, 0, 1, 1, 0, 0, 1, 1}))});
      std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {3, 3})};
      if (pool_pad > 0) attrs.push_back(Attribute::Ints("pads", {pool_pad, pool_pad, pool_pad, pool_pad}));
      if (count_include_pad) attrs.push_back(Attribute::Int("count_include_pad", 1));
      if (ceil_mode) {
        attrs.push_back(Attribute::Int("ceil_mode", 1));
        attrs.push_back(Attribute::Ints("strides", {2, 2}));
      }
      b.Output(b.Op("AveragePool", {p}, attrs));
      return b.Build(13);
    };
  };
  cases.push_back({"FusePadIntoPool", "fuse_pad_into_pool", padded_pool(0, false, false),
                   {{"Pad", 0}, {"AveragePool", 1}}, padded_pool(1, false, false)});
  // Pads reaching the kernel size (ONNX Runtime refuses such a pool), and
  // ceil_mode (a window starting in the pool's own end padding is dropped).
  cases.push_back({"FusePadIntoPoolReachingTheKernel", "fuse_pad_into_pool", padded_pool(1, true, false),
                   {{"Pad", 0}, {"AveragePool", 1}}, padded_pool(2, true, false)});
  cases.push_back({"FusePadIntoPoolCeilMode", "fuse_pad_into_pool", padded_pool(0, false, false),
                   {{"Pad", 0}, {"AveragePool", 1}}, padded_pool(0, false, true)});
  // A pointwise conv followed by average pooling; the near misses: a 3x3
  // conv, a padded pool, the conv read by a second consumer.
  auto conv_then_pool = [](const char* pool, int64_t k, int64_t pool_pad, bool second_use) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {1, 4, 6, 6});
      std::vector<Attribute> conv_attrs;
      if (k > 1) conv_attrs.push_back(Attribute::Ints("pads", {1, 1, 1, 1}));
      Value* c = b.Op("Conv", {x, b.Constant("w", Ramp({3, 4, k, k})), b.Constant("b", Floats({0.5f, -1, 2}, {3}))},
                      conv_attrs);
      std::vector<Attribute> pool_attrs;
      if (std::string(pool) == "AveragePool") {
        pool_attrs = {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})};
        if (pool_pad > 0) pool_attrs.push_back(Attribute::Ints("pads", {pool_pad, pool_pad, pool_pad, pool_pad}));
      }
      b.Output(b.Op(pool, {c}, pool_attrs));
      if (second_use) b.Output(b.Op("Relu", {c}));
      return b.Build(13);
    };
  };
  cases.push_back({"PoolBeforePointwiseConv", "pool_before_pointwise_conv", conv_then_pool("AveragePool", 1, 0, false),
                   {{"AveragePool", 1}, {"Conv", 1}}, conv_then_pool("AveragePool", 3, 0, false)});
  cases.push_back({"PoolBeforePointwiseConvPadded", "pool_before_pointwise_conv",
                   conv_then_pool("AveragePool", 1, 0, false), {{"AveragePool", 1}, {"Conv", 1}},
                   conv_then_pool("AveragePool", 1, 1, false)});
  cases.push_back({"GlobalPoolBeforePointwiseConv", "global_pool_before_pointwise_conv",
                   conv_then_pool("GlobalAveragePool", 1, 0, false), {{"GlobalAveragePool", 1}, {"Conv", 1}},
                   conv_then_pool("GlobalAveragePool", 1, 0, true)});
  auto gemm_bn = [](bool trans_b, bool relu_between) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {2, 4});
      Value* y = b.Op("Gemm", {x, b.Constant("w", Ramp(trans_b ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{4, 3})),
                              b.Constant("c", Floats({1, 2, 3}, {3}))},
                      {Attribute::Int("transB", trans_b ? 1 : 0), Attribute::Float("beta", 0.5f)});
      if (relu_between) y = b.Op("Relu", {y});
      b.Output(Bn(b, y));
      return b.Build(13);
    };
  };
  cases.push_back({"FuseBnIntoGemm", "fuse_bn_into_gemm", gemm_bn(false, false),
                   {{"Gemm", 1}, {"BatchNormalization", 0}}, gemm_bn(false, true)});
  cases.push_back({"FuseBnIntoGemmTransB", "fuse_bn_into_gemm", gemm_bn(true, false),
                   {{"Gemm", 1}, {"BatchNormalization", 0}}, nullptr});
  auto layer_norm = [](bool square_with_pow, bool by_reciprocal = false) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 8});
      std::vector<Attribute> axes = {Attribute::Ints("axes", {-1})};
      Value* d = b.Op("Sub", {x, b.Op("ReduceMean", {x}, axes)});
      Value* sq = square_with_pow ? b.Op("Pow", {d, b.Constant("two", Tensor::Scalar<float>(2.f))})
                                  : b.Op("Mul", {d, b.Op("Relu", {d})});
      Value* var = b.Op("ReduceMean", {sq}, axes);
      Value* den = b.Op("Sqrt", {b.Op("Add", {var, b.Constant("eps", Tensor::Scalar<float>(1e-5f))})});
      b.Output(by_reciprocal ? b.Op("Mul", {b.Op("Reciprocal", {den}), d}) : b.Op("Div", {d, den}));
      return b.Build(17);
    };
  };
  cases.push_back({"FuseLayerNorm", "fuse_layer_norm", layer_norm(true),
                   {{"LayerNormalization", 1}, {"ReduceMean", 0}, {"Div", 0}}, layer_norm(false)});
  cases.push_back({"FuseLayerNormByReciprocal", "fuse_layer_norm_by_reciprocal", layer_norm(true, true),
                   {{"LayerNormalization", 1}, {"ReduceMean", 0}, {"Reciprocal", 0}}, layer_norm(false, true)});
  // RMSNorm as torch writes it: x * rsqrt(mean(x^2) + eps), or x / sqrt(...).
  // Near miss: the mean of squares of another tensor than the numerator.
  auto rms_norm = [](bool by_reciprocal, bool same_x, bool eps_broadcasts = false) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 8});
      Value* other = same_x ? x : b.Op("Relu", {x});
      Value* sq = b.Op("Pow", {other, b.Constant("two", Tensor::Scalar<float>(2.f))});
      Value* ms = b.Op("ReduceMean", {sq, b.Constant("axes", Ints({-1}))});
      // One eps element, but of rank 3: the result is [1, n, 8], not x's shape.
      Tensor eps = eps_broadcasts ? Floats({1e-6f}, {1, 1, 1}) : Tensor::Scalar<float>(1e-6f);
      Value* den = b.Op("Sqrt", {b.Op("Add", {ms, b.Constant("eps", eps)})});
      b.Output(by_reciprocal ? b.Op("Mul", {x, b.Op("Reciprocal", {den})}) : b.Op("Div", {x, den}));
      return b.Build(23);
    };
  };
  cases.push_back({"FuseRmsNorm", "fuse_rms_norm", rms_norm(false, true),
                   {{"RMSNormalization", 1}, {"ReduceMean", 0}, {"Div", 0}}, rms_norm(false, false)});
  cases.push_back({"FuseRmsNormEpsBroadcasting", "fuse_rms_norm", rms_norm(false, true),
                   {{"RMSNormalization", 1}}, rms_norm(false, true, true)});
  cases.push_back({"FuseRmsNormByReciprocal", "fuse_rms_norm", rms_norm(true, true),
                   {{"RMSNormalization", 1}, {"ReduceMean", 0}, {"Reciprocal", 0}}, rms_norm(true, false)});
  // GroupNorm as torch exports it before opset 18: x viewed as [N, G, -1],
  // InstanceNormalization with one scale and bias per group, viewed back by
  // x's own Shape. Near miss: a view whose rows are not per sample ([1, 6, -1]
  // over a batch of 2: instance norm over channels of both samples at once).
  auto torch_group_norm = [](std::vector<int64_t> view, int64_t rows) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {2, 6, 3, 3});
      Value* grouped = b.Op("Reshape", {x, b.Constant("view", Ints(view))});
      Value* in = b.Op("InstanceNormalization",
                       {grouped, b.Constant("s", Ramp({rows}, 0.3f, 1.f)), b.Constant("b", Ramp({rows}, 0.2f))},
                       {Attribute::Float("epsilon", 1e-5f)});
      b.Output(b.Op("Reshape", {in, b.Op("Shape", {x})}));
      return b.Build(21);
    };
  };
  cases.push_back({"FuseGroupNorm", "fuse_group_norm", torch_group_norm({0, 3, -1}, 3),
                   {{"GroupNormalization", 1}, {"InstanceNormalization", 0}, {"Reshape", 0}},
                   torch_group_norm({1, 6, -1}, 6), {"fold_constants"}});
  // Near miss: a per-column operand ([1, 1, 3] over [2, 6, 3, 3]).
  auto affine_group_norm = [](std::vector<int64_t> k_dims) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {2, 6, 3, 3});
      Value* gn = b.Op("GroupNormalization",
                       {x, b.Constant("s", Ramp({6}, 0.3f, 1.f)), b.Constant("b", Ramp({6}, 0.2f))},
                       {Attribute::Int("num_groups", 3)});
      Value* m = b.Op("Mul", {b.Constant("k", Ramp(k_dims, 0.5f, 1.f)), gn});
      b.Output(b.Op("Add", {m, b.Constant("c", Ramp(k_dims, 0.1f))}));
      return b.Build(21);
    };
  };
  cases.push_back({"FoldAffineIntoGroupNorm", "fold_affine_into_group_norm", affine_group_norm({6, 1, 1}),
                   {{"GroupNormalization", 1}, {"Mul", 0}, {"Add", 0}}, affine_group_norm({1, 1, 3})});
  auto scaled_rms = [](std::vector<int64_t> g_dims) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {2, 4});
      Value* rms = b.Op("RMSNormalization", {x, b.Constant("s", Floats({1, 1, 1, 1}, {4}))});
      b.Output(b.Op("Mul", {rms, b.Constant("g", Ramp(g_dims, 0.3f, 1.f))}));
      return b.Build(23);
    };
  };
  cases.push_back({"FoldScaleIntoRmsNorm", "fold_scale_into_rms_norm", scaled_rms({4}),
                   {{"RMSNormalization", 1}, {"Mul", 0}}, scaled_rms({2, 1})});
  cases.push_back({"FoldAffineIntoLayerNorm", "fold_affine_into_layer_norm",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 4});
                     Value* ln = b.Op("LayerNormalization",
                                      {x, b.Constant("s", Floats({1, 1, 1, 1}, {4})), b.Constant("b", Floats({0, 0, 0, 0}, {4}))});
                     Value* m = b.Op("Mul", {ln, b.Constant("g", Floats({1, 2, 3, 4}, {4}))});
                     b.Output(b.Op("Add", {m, b.Constant("c", Floats({.5f, .5f, 1, 1}, {4}))}));
                     return b.Build(17);
                   },
                   {{"LayerNormalization", 1}, {"Mul", 0}, {"Add", 0}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 4});
                     Value* ln = b.Op("LayerNormalization",
                                      {x, b.Constant("s", Floats({1, 1, 1, 1}, {4})), b.Constant("b", Floats({0, 0, 0, 0}, {4}))});
                     b.Output(b.Op("Mul", {ln, b.Constant("g", Floats({1, 2}, {2, 1}))}));
                     return b.Build(17);
                   }});
  // A scalar (rank 0) factor folds too; over a normalized dim of 1 it once read dim -1 of the scalar.
  auto ln_times_scalar = [](int64_t width) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {3, width});
      Value* ln = b.Op("LayerNormalization", {x, b.Constant("s", Floats(std::vector<float>(width, 1.5f), {width})),
                                              b.Constant("b", Floats(std::vector<float>(width, 0.25f), {width}))});
      b.Output(b.Op("Mul", {b.Constant("k", Tensor::Scalar<float>(-2.f)), ln}));
      return b.Build(17);
    };
  };
  cases.push_back({"FoldScalarIntoLayerNorm", "fold_affine_into_layer_norm", ln_times_scalar(4),
                   {{"LayerNormalization", 1}, {"Mul", 0}}, nullptr});
  cases.push_back({"FoldScalarIntoLayerNormOverOneElement", "fold_affine_into_layer_norm", ln_times_scalar(1),
                   {{"LayerNormalization", 1}, {"Mul", 0}}, nullptr});
  cases.push_back({"RemoveDoubleRelu", "remove_double_relu", Unary("Relu", {}), {{"Relu", 1}},
                   Unary("Sigmoid", {})});
  cases.push_back({"FuseReluIntoClip", "fuse_relu_into_clip",
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     b.Output(b.Op("Clip", {b.Op("Relu", {x}), b.Constant("lo", Tensor::Scalar<float>(0.f)),
                                            b.Constant("hi", Tensor::Scalar<float>(6.f))}));
                     return b.Build(13);
                   },
                   {{"Relu", 0}, {"Clip", 1}},
                   [] {
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3});
                     b.Output(b.Op("Clip", {b.Op("Relu", {x}), b.Constant("lo", Tensor::Scalar<float>(-1.f)),
                                            b.Constant("hi", Tensor::Scalar<float>(6.f))}));
                     return b.Build(13);
                   }});
  // Relu -> QuantizeLinear at the type's lowest zero point (uint8 0, int8
  // -128 per channel, an absent one): the Relu goes; at zero point 3 it stays.
  auto relu_then_quantize = [](int uint8_zero) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {2, 3, 4});
      Value* r = b.Op("Relu", {x});
      Tensor zu(DType::kUint8, {});
      zu.mutable_data<uint8_t>()[0] = static_cast<uint8_t>(uint8_zero);
      Value* qu = b.Op("QuantizeLinear", {r, b.Constant("s", Tensor::Scalar<float>(0.037f)), b.Constant("zu", zu)});
      b.Output(b.Op("DequantizeLinear", {qu, b.Constant("s2", Tensor::Scalar<float>(0.037f)), b.Constant("zu2", zu)}));
      if (uint8_zero == 0) {
        Tensor zs(DType::kInt8, {3});
        for (int c = 0; c < 3; ++c) zs.mutable_data<int8_t>()[c] = -128;
        Value* scales = b.Constant("sc", Tensor::FromVector<float>({0.02f, 0.05f, 0.011f}, {3}));
        Value* qs = b.Op("QuantizeLinear", {b.Op("Relu", {b.Op("Neg", {x})}), scales, b.Constant("zs", zs)},
                         {Attribute::Int("axis", 1)});
        b.Output(b.Op("DequantizeLinear", {qs, b.Constant("sc2", Tensor::FromVector<float>({0.02f, 0.05f, 0.011f}, {3})),
                                           b.Constant("zs2", zs)},
                      {Attribute::Int("axis", 1)}));
        Value* qn = b.Op("QuantizeLinear", {b.Op("Relu", {b.Op("Sin", {x})}), b.Constant("s3", Tensor::Scalar<float>(0.01f))});
        b.Output(b.Op("DequantizeLinear", {qn, b.Constant("s4", Tensor::Scalar<float>(0.01f))}));
      }
      return b.Build(13);
    };
  };
  cases.push_back({"DropReluBeforeQuantizeAtMin", "drop_relu_before_quantize_at_min", relu_then_quantize(0),
                   {{"Relu", 0}, {"QuantizeLinear", 3}}, relu_then_quantize(3)});
  // quantize_static's DQ -> Transpose -> Q and DQ -> Reshape -> Q with one
  // quantization: the integers move; a second Q at another scale is kept.
  auto qdq_movers = [](float second_scale) -> ModelFn {
    return [=] {
      GraphBuilder b;
      Value* x = b.Input("x", DType::kFloat, {2, 3, 4});
      Value* s = b.Constant("s", Tensor::Scalar<float>(0.037f));
      Tensor z(DType::kUint8, {});
      z.mutable_data<uint8_t>()[0] = 121;
      Value* zp = b.Constant("z", z);
      Value* s2 = b.Constant("s2", Tensor::Scalar<float>(second_scale));
      Value* q = b.Op("QuantizeLinear", {x, s, zp});
      Value* t = b.Op("Transpose", {b.Op("DequantizeLinear", {q, s, zp})}, {Attribute::Ints("perm", {2, 0, 1})});
      Value* tq = b.Op("QuantizeLinear", {t, s, zp});
      Value* r = b.Op("Reshape", {b.Op("DequantizeLinear", {tq, s, zp}), b.Constant("shape", Ints({4, 6}))});
      b.Output(b.Op("DequantizeLinear", {b.Op("QuantizeLinear", {r, s2, zp}), s2, zp}));
      return b.Build(13);
    };
  };
  cases.push_back({"DropQdqAroundDataMovement", "drop_qdq_around_data_movement", qdq_movers(0.037f),
                   {{"Transpose", 1}, {"Reshape", 1}, {"QuantizeLinear", 1}, {"DequantizeLinear", 1}},
                   [=] {
                     // Each Q quantizes differently from the DQ before its mover.
                     GraphBuilder b;
                     Value* x = b.Input("x", DType::kFloat, {2, 3, 4});
                     Value* s = b.Constant("s", Tensor::Scalar<float>(0.037f));
                     Value* s2 = b.Constant("s2", Tensor::Scalar<float>(0.05f));
                     Tensor z(DType::kUint8, {});
                     z.mutable_data<uint8_t>()[0] = 121;
                     Value* zp = b.Constant("z", z);
                     Value* q = b.Op("QuantizeLinear", {x, s, zp});
                     Value* t = b.Op("Transpose", {b.Op("DequantizeLinear", {q, s, zp})},
                                     {Attribute::Ints("perm", {2, 0, 1})});
                     b.Output(b.Op("DequantizeLinear", {b.Op("QuantizeLinear", {t, s2, zp}), s2, zp}));
                     return b.Build(13);
                   }});
  return cases;
}

class RuleTest : public ::testing::TestWithParam<RuleCase> {};

const Rule* FindRule(const std::string& name) {
  for (const Rule& r : AllRules()) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

TEST_P(RuleTest, FiresAndKeepsOutputs) {
  const RuleCase& c = GetParam();
  const Rule* rule = FindRule(c.rule);
  ASSERT_NE(rule, nullptr) << c.rule;
  auto r = OptimizeWith(c.fires, c.rule, c.extra);
  ASSERT_NE(r.model, nullptr);
  EXPECT_GT(r.stats.rule_counts[c.rule], 0) << c.rule << " did not fire";
  auto counts = OpCounts(*r.model->graph);
  for (const auto& [op, n] : c.expect) EXPECT_EQ(counts[op], n) << op;
  bool exact = rule->exactness == Exactness::kExact;
  double diff = MaxOutputDiff(c.fires, *r.model, exact);
  EXPECT_LE(diff, exact ? 0.0 : 1e-4);
}

TEST_P(RuleTest, SecondRunChangesNothing) {
  const RuleCase& c = GetParam();
  auto r = OptimizeWith(c.fires, c.rule, c.extra);
  ASSERT_NE(r.model, nullptr);
  auto before = OpCounts(*r.model->graph);
  std::set<std::string> only = c.extra;
  only.insert(c.rule);
  auto again = testing::OptimizeModel(std::move(r.model), only);
  EXPECT_EQ(again.stats.rule_counts.count(c.rule), 0u);
  EXPECT_EQ(OpCounts(*again.model->graph), before);
}

TEST_P(RuleTest, GuardDeclines) {
  const RuleCase& c = GetParam();
  if (!c.declines) GTEST_SKIP() << "no near miss for " << c.rule;
  auto r = OptimizeWith(c.declines, c.rule, c.extra);
  ASSERT_NE(r.model, nullptr);
  EXPECT_EQ(r.stats.rule_counts.count(c.rule), 0u);
  auto original = c.declines();
  EXPECT_LE(MaxOutputDiff(c.declines, *r.model, true), 0.0);
}

INSTANTIATE_TEST_SUITE_P(Rules, RuleTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<RuleCase>& info) { return info.param.name; });

ModelFn TwoMatMuls(int64_t m, int64_t h, int64_t n) {
  return [=] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {3, m});
    Value* y = b.Op("MatMul", {x, b.Constant("a", Ramp({m, h}))});
    b.Output(b.Op("MatMul", {y, b.Constant("b", Ramp({h, n}, 0.05f))}));
    return b.Build(13);
  };
}

// After pool_before_pointwise_conv the pool reads the input and the conv the
// pooled positions: a quarter of the multiply-adds for a 2x2 stride-2 pool.
TEST(PoolBeforePointwiseConvTest, TheConvReadsThePooledPositions) {
  ModelFn build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, 8, 8, 8});
    Value* c = b.Op("Conv", {x, b.Constant("w", Ramp({16, 8, 1, 1})), b.Constant("b", Ramp({16}, 0.3f))});
    b.Output(b.Op("AveragePool", {c}, {Attribute::Ints("kernel_shape", {2, 2}), Attribute::Ints("strides", {2, 2})}));
    return b.Build(13);
  };
  auto r = OptimizeWith(build, "pool_before_pointwise_conv", {});
  ASSERT_NE(r.model, nullptr);
  const Graph& g = *r.model->graph;
  ASSERT_EQ(g.nodes().size(), 2u);
  EXPECT_EQ(g.nodes()[0]->op_type, "AveragePool");
  EXPECT_EQ(g.nodes()[0]->input(0), g.inputs()[0]);
  EXPECT_EQ(g.nodes()[1]->op_type, "Conv");
  EXPECT_EQ(g.nodes()[1]->input(0), g.nodes()[0]->output(0));
  EXPECT_LE(MaxOutputDiff(build, *r.model, false), 1e-5);
}

TEST(MergeLinearOpsTest, MergesWhenItPaysAtO3) {
  ModelFn build = TwoMatMuls(4, 8, 4);  // h=8 > 16/8
  auto r = OptimizeWith(build, "merge_linear_ops", {}, /*level=*/3);
  EXPECT_EQ(r.stats.rule_counts["merge_linear_ops"], 1);
  EXPECT_EQ(OpCounts(*r.model->graph)["MatMul"], 1);
  EXPECT_LE(MaxOutputDiff(build, *r.model, false), 1e-5);
  auto again = OptimizeModel(std::move(r.model), {"merge_linear_ops"}, 3);
  EXPECT_TRUE(again.stats.rule_counts.empty());
}

TEST(MergeLinearOpsTest, DeclinesWhenItDoesNotPayOrBelowO3) {
  auto r = OptimizeWith(TwoMatMuls(8, 2, 8), "merge_linear_ops", {}, 3);  // h=2 < 64/16
  EXPECT_EQ(OpCounts(*r.model->graph)["MatMul"], 2);
  auto r2 = OptimizeWith(TwoMatMuls(4, 8, 4), "merge_linear_ops", {}, 2);
  EXPECT_EQ(OpCounts(*r2.model->graph)["MatMul"], 2);
}

TEST(FuseLinearReluTest, OnlyForTheAicTarget) {
  auto build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {2, 4});
    b.Output(b.Op("Relu", {b.Op("Gemm", {x, b.Constant("w", Ramp({4, 3})), b.Constant("c", Ramp({3}))})}));
    return b.Build(13);
  };
  auto standard = OptimizeWith(build, "");
  EXPECT_EQ(OpCounts(*standard.model->graph)["FusedLinearReLU"], 0);
  auto m = build();
  OptimizeOptions o;
  o.aic_ops = AllAicOps();
  ASSERT_TRUE(Optimize(*m, o).ok());
  ASSERT_EQ(m->graph->num_nodes(), 1u);
  EXPECT_EQ(m->graph->nodes()[0]->op_type, "FusedLinearReLU");
  EXPECT_EQ(m->graph->nodes()[0]->domain, "ai.aic");
  EXPECT_EQ(m->OpsetFor("ai.aic"), 1);
}

// drop_dead_conv_taps keeps the taps that reach the input on some output
// position, moves the leading pads by the dropped taps, keeps the output
// size, and drops the dilation of an axis left with one tap; the outputs
// stay the reference's.
TEST(DropDeadConvTapsTest, CropsToTheTapsThatReadTheInput) {
  struct Case {
    std::vector<Dim> in;
    int64_t dilation;
    std::vector<int64_t> strides, pads;
    std::vector<int64_t> kernel, new_pads, new_dilations;  // expected; empty kernel: declines
  };
  const std::vector<Case> cases = {
      {{1, 3, 6, 6}, 8, {1, 1}, {}, {1, 1}, {0, 0, 0, 0}, {1, 1}},             // ASPP: pointwise
      {{1, 3, 6, 20}, 8, {1, 1}, {}, {1, 3}, {0, 8, 0, 8}, {1, 8}},           // only the rows' outer taps
      {{1, 2, 7, 7}, 6, {1, 1}, {7, 7, 5, 5}, {2, 2}, {1, 1, 5, 5}, {6, 6}},  // leading taps only: 2x2 kept
      {{1, 2, 9, 9}, 10, {2, 2}, {}, {1, 1}, {0, 0, 0, 0}, {1, 1}},           // strided
      {{1, 2, 9, 9}, 4, {1, 1}, {}, {}, {}, {}},                              // every tap reads
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("input ", c.in[2].value(), "x", c.in[3].value(), " dilation ", c.dilation));
    ModelFn build = DilatedConv(c.in, c.dilation, c.strides, c.pads);
    auto r = OptimizeWith(build, "drop_dead_conv_taps");
    ASSERT_NE(r.model, nullptr);
    const Node* conv = nullptr;
    for (const auto& n : r.model->graph->nodes()) {
      if (n->op_type == "Conv") conv = n.get();
    }
    ASSERT_NE(conv, nullptr);
    if (c.kernel.empty()) {
      EXPECT_EQ(r.stats.rule_counts.count("drop_dead_conv_taps"), 0u);
    } else {
      EXPECT_EQ(conv->GetInts("kernel_shape"), c.kernel);
      EXPECT_EQ(conv->GetInts("pads"), c.new_pads);
      EXPECT_EQ(conv->GetInts("dilations"), c.new_dilations);
      EXPECT_EQ(conv->input(1)->initializer()->dim(2), c.kernel[0]);
    }
    EXPECT_LE(MaxOutputDiff(build, *r.model, false), 1e-4);
  }
}

// A dropped tap whose weight is not finite multiplied zeros into NaN: kept.
TEST(DropDeadConvTapsTest, KeepsTapsWithNonFiniteWeights) {
  ModelFn build = [] {
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, {1, 1, 4, 4});
    Tensor w = Ramp({1, 1, 3, 3});
    w.mutable_data<float>()[0] = std::numeric_limits<float>::infinity();
    b.Output(b.Op("Conv", {x, b.Constant("w", w)},
                  {Attribute::Ints("dilations", {6, 6}), Attribute::Ints("pads", {6, 6, 6, 6})}));
    return b.Build(13);
  };
  auto r = OptimizeWith(build, "drop_dead_conv_taps");
  ASSERT_NE(r.model, nullptr);
  EXPECT_EQ(r.stats.rule_counts.count("drop_dead_conv_taps"), 0u);
}

// merge_parallel_convs: every branch of a block folded into one conv of the
// largest window (a 1x1 or the input itself where the pads put it, grouped
// and depthwise branches, BN(x) as scale and shift, asymmetric pads, half
// weights), the outputs the reference's; branches that slide other windows
// (dilation, pads that put the small kernel elsewhere) or hold a non-finite
// weight stay apart.
TEST(MergeParallelConvsTest, FoldsEveryBranchOfABlock) {
  struct Case {
    std::string name;
    ModelFn build;
    int convs_after;  // -1: declines
  };
  const std::vector<Case> cases = {
      {"RepVGG 3x3 + 1x1 + x", ParallelConvs({{3, {1, 1, 1, 1}}, {1, {0, 0, 0, 0}}, {0, {}}}), 1},
      {"MobileOne: three depthwise 3x3, a depthwise 1x1, BN(x)",
       ParallelConvs({{3, {1, 1, 1, 1}, 4}, {3, {1, 1, 1, 1}, 4}, {3, {1, 1, 1, 1}, 4}, {1, {0, 0, 0, 0}, 4},
                      {0, {}, 4, true}}),
       1},
      {"grouped 3x3 + x", ParallelConvs({{3, {1, 1, 1, 1}, 2}, {0, {}, 2}}), 1},
      {"1x1 at the last tap (pads 2, 0)", ParallelConvs({{3, {2, 2, 0, 0}}, {1, {0, 0, 0, 0}}}), 1},
      {"5x5 + 3x3 + 1x1", ParallelConvs({{5, {2, 2, 2, 2}}, {3, {1, 1, 1, 1}}, {1, {0, 0, 0, 0}}}), 1},
      {"half weights", ParallelConvs({{3, {1, 1, 1, 1}}, {1, {0, 0, 0, 0}}, {0, {}, 1, true}}, 4, DType::kFloat16), 1},
      {"stride 2: 3x3 pads 1 + 1x1 at its centre",
       ParallelConvs({{3, {1, 1, 1, 1}, 1, false, {2, 2}}, {1, {0, 0, 0, 0}, 1, false, {2, 2}}}), 1},
      {"a dilated 3x3 beside an undilated one",
       ParallelConvs({{3, {2, 2, 2, 2}, 1, false, {1, 1}, {2, 2}}, {3, {1, 1, 1, 1}}}), -1},
      {"two 3x3 windows a row and a column apart (pads 1 against 0 then 2)",
       ParallelConvs({{3, {1, 1, 1, 1}}, {3, {0, 0, 2, 2}}}), -1},
      {"an infinite weight", ParallelConvs({{3, {1, 1, 1, 1}}, {1, {0, 0, 0, 0}}}, 4, DType::kFloat, 1e30f * 1e30f),
       -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto r = OptimizeWith(c.build, "merge_parallel_convs");
    ASSERT_NE(r.model, nullptr);
    if (c.convs_after < 0) {
      EXPECT_EQ(r.stats.rule_counts.count("merge_parallel_convs"), 0u);
      continue;
    }
    auto counts = OpCounts(*r.model->graph);
    EXPECT_EQ(counts["Conv"], c.convs_after);
    EXPECT_EQ(counts["Add"], 0);
    EXPECT_LE(MaxOutputDiff(c.build, *r.model, false), c.name == "half weights" ? 2e-2 : 1e-4);
  }
}

TEST(RuleTableTest, EveryRuleHasAPatternAndAClass) {
  for (const Rule& r : AllRules()) {
    EXPECT_NE(std::string(r.rewrite).find("->"), std::string::npos) << r.name;
    EXPECT_GE(r.min_opset, 1) << r.name;
  }
}

}  // namespace
}  // namespace aic::rewrite
