// No slow path unknowingly (issue #12): small models of every op family the
// CPU backend lowers, at the geometries exported models use (dilated,
// grouped, depthwise, strided, asymmetric and 1-D/3-D convolutions, pooling
// on plain NCHW inputs, broadcasts in blocked layouts, softmax and
// reductions on inner and outer axes, ...). Each must compile to steps that
// are neither the reference interpreter nor one of oneDNN's reference or
// naive-loop implementations (PlanStats::slow_impl_steps), and agree with
// the reference executor.
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exec/cpu/kernels/unary_avx512.h"
#include "exec/cpu/kernels/vector_math_avx512.h"
#include "graph/builder.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

using Dims = std::vector<int64_t>;

struct Family {
  std::string name;
  Dims input;
  int opset;
  std::function<Value*(GraphBuilder&, Value*)> body;
};

Value* Weight(GraphBuilder& b, const std::string& name, const Dims& dims, uint32_t seed) {
  return b.Constant(name, RandomF32(dims, seed, -0.2f, 0.2f));
}

Value* ConvOf(GraphBuilder& b, Value* x, int64_t cin, int64_t cout, Dims kernel, std::vector<Attribute> attrs,
              int64_t groups = 1) {
  Dims w = {cout, cin / groups};
  w.insert(w.end(), kernel.begin(), kernel.end());
  attrs.push_back(Attribute::Int("group", groups));
  return b.Op("Conv", {x, Weight(b, "w", w, 1), Weight(b, "bias", {cout}, 2)}, attrs);
}

Tensor Ints64(const Dims& v) { return Tensor::FromVector<int64_t>(v, {static_cast<int64_t>(v.size())}); }

std::vector<Family> Families() {
  auto conv = [](Dims k, std::vector<Attribute> a, int64_t groups = 1, int64_t cin = 16, int64_t cout = 16) {
    return [=](GraphBuilder& b, Value* x) { return ConvOf(b, x, cin, cout, k, a, groups); };
  };
  auto ints = [](const char* n, Dims v) { return Attribute::Ints(n, std::move(v)); };
  return {
      {"Conv 3x3", {1, 16, 20, 20}, 13, conv({3, 3}, {ints("pads", {1, 1, 1, 1})})},
      {"Conv 1x1", {1, 16, 20, 20}, 13, conv({1, 1}, {})},
      {"Conv 3x3 stride 2", {1, 16, 20, 20}, 13, conv({3, 3}, {ints("pads", {1, 1, 1, 1}), ints("strides", {2, 2})})},
      {"Conv depthwise", {1, 16, 20, 20}, 13, conv({3, 3}, {ints("pads", {1, 1, 1, 1})}, 16)},
      {"Conv grouped", {1, 16, 20, 20}, 13, conv({3, 3}, {ints("pads", {1, 1, 1, 1})}, 4)},
      {"Conv dilated 2", {1, 16, 20, 20}, 13, conv({3, 3}, {ints("pads", {2, 2, 2, 2}), ints("dilations", {2, 2})})},
      {"Conv dilated 4 grouped", {1, 16, 24, 24}, 13,
       conv({3, 3}, {ints("pads", {4, 4, 4, 4}), ints("dilations", {4, 4})}, 16)},
      {"Conv asymmetric pads", {1, 16, 20, 20}, 13, conv({3, 3}, {ints("pads", {0, 0, 1, 1}), ints("strides", {2, 2})})},
      {"Conv grouped 16 per group after a 1x1 conv (RegNet)", {1, 64, 28, 28}, 13,
       [=](GraphBuilder& b, Value* x) {
         Value* c = ConvOf(b, x, 64, 64, {1, 1}, {});
         return ConvOf(b, b.Op("Relu", {c}), 64, 64, {3, 3}, {ints("pads", {1, 1, 1, 1}), ints("strides", {2, 2})}, 4);
       }},
      {"Conv 1-D", {1, 16, 50}, 13, conv({5}, {ints("pads", {2, 2})})},
      {"Conv 3-D", {1, 8, 6, 10, 10}, 13, conv({3, 3, 3}, {ints("pads", {1, 1, 1, 1, 1, 1})}, 1, 8, 8)},
      {"Conv 3 input channels", {1, 3, 32, 32}, 13, conv({3, 3}, {ints("strides", {2, 2})}, 1, 3, 16)},
      {"ConvTranspose stride 2", {1, 16, 10, 10}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("ConvTranspose", {x, Weight(b, "w", {16, 8, 2, 2}, 3)}, {Attribute::Ints("strides", {2, 2})});
       }},
      {"ConvTranspose 2x2 stride 2, batch 2", {2, 16, 10, 12}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("ConvTranspose", {x, Weight(b, "w", {16, 8, 2, 2}, 3)}, {Attribute::Ints("strides", {2, 2})});
       }},
      {"ConvTranspose 2x2 stride 2 with bias, batch 2", {2, 16, 10, 12}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("ConvTranspose", {x, Weight(b, "w", {16, 8, 2, 2}, 3), Weight(b, "bias", {8}, 4)},
                     {Attribute::Ints("strides", {2, 2})});
       }},
      {"ConvTranspose 2x3 stride (2, 3) with bias: patches of three columns", {1, 16, 7, 9}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("ConvTranspose", {x, Weight(b, "w", {16, 5, 2, 3}, 3), Weight(b, "bias", {5}, 4)},
                     {Attribute::Ints("strides", {2, 3})});
       }},
      {"ConvTranspose 3x3 stride 2 padded", {1, 16, 10, 10}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("ConvTranspose", {x, Weight(b, "w", {16, 8, 3, 3}, 3), Weight(b, "bias", {8}, 4)},
                     {Attribute::Ints("strides", {2, 2}), Attribute::Ints("pads", {1, 1, 1, 1}),
                      Attribute::Ints("output_padding", {1, 1})});
       }},
      {"MaxPool 3x3 s2 plain input", {1, 16, 28, 28}, 13,
       [=](GraphBuilder& b, Value* x) {
         return b.Op("MaxPool", {x}, {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})});
       }},
      {"AveragePool plain input", {1, 16, 28, 28}, 13,
       [=](GraphBuilder& b, Value* x) {
         return b.Op("AveragePool", {x}, {ints("kernel_shape", {2, 2}), ints("strides", {2, 2})});
       }},
      {"GlobalAveragePool", {1, 32, 14, 14}, 13, [](GraphBuilder& b, Value* x) { return b.Op("GlobalAveragePool", {x}); }},
      {"MaxPool after conv", {1, 16, 28, 28}, 13,
       [=](GraphBuilder& b, Value* x) {
         return b.Op("MaxPool", {ConvOf(b, x, 16, 16, {3, 3}, {ints("pads", {1, 1, 1, 1})})},
                     {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})});
       }},
      {"BatchNormalization standalone", {1, 16, 20, 20}, 13,
       [](GraphBuilder& b, Value* x) {
         Value* var = b.Constant("var", RandomF32({16}, 4, 0.5f, 2.0f));
         return b.Op("BatchNormalization", {x, Weight(b, "s", {16}, 5), Weight(b, "b", {16}, 6), Weight(b, "m", {16}, 7), var});
       }},
      {"Add per-channel after conv (blocked)", {1, 16, 20, 20}, 13,
       [=](GraphBuilder& b, Value* x) {
         Value* c = ConvOf(b, x, 16, 16, {3, 3}, {ints("pads", {1, 1, 1, 1})});
         return b.Op("Mul", {b.Op("Relu", {c}), Weight(b, "g", {1, 16, 1, 1}, 8)});
       }},
      {"Add residual blocked + plain", {1, 16, 20, 20}, 13,
       [=](GraphBuilder& b, Value* x) {
         Value* c = ConvOf(b, x, 16, 16, {3, 3}, {ints("pads", {1, 1, 1, 1})});
         return b.Op("Add", {b.Op("Relu", {c}), x});
       }},
      {"Concat of conv outputs", {1, 16, 20, 20}, 13,
       [=](GraphBuilder& b, Value* x) {
         Value* c1 = ConvOf(b, x, 16, 16, {1, 1}, {});
         Value* c2 = ConvOf(b, x, 16, 16, {3, 3}, {ints("pads", {1, 1, 1, 1})});
         return b.Op("Concat", {c1, c2}, {Attribute::Int("axis", 1)});
       }},
      {"MatMul", {1, 64, 96}, 13, [](GraphBuilder& b, Value* x) { return b.Op("MatMul", {x, Weight(b, "w", {96, 48}, 9)}); }},
      {"MatMul of rows [1, 7, 7, C] (ConvNeXt) + bias, GELU, residual", {1, 7, 7, 96}, 20,
       [](GraphBuilder& b, Value* x) {
         Value* h = b.Op("Gelu", {b.Op("Add", {b.Op("MatMul", {x, Weight(b, "w1", {96, 192}, 9)}), Weight(b, "b1", {192}, 10)})});
         Value* y = b.Op("Add", {b.Op("MatMul", {h, Weight(b, "w2", {192, 96}, 11)}), Weight(b, "b2", {96}, 12)});
         return b.Op("Add", {y, x});
       }},
      {"MatMul of rows with a per-row operand after it", {2, 3, 5, 16}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("Mul", {b.Op("MatMul", {x, Weight(b, "w", {16, 8}, 9)}), Weight(b, "r", {2, 3, 5, 1}, 10)});
       }},
      {"Gemm", {8, 96}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("Gemm", {x, Weight(b, "w", {48, 96}, 10), Weight(b, "c", {48}, 11)}, {Attribute::Int("transB", 1)});
       }},
      {"Softmax last axis", {2, 4, 16, 16}, 13, [](GraphBuilder& b, Value* x) { return b.Op("Softmax", {x}); }},
      {"Softmax axis 1", {2, 4, 16, 16}, 13,
       [](GraphBuilder& b, Value* x) { return b.Op("Softmax", {x}, {Attribute::Int("axis", 1)}); }},
      {"LogSoftmax", {4, 100}, 13, [](GraphBuilder& b, Value* x) { return b.Op("LogSoftmax", {x}); }},
      {"LogSoftmax axis 1", {2, 7, 5, 3}, 13,
       [](GraphBuilder& b, Value* x) { return b.Op("LogSoftmax", {x}, {Attribute::Int("axis", 1)}); }},
      {"Softmax opset 11 axis 1 (flattened)", {2, 7, 5, 3}, 11,
       [](GraphBuilder& b, Value* x) { return b.Op("Softmax", {x}, {Attribute::Int("axis", 1)}); }},
      {"ReduceMean last axis", {1, 32, 96}, 13,
       [](GraphBuilder& b, Value* x) { return b.Op("ReduceMean", {x}, {Attribute::Ints("axes", {-1})}); }},
      {"ReduceSum spatial", {1, 16, 12, 12}, 13,
       [](GraphBuilder& b, Value* x) { return b.Op("ReduceSum", {x, b.Constant("axes", Ints64({2, 3}))}); }},
      {"ReduceMean over channels of a conv output", {1, 16, 12, 12}, 18,
       [=](GraphBuilder& b, Value* x) {
         return b.Op("ReduceMean", {ConvOf(b, x, 16, 16, {1, 1}, {}), b.Constant("axes", Ints64({1}))});
       }},
      {"ReduceMean spatial of a conv output (SE block), 16 and 24 channels", {1, 24, 9, 9}, 18,
       [=](GraphBuilder& b, Value* x) {
         Value* c = ConvOf(b, x, 24, 32, {3, 3}, {ints("pads", {1, 1, 1, 1})});
         Value* m1 = b.Op("ReduceMean", {c, b.Constant("axes", Ints64({2, 3}))});
         Value* c2 = ConvOf(b, x, 24, 24, {3, 3}, {ints("pads", {1, 1, 1, 1})}, 24);  // depthwise: channels-last
         Value* m2 = b.Op("ReduceMax", {c2, b.Constant("axes2", Ints64({2, 3}))}, {Attribute::Int("keepdims", 0)});
         return b.Op("Add", {b.Op("Flatten", {m1}), b.Op("ReduceSum", {m2, b.Constant("axes3", Ints64({1}))})});
       }},
      {"ReduceL2 spatial (ConvNeXt-V2 GRN)", {1, 16, 12, 12}, 18,
       [](GraphBuilder& b, Value* x) { return b.Op("ReduceL2", {x, b.Constant("axes", Ints64({2, 3}))}); }},
      {"ReduceSumSquare last axis", {2, 8, 40}, 18,
       [](GraphBuilder& b, Value* x) { return b.Op("ReduceSumSquare", {x, b.Constant("axes", Ints64({-1}))}); }},
      {"Add of a blocked conv output and a plain mask", {1, 16, 12, 12}, 13,
       [=](GraphBuilder& b, Value* x) {
         return b.Op("Add", {ConvOf(b, x, 16, 16, {3, 3}, {ints("pads", {1, 1, 1, 1})}), Weight(b, "mask", {1, 1, 12, 12}, 15)});
       }},
      {"LayerNormalization", {1, 32, 96}, 17,
       [](GraphBuilder& b, Value* x) {
         return b.Op("LayerNormalization", {x, Weight(b, "s", {96}, 12), Weight(b, "b", {96}, 13)});
       }},
      {"RMSNormalization", {1, 32, 96}, 23,
       [](GraphBuilder& b, Value* x) {
         return b.Op("RMSNormalization", {x, Weight(b, "s", {96}, 12)}, {Attribute::Float("epsilon", 1e-6f)});
       }},
      {"InstanceNormalization", {1, 16, 12, 12}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("InstanceNormalization", {x, Weight(b, "s", {16}, 12), Weight(b, "b", {16}, 13)});
       }},
      {"GroupNormalization", {1, 16, 12, 12}, 21,
       [](GraphBuilder& b, Value* x) {
         return b.Op("GroupNormalization", {x, Weight(b, "s", {16}, 12), Weight(b, "b", {16}, 13)},
                     {Attribute::Int("num_groups", 4)});
       }},
      {"Transpose 0213", {1, 8, 16, 12}, 13,
       [](GraphBuilder& b, Value* x) { return b.Op("Transpose", {x}, {Attribute::Ints("perm", {0, 2, 1, 3})}); }},
      {"Slice with steps", {1, 16, 20, 20}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("Slice", {x, b.Constant("st", Ints64({0, 1})), b.Constant("en", Ints64({16, 19})),
                               b.Constant("ax", Ints64({1, 2})), b.Constant("sp", Ints64({2, 2}))});
       }},
      {"Slice negative step", {1, 6, 9}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("Slice", {x, b.Constant("st", Ints64({-1})), b.Constant("en", Ints64({-100})),
                               b.Constant("ax", Ints64({2})), b.Constant("sp", Ints64({-2}))});
       }},
      {"Resize nearest x2", {1, 8, 10, 10}, 13,
       [](GraphBuilder& b, Value* x) {
         Value* scales = b.Constant("scales", Tensor::FromVector<float>({1, 1, 2, 2}, {4}));
         return b.Op("Resize", {x, b.Constant("roi", Tensor::FromVector<float>({}, {0})), scales});
       }},
      {"Resize linear x2", {1, 8, 10, 10}, 13,
       [](GraphBuilder& b, Value* x) {
         Value* scales = b.Constant("scales", Tensor::FromVector<float>({1, 1, 2, 2}, {4}));
         return b.Op("Resize", {x, b.Constant("roi", Tensor::FromVector<float>({}, {0})), scales},
                     {Attribute::String("mode", "linear")});
       }},
      {"Elementwise chain", {1, 32, 96}, 20,
       [](GraphBuilder& b, Value* x) {
         Value* t = b.Op("Tanh", {b.Op("Sigmoid", {x})});
         t = b.Op("Gelu", {b.Op("Erf", {t})});
         return b.Op("Log", {b.Op("Add", {b.Op("Exp", {t}), Weight(b, "one", {96}, 14)})});
       }},
      {"Not of a comparison (an inverted mask)", {1, 32, 96}, 13,
       [](GraphBuilder& b, Value* x) {
         Value* mask = b.Op("Greater", {x, Weight(b, "t", {96}, 16)});
         return b.Op("Where", {b.Op("Not", {mask}), x, Weight(b, "fill", {1}, 17)});
       }},
      {"Expand", {1, 1, 16, 16}, 13,
       [](GraphBuilder& b, Value* x) { return b.Op("Expand", {x, b.Constant("shape", Ints64({1, 4, 16, 16}))}); }},
      {"Mish", {1, 16, 12, 12}, 18, [](GraphBuilder& b, Value* x) { return b.Op("Mish", {x}); }},
      {"CumSum", {2, 30, 16}, 14,
       [](GraphBuilder& b, Value* x) { return b.Op("CumSum", {x, b.Constant("ax", Ints64({1}))}); }},
      {"ReduceMax last axis", {4, 300}, 18,
       [](GraphBuilder& b, Value* x) { return b.Op("ReduceMax", {x, b.Constant("axes", Ints64({-1}))}); }},
      {"DepthToSpace DCR", {1, 12, 5, 6}, 13,
       [](GraphBuilder& b, Value* x) { return b.Op("DepthToSpace", {x}, {Attribute::Int("blocksize", 2)}); }},
      {"DepthToSpace CRD", {1, 18, 4, 5}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("DepthToSpace", {x}, {Attribute::Int("blocksize", 3), Attribute::String("mode", "CRD")});
       }},
      {"SpaceToDepth", {2, 3, 8, 6}, 13,
       [](GraphBuilder& b, Value* x) { return b.Op("SpaceToDepth", {x}, {Attribute::Int("blocksize", 2)}); }},
      {"SpaceToDepth CRD", {1, 3, 8, 6}, 28,
       [](GraphBuilder& b, Value* x) {
         return b.Op("SpaceToDepth", {x}, {Attribute::Int("blocksize", 2), Attribute::String("mode", "CRD")});
       }},
      {"Tile", {1, 4, 8, 8}, 13,
       [](GraphBuilder& b, Value* x) { return b.Op("Tile", {x, b.Constant("reps", Ints64({2, 1, 1, 3}))}); }},
      {"Pad reflect", {1, 8, 10, 10}, 13,
       [](GraphBuilder& b, Value* x) {
         return b.Op("Pad", {x, b.Constant("pads", Ints64({0, 0, 1, 2, 0, 0, 1, 2}))},
                     {Attribute::String("mode", "reflect")});
       }},
      {"Cast to f16 and back", {1, 32, 96}, 13,
       [](GraphBuilder& b, Value* x) {
         Value* h = b.Op("Cast", {x}, {Attribute::Int("to", static_cast<int64_t>(10))});
         return b.Op("Cast", {h}, {Attribute::Int("to", static_cast<int64_t>(1))});
       }},
      {"TopK", {4, 200}, 13,
       [](GraphBuilder& b, Value* x) { return b.OpN("TopK", {x, b.Constant("k", Ints64({5}))}, 2)[0]; }},
      {"ArgMax", {4, 200}, 13,
       [](GraphBuilder& b, Value* x) {
         Value* i = b.Op("ArgMax", {x}, {Attribute::Int("axis", 1)});
         return b.Op("Cast", {i}, {Attribute::Int("to", static_cast<int64_t>(1))});
       }},
      {"Split", {1, 24, 96}, 13,
       [](GraphBuilder& b, Value* x) {
         std::vector<Value*> parts = b.OpN("Split", {x, b.Constant("split", Ints64({32, 64}))}, 2, {Attribute::Int("axis", 2)});
         return b.Op("Concat", {parts[1], parts[0]}, {Attribute::Int("axis", 2)});
       }},
  };
}

TEST(FastPathsTest, EveryOpFamilyCompilesToFastKernels) {
  for (const Family& f : Families()) {
    SCOPED_TRACE(f.name);
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, D(f.input));
    b.Output(f.body(b, x));
    auto model = b.Build(f.opset);
    RunBoth(*model, {{"x", RandomF32(f.input, 21, -1, 1)}}, 0, 1e-4, 1e-4);
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// Softmax and LogSoftmax over an axis of one element are exactly 1 and 0, on
// the CPU backend too (oneDNN's jit logsoftmax gave 1.4e-6: graph fuzzer,
// seed 13, behind a Mul by 316).
TEST(FastPathsTest, SoftmaxOverOneElementIsExact) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (int64_t axis : {0, 1}) {
      SCOPED_TRACE(absl::StrCat(op, " axis ", axis));
      GraphBuilder b;
      Dims dims = axis == 0 ? Dims{1, 5} : Dims{4, 1};
      Value* x = b.Input("x", DType::kFloat, D(dims));
      b.Output(b.Op(op, {x}, {Attribute::Int("axis", axis)}));
      auto model = b.Build(13);
      RunBoth(*model, {{"x", RandomF32(dims, 3, -30.0f, 30.0f)}}, 0, 0.0, 0.0);
    }
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// A BatchNormalization no conv absorbs runs on the channel-affine kernel in
// the layout its input arrives in (DenseNet's BN-ReLU after a Concat of
// blocked convs; a graph input read plain; 24 channels in blocks of 16, the
// padding kept zero for the conv after it), a single ReLU after it fused.
TEST(FastPathsTest, StandaloneBatchNormRunsNativeInItsInputsLayout) {
  struct Case {
    std::string name;
    int64_t channels;  // of each conv feeding the Concat; 0: BN on the graph input
    bool relu;
  };
  for (const Case& c : std::vector<Case>{{"graph input", 0, false},
                                         {"graph input + relu", 0, true},
                                         {"concat of convs + relu", 16, true},
                                         {"concat of convs, padded block", 12, false},
                                         {"concat of convs, padded block + relu", 12, true}}) {
    SCOPED_TRACE(c.name);
    GraphBuilder b;
    const Dims in = {2, 8, 9, 11};
    Value* x = b.Input("x", DType::kFloat, D(in));
    Value* v = x;
    int64_t ch = 8;
    if (c.channels > 0) {
      Value* a = ConvOf(b, x, 8, c.channels, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})});
      Value* d = ConvOf(b, x, 8, c.channels, {1, 1}, {});
      v = b.Op("Concat", {a, d}, {Attribute::Int("axis", 1)});
      ch = 2 * c.channels;
    }
    Value* var = b.Constant("var", RandomF32({ch}, 4, 0.5f, 2.0f));
    v = b.Op("BatchNormalization", {v, Weight(b, "s", {ch}, 5), Weight(b, "b", {ch}, 6), Weight(b, "m", {ch}, 7), var});
    if (c.relu) v = b.Op("Relu", {v});
    if (c.channels > 0) v = ConvOf(b, v, ch, 8, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})});
    b.Output(v);
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, {{"x", RandomF32(in, 22, -1, 1)}}, 0, 1e-5, 1e-5);
    EXPECT_NE(plan.find(c.relu ? "batchnorm+relu\t" : "batchnorm\t"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("binary"), std::string::npos) << plan;
  }
}

// A pool reading a conv's channel-blocked output runs on our kernel in that
// layout (oneDNN 2.6's jit:avx2 pooling there took 3.4 ns an output), every
// window geometry: strides, asymmetric pads, ceil_mode, dilations, both
// average divisors, 1-D, a padded last block (12 channels), two images, a
// depthwise conv's channels-last output, and nodes after it (once oneDNN's
// post-ops) as steps of their own.
TEST(FastPathsTest, PoolsOnConvOutputsRunInTheConvsLayout) {
  struct Case {
    std::string name;
    std::string op;
    std::vector<Attribute> attrs;
    int64_t channels = 16;
    bool one_d = false;
    bool depthwise = false;
    bool then_sub = false;
  };
  auto ints = [](const char* n, Dims v) { return Attribute::Ints(n, v); };
  std::vector<Case> cases = {
      {"max 3x3 s1 p1 (GoogLeNet)", "MaxPool", {ints("kernel_shape", {3, 3}), ints("pads", {1, 1, 1, 1})}},
      {"max 3x3 s2 ceil", "MaxPool",
       {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), Attribute::Int("ceil_mode", 1)}},
      {"max 2x3 s(2,1) asymmetric pads", "MaxPool",
       {ints("kernel_shape", {2, 3}), ints("strides", {2, 1}), ints("pads", {0, 2, 1, 0})}},
      {"max 3x3 dilated 2", "MaxPool", {ints("kernel_shape", {3, 3}), ints("dilations", {2, 2})}},
      {"avg 3x3 s1 p1 excluding pads, then Sub (PoolFormer)", "AveragePool",
       {ints("kernel_shape", {3, 3}), ints("pads", {1, 1, 1, 1})}, 16, false, false, true},
      {"avg 3x3 s2 ceil counting pads", "AveragePool",
       {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1}),
        Attribute::Int("ceil_mode", 1), Attribute::Int("count_include_pad", 1)}},
      {"max 3x3 s2, 12 channels (padded block)", "MaxPool",
       {ints("kernel_shape", {3, 3}), ints("strides", {2, 2}), ints("pads", {1, 1, 1, 1})}, 12},
      {"max 1-D 3 s2", "MaxPool", {ints("kernel_shape", {3}), ints("strides", {2}), ints("pads", {1, 1})}, 16, true},
      {"avg 1-D 4 s1", "AveragePool", {ints("kernel_shape", {4})}, 16, true},
      {"max 3x3 s2 after a depthwise conv (channels-last)", "MaxPool",
       {ints("kernel_shape", {3, 3}), ints("strides", {2, 2})}, 24, false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GraphBuilder b;
    const Dims in = c.one_d ? Dims{2, 8, 29} : Dims{2, 8, 13, 11};
    Value* x = b.Input("x", DType::kFloat, D(in));
    Value* v = c.one_d ? ConvOf(b, x, 8, c.channels, {3}, {Attribute::Ints("pads", {1, 1})})
                       : ConvOf(b, x, 8, c.channels, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})});
    if (c.depthwise) v = ConvOf(b, v, c.channels, c.channels, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})}, c.channels);
    Value* p = b.Op(c.op, {v}, c.attrs);
    if (c.then_sub) p = b.Op("Mul", {b.Op("Sub", {p, v}), Weight(b, "k", {c.channels, 1, 1}, 9)});
    b.Output(p);
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, {{"x", RandomF32(in, 23, -1, 1)}}, 0, 1e-5, 1e-5);
    EXPECT_NE(plan.find("blocked_pool\t"), std::string::npos) << plan;
  }
}

// BatchNormalization over [N, C] (BatchNorm1d after a linear layer, LeViT)
// runs as rows of all channels, with a ReLU after it too (or as the
// MatMul's post-ops where oneDNN takes them).
TEST(FastPathsTest, BatchNormOverRowsOfChannels) {
  for (bool relu : {false, true}) {
    GraphBuilder b;
    const Dims in = {37, 40};
    Value* x = b.Input("x", DType::kFloat, D(in));
    Value* m = b.Op("MatMul", {x, Weight(b, "w", {40, 24}, 3)});
    Value* var = b.Constant("var", RandomF32({24}, 4, 0.5f, 2.0f));
    Value* v = b.Op("BatchNormalization", {m, Weight(b, "s", {24}, 5), Weight(b, "b", {24}, 6), Weight(b, "mean", {24}, 7), var});
    if (relu) v = b.Op("Relu", {v});
    b.Output(v);
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, {{"x", RandomF32(in, 24, -1, 1)}}, 0, 1e-5, 1e-5);
    // Or, where oneDNN's matmul takes per-column post-ops (its AVX-512
    // kernel), folded into the MatMul as its scale and shift.
    const bool folded = plan.find(relu ? "[bn_scale,bn_shift,relu]" : "[bn_scale,bn_shift]") != std::string::npos;
    EXPECT_TRUE(plan.find(relu ? "batchnorm+relu\t" : "batchnorm\t") != std::string::npos || folded) << plan;
  }
}

// A dilated conv whose taps mostly read padding runs as one GEMM per tap over
// the positions it reads (DeepLab's ASPP): square and not, two images,
// asymmetric pads, a BatchNormalization folded in, a ReLU after it (a step
// of its own), outer taps that never reach the input; a dilation the map
// mostly covers stays with oneDNN.
TEST(FastPathsTest, DilatedConvOnASmallMapRunsByTap) {
  struct Case {
    Dims in;
    int64_t dilation;
    std::vector<int64_t> pads;
    bool bn, relu, by_tap;
  };
  for (const Case& c : std::vector<Case>{{{1, 16, 10, 10}, 6, {6, 6, 6, 6}, false, false, true},
                                         {{2, 8, 9, 13}, 6, {6, 5, 6, 7}, true, true, true},
                                         {{1, 8, 7, 7}, 12, {12, 12, 12, 12}, false, true, true},
                                         {{1, 8, 20, 20}, 2, {2, 2, 2, 2}, false, false, false}}) {
    SCOPED_TRACE(absl::StrCat(DimsToString(c.in), " dilation ", c.dilation));
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, D(c.in));
    const int64_t cin = c.in[1], cout = 12;
    Value* v = ConvOf(b, x, cin, cout, {3, 3},
                      {Attribute::Ints("dilations", {c.dilation, c.dilation}), Attribute::Ints("pads", c.pads)});
    if (c.bn) {
      Value* var = b.Constant("var", RandomF32({cout}, 4, 0.5f, 2.0f));
      v = b.Op("BatchNormalization",
               {v, Weight(b, "s", {cout}, 5), Weight(b, "sh", {cout}, 6), Weight(b, "m", {cout}, 7), var});
    }
    if (c.relu) v = b.Op("Relu", {v});
    b.Output(v);
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, {{"x", RandomF32(c.in, 31, -1, 1)}}, 0, 1e-5, 1e-4);
    EXPECT_EQ(plan.find("tap_conv\tConv") != std::string::npos, c.by_tap) << plan;
  }
}

// A Concat along channels of conv outputs in one channel-blocked layout, in
// whole blocks, is our copy (a run per input and image), not oneDNN's
// simple:any, and nothing is reordered around it; DenseNet's growing
// concats, two images, three inputs. Where the convs write channels-last
// (oneDNN's AVX-512 brgconv), the same copy takes a run per input and
// position. A padded block (12 channels) goes the old way (reorders to
// plain, the plain copy).
TEST(FastPathsTest, ChannelBlockedConcatIsOneRunPerInput) {
  for (int64_t ch : {16, 12}) {
    SCOPED_TRACE(absl::StrCat(ch, " channels per conv"));
    GraphBuilder b;
    const Dims in = {2, 8, 9, 11};
    Value* x = b.Input("x", DType::kFloat, D(in));
    Value* a = ConvOf(b, x, 8, ch, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})});
    Value* d = ConvOf(b, x, 8, 2 * ch, {1, 1}, {});
    Value* cat = b.Op("Concat", {a, d}, {Attribute::Int("axis", 1)});
    Value* e = ConvOf(b, cat, 3 * ch, ch, {1, 1}, {});
    Value* cat2 = b.Op("Concat", {cat, e, a}, {Attribute::Int("axis", 1)});
    b.Output(ConvOf(b, cat2, 5 * ch, 8, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})}));
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, {{"x", RandomF32(in, 23, -1, 1)}}, 0, 1e-5, 1e-5);
    if (ch % 8 != 0) continue;  // correct is all we ask of the padded case
    int concats = 0, reorders = 0;
    for (absl::string_view line : absl::StrSplit(plan, '\n')) {
      if (absl::StartsWith(line, "concat\tConcat") && !absl::StrContains(line, "impl=")) ++concats;
      if (absl::StartsWith(line, "reorder\t")) ++reorders;
    }
    EXPECT_EQ(concats, 2) << plan;
    EXPECT_EQ(reorders, 2) << plan;  // the input's to blocked, the output's back
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// A depthwise conv (stride 1) whose input arrives plain runs on the native
// NCHW kernel: 3x3, 5x5, 7x7 (ConvNeXt) and asymmetric 5x3 windows, pads on
// every side or none, uneven, or wider than the window reaches (output rows
// and columns of bias alone), with and without bias, a BatchNormalization
// folded in, two images, widths under one vector or ending in a partial one,
// heights under and not a multiple of 4.
TEST(FastPathsTest, PlainDepthwiseConvRunsNatively) {
  struct Case {
    Dims in;
    int64_t kh, kw;
    std::vector<int64_t> pads;
    bool bias, bn;
  };
  for (const Case& c : std::vector<Case>{{{1, 16, 20, 37}, 3, 3, {1, 1, 1, 1}, true, false},
                                         {{2, 8, 15, 21}, 7, 7, {3, 3, 3, 3}, true, false},
                                         {{1, 4, 9, 40}, 5, 3, {2, 0, 1, 2}, false, true},
                                         {{1, 8, 6, 6}, 3, 3, {0, 0, 0, 0}, false, false},
                                         {{1, 4, 7, 11}, 5, 5, {2, 1, 0, 2}, true, false},
                                         {{1, 2, 3, 40}, 3, 3, {1, 1, 1, 1}, true, false},
                                         {{1, 3, 5, 18}, 3, 3, {2, 3, 2, 1}, true, false}}) {
    SCOPED_TRACE(absl::StrCat(DimsToString(c.in), " ", c.kh, "x", c.kw));
    const int64_t ch = c.in[1];
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, D(c.in));
    std::vector<Value*> ins = {x, Weight(b, "w", {ch, 1, c.kh, c.kw}, 1)};
    if (c.bias) ins.push_back(Weight(b, "bias", {ch}, 2));
    Value* y = b.Op("Conv", ins, {Attribute::Int("group", ch), Attribute::Ints("pads", c.pads)});
    if (c.bn) {
      y = b.Op("BatchNormalization", {y, Weight(b, "s", {ch}, 5), Weight(b, "b", {ch}, 6), Weight(b, "m", {ch}, 7),
                                      b.Constant("var", RandomF32({ch}, 4, 0.5f, 2.0f))});
    }
    b.Output(y);
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, {{"x", RandomF32(c.in, 23, -1, 1)}}, 0, 1e-5, 1e-5);
    // Without AVX-512 oneDNN's blocked kernel takes it (LowerPlainDepthwise).
    if (!kernels::avx512::HaveAvx512()) continue;
    EXPECT_NE(plan.find("depthwise\tConv"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("reorder\t"), std::string::npos) << plan;
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// A squeeze-and-excitation multiply (x · sigmoid(mean(x)) per image and
// channel) runs as one channel-scale pass in x's layout: blocked by 16 with
// a padded last block (24 channels) between two convs, and plain; two images
// with their own scales.
TEST(FastPathsTest, SqueezeExcitationScaleRunsInTheConvLayout) {
  for (int64_t ch : {24, 32}) {
    for (bool plain : {false, true}) {
      SCOPED_TRACE(absl::StrCat(ch, plain ? " plain" : " after a conv"));
      GraphBuilder b;
      const Dims in = {2, 8, 10, 9};
      Value* x = b.Input("x", DType::kFloat, D(in));
      Value* c = plain ? b.Op("Relu", {b.Op("Tile", {x, b.Constant("reps", Ints64({1, ch / 8, 1, 1}))})})
                       : ConvOf(b, x, 8, ch, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})});
      Value* m = b.Op("ReduceMean", {c}, {Attribute::Ints("axes", {2, 3}), Attribute::Int("keepdims", 1)});
      Value* y = b.Op("Mul", {c, b.Op("Sigmoid", {m})});
      b.Output(plain ? y : ConvOf(b, y, ch, 8, {1, 1}, {}));
      auto model = b.Build(13);
      std::string plan = RunBoth(*model, {{"x", RandomF32(in, 31, -1, 1)}}, 0, 1e-5, 1e-5);
      EXPECT_NE(plan.find("channel_scale\tMul"), std::string::npos) << plan;
    }
  }
}

// ConvNeXt-V2's global response normalization, gamma · (x · Nx) + beta + x
// with Nx computed per channel at run time: the per-channel constants (of
// shape [1, C, 1, 1] or [C, 1, 1], either operand order) join the channel
// scale's pass in the conv's layout, with no reorder; the residual add runs
// after it. A gain that is not per channel ([1, 1, 1, W]) is left to its
// own step (and the channel scale to oneDNN's binary with its post-ops).
TEST(FastPathsTest, ChannelScaleTakesPerChannelConstantsAfterIt) {
  for (int64_t ch : {24, 32}) {
    for (bool rank3_constants : {false, true}) {
      for (bool per_channel_gain : {true, false}) {
        SCOPED_TRACE(absl::StrCat(ch, rank3_constants ? " [C,1,1]" : " [1,C,1,1]",
                                  per_channel_gain ? "" : " gain over W"));
        GraphBuilder b;
        const Dims in = {1, 8, 10, 9};
        Value* x = b.Input("x", DType::kFloat, D(in));
        Value* c = ConvOf(b, x, 8, ch, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})});
        Value* g = b.Op("ReduceL2", {c}, {Attribute::Ints("axes", {2, 3}), Attribute::Int("keepdims", 1)});
        Value* mean = b.Op("ReduceMean", {g}, {Attribute::Ints("axes", {1}), Attribute::Int("keepdims", 1)});
        Value* nx = b.Op("Div", {g, b.Op("Add", {mean, b.Constant("eps", Tensor::Scalar<float>(1e-6f))})});
        Dims cd = rank3_constants ? Dims{ch, 1, 1} : Dims{1, ch, 1, 1};
        Value* gamma = b.Constant("gamma", per_channel_gain ? RandomF32(cd, 5, 0.5f, 1.5f)
                                                            : RandomF32({1, 1, 1, 9}, 5, 0.5f, 1.5f));
        Value* scaled = b.Op("Mul", {gamma, b.Op("Mul", {c, nx})});
        Value* shifted = b.Op("Add", {scaled, b.Constant("beta", RandomF32(cd, 6, -0.5f, 0.5f))});
        b.Output(ConvOf(b, b.Op("Add", {shifted, c}), ch, 8, {1, 1}, {}));
        auto model = b.Build(13);
        std::string plan = RunBoth(*model, {{"x", RandomF32(in, 31, -1, 1)}}, 0, 1e-5, 1e-5);
        EXPECT_EQ(plan.find("channel_scale\tMul") != std::string::npos &&
                      plan.find("+ [Mul(const),Add(const)]") != std::string::npos,
                  per_channel_gain)
            << plan;
        if (per_channel_gain) {  // the conv's output never leaves its layout
          EXPECT_EQ(plan.find("reorder\tConv_0"), std::string::npos) << plan;
        }
      }
    }
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// GlobalAveragePool and GlobalMaxPool run as the native spatial reduction,
// on a plain input and on a conv's blocked output read in place, over 1-D
// to 3-D spatial axes.
TEST(FastPathsTest, GlobalPoolsRunAsSpatialReductions) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    for (const Dims& in : std::vector<Dims>{{2, 16, 7, 9}, {1, 16, 30}, {1, 16, 3, 4, 5}}) {
      for (bool after_conv : {false, true}) {
        SCOPED_TRACE(absl::StrCat(op, " ", DimsToString(in), after_conv ? " after a conv" : ""));
        GraphBuilder b;
        Value* x = b.Input("x", DType::kFloat, D(in));
        Value* v = x;
        if (after_conv) {
          Dims k(in.size() - 2, 1);
          v = ConvOf(b, x, 16, 16, k, {});
        }
        b.Output(b.Op(op, {v}));
        auto model = b.Build(13);
        std::string plan = RunBoth(*model, {{"x", RandomF32(in, 41, -2, 2)}}, 0, 1e-5, 1e-5);
        EXPECT_NE(plan.find(absl::StrCat("reduce\t", op)), std::string::npos) << plan;
      }
    }
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// A RegNet / ResNeXt block (1x1 conv, grouped 3x3 conv of 16 or 32 channels
// per group, 1x1 conv, a strided 1x1 projection and the residual Add) after a
// stem conv: oneDNN runs those grouped convs fast only on channels blocked by
// 16, so every conv of the model writes that layout and no activation is
// reordered between steps (only the plain graph input and output may be).
TEST(FastPathsTest, GroupedConvModelsStayInBlockedChannels) {
  for (int64_t groups : {4, 2}) {
    SCOPED_TRACE(absl::StrCat(64 / groups, " channels per group"));
    GraphBuilder b;
    const Dims in = {1, 3, 32, 32};
    Value* x = b.Input("x", DType::kFloat, D(in));
    auto ints = [](const char* n, Dims v) { return Attribute::Ints(n, std::move(v)); };
    Value* stem = b.Op("Relu", {ConvOf(b, x, 3, 32, {3, 3}, {ints("pads", {1, 1, 1, 1}), ints("strides", {2, 2})})});
    Value* a = b.Op("Relu", {ConvOf(b, stem, 32, 64, {1, 1}, {})});
    Value* g = b.Op("Relu", {ConvOf(b, a, 64, 64, {3, 3}, {ints("pads", {1, 1, 1, 1}), ints("strides", {2, 2})}, groups)});
    Value* c = ConvOf(b, g, 64, 64, {1, 1}, {});
    Value* proj = ConvOf(b, stem, 32, 64, {1, 1}, {ints("strides", {2, 2})});
    b.Output(b.Op("Relu", {b.Op("Add", {c, proj})}));
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, {{"x", RandomF32(in, 29, -1, 1)}}, 0, 1e-4, 1e-4);
    const std::string output = "reorder\t" + model->graph->outputs()[0]->name() + " ";
    for (size_t at = plan.find("reorder\t"); at != std::string::npos; at = plan.find("reorder\t", at + 1)) {
      EXPECT_TRUE(plan.compare(at, 10, "reorder\tx ") == 0 || plan.compare(at, output.size(), output) == 0)
          << "an activation is reordered:\n" << plan;
    }
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// MaxPool and AveragePool on a plain input run our row kernel (the stride-2
// AVX-512 path, the generic one, its masked last outputs), with the window
// geometry ONNX allows: pads on any side, auto_pad, ceil_mode, dilations,
// both divisors of the average, 1-D inputs; against the reference executor.
// Every pool on a plain input is ours.
TEST(FastPathsTest, PlainPoolingRunsTheRowKernel) {
  struct Case {
    std::string op;
    Dims in;
    std::vector<int64_t> kernel, strides, pads, dilations;
    int64_t ceil_mode = 0, count_include_pad = 0;
    std::string auto_pad = "NOTSET";
  };
  const std::vector<Case> cases = {
      {"MaxPool", {1, 8, 23, 67}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},  // ResNet's stem pool
      {"AveragePool", {2, 5, 20, 66}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}},
      {"AveragePool", {1, 6, 11, 65}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 0, 1},
      {"AveragePool", {1, 6, 11, 65}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 0, 0},
      {"AveragePool", {1, 3, 12, 70}, {3, 5}, {2, 2}, {1, 2, 0, 1}, {}, 1, 1},
      {"AveragePool", {1, 3, 12, 70}, {3, 5}, {2, 2}, {1, 2, 0, 1}, {}, 1, 0},
      {"MaxPool", {1, 4, 17, 75}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {}, 1},
      {"MaxPool", {1, 4, 18, 30}, {3, 3}, {1, 2}, {2, 2, 2, 2}, {2, 2}},  // narrow, but dilated
      {"AveragePool", {1, 4, 18, 30}, {2, 3}, {3, 3}, {0, 0, 0, 0}, {1, 2}},
      {"MaxPool", {1, 2, 9, 72}, {3, 3}, {3, 3}, {}, {}, 0, 0, "SAME_UPPER"},
      {"AveragePool", {1, 2, 9, 72}, {2, 4}, {2, 2}, {}, {}, 0, 0, "SAME_LOWER"},
      {"MaxPool", {2, 3, 90}, {3}, {2}, {1, 1}, {}},
      {"AveragePool", {2, 3, 90}, {4}, {1}, {2, 1}, {}, 0, 1},
      // The register paths' limits (8 and 16 lanes: stride 1 up to the
      // lane count, stride 2 up to twice it), short and odd rows.
      {"MaxPool", {1, 3, 9, 41}, {2, 8}, {1, 1}, {0, 3, 0, 4}, {}},
      {"AveragePool", {1, 3, 9, 41}, {2, 8}, {1, 1}, {0, 3, 0, 4}, {}, 0, 1},
      {"MaxPool", {1, 3, 9, 53}, {3, 16}, {1, 2}, {1, 7, 1, 8}, {}},
      {"AveragePool", {1, 3, 9, 53}, {1, 16}, {1, 2}, {0, 7, 0, 8}, {}, 0, 0},
      {"MaxPool", {1, 2, 6, 70}, {1, 15}, {1, 2}, {0, 0, 0, 0}, {}, 1},
      {"MaxPool", {1, 5, 7, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
      {"AveragePool", {1, 5, 14, 14}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}},
      {"MaxPool", {1, 5, 9, 5}, {1, 5}, {1, 1}, {0, 2, 0, 2}, {}},
      {"AveragePool", {1, 5, 9, 17}, {1, 2}, {1, 2}, {0, 0, 0, 0}, {}, 1},
      // The widths fixed at compile time (3 and 5 at stride 1, 2 and 3 at
      // stride 2), over rows of one vector, several, and a part of one.
      {"MaxPool", {1, 4, 10, 70}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}},
      {"AveragePool", {2, 3, 9, 56}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 0, 0},
      {"AveragePool", {1, 6, 7, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 0, 1},
      {"MaxPool", {1, 3, 12, 40}, {5, 5}, {1, 1}, {2, 2, 2, 2}, {}},
      {"AveragePool", {1, 3, 12, 37}, {5, 5}, {1, 1}, {2, 1, 2, 3}, {}, 0, 0},
      {"MaxPool", {1, 3, 12, 66}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}},
      {"AveragePool", {1, 3, 13, 35}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {}, 1, 0},
      // Rows of one vector or less (the planes inside each row): every
      // column vector a window reads at stride 1 and 2, a full last
      // vector (16 outputs), the widths not fixed at compile time, a
      // single plane, 1-D.
      {"MaxPool", {2, 7, 8, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {}},
      {"AveragePool", {1, 9, 7, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {}, 0, 0},
      {"MaxPool", {1, 5, 32, 32}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
      {"AveragePool", {1, 3, 33, 31}, {5, 5}, {2, 2}, {2, 2, 2, 2}, {}, 1, 1},
      {"MaxPool", {1, 2, 6, 40}, {1, 9}, {1, 2}, {0, 0, 0, 0}, {}},
      {"AveragePool", {1, 2, 6, 40}, {2, 9}, {1, 2}, {0, 1, 0, 1}, {}, 0, 0},
      {"MaxPool", {1, 3, 9, 12}, {3, 7}, {1, 1}, {1, 3, 1, 3}, {}},
      {"AveragePool", {1, 2, 5, 20}, {2, 16}, {1, 1}, {0, 0, 0, 0}, {}},
      {"MaxPool", {1, 1, 9, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 1},
      {"AveragePool", {2, 3, 11}, {3}, {2}, {1, 1}, {}, 0, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.op, " ", DimsToString(c.in), " k", absl::StrJoin(c.kernel, "x"), " s",
                              absl::StrJoin(c.strides, "x"), " ", c.auto_pad));
    GraphBuilder b;
    Value* x = b.Input("x", DType::kFloat, D(c.in));
    std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", c.kernel), Attribute::Ints("strides", c.strides),
                                    Attribute::Int("ceil_mode", c.ceil_mode),
                                    Attribute::String("auto_pad", c.auto_pad)};
    if (!c.pads.empty()) attrs.push_back(Attribute::Ints("pads", c.pads));
    if (!c.dilations.empty()) attrs.push_back(Attribute::Ints("dilations", c.dilations));
    if (c.op == "AveragePool") attrs.push_back(Attribute::Int("count_include_pad", c.count_include_pad));
    b.Output(b.Op(c.op, {x}, attrs));
    auto model = b.Build(19);
    std::string plan = RunBoth(*model, {{"x", RandomF32(c.in, 41, -2, 2)}}, 0, 1e-5, 1e-5);
    EXPECT_NE(plan.find("window_pool\t" + c.op), std::string::npos) << plan;
  }
}

// A dilated MaxPool (which oneDNN 2.6 does not pool) after a conv, whose
// output is channel-blocked, and an undilated one: our blocked kernel in the
// conv's layout, no reorder to plain, never the reference kernel.
TEST(FastPathsTest, PoolingAfterAConvStaysInItsLayout) {
  for (bool dilated : {true, false}) {
    SCOPED_TRACE(dilated ? "dilated" : "undilated");
    GraphBuilder b;
    const Dims in = {1, 8, 12, 14};
    Value* x = b.Input("x", DType::kFloat, D(in));
    Value* c = ConvOf(b, x, 8, 16, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})});
    std::vector<Attribute> attrs = {Attribute::Ints("kernel_shape", {3, 3}), Attribute::Ints("strides", {1, 1})};
    if (dilated) attrs.push_back(Attribute::Ints("dilations", {2, 2}));
    b.Output(b.Op("MaxPool", {c}, attrs));
    auto model = b.Build(13);
    std::string plan = RunBoth(*model, {{"x", RandomF32(in, 43, -1, 1)}}, 0, 1e-5, 1e-5);
    EXPECT_NE(plan.find("blocked_pool\tMaxPool"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("reorder\tConv"), std::string::npos) << plan;  // the conv's output as it is
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// SiLU (Swish, what the rewriter makes of x·sigmoid(x)) after a conv with a
// large output runs as our AVX-512 step over the conv's blocked output rather
// than oneDNN's swish post-op; a small output keeps the post-op; alone it is
// the same native step. Skipped without AVX-512F (oneDNN's then).
TEST(FastPathsTest, LargeSiluRunsNativelyAfterItsProducer) {
  if (kernels::FastUnaryKernel("Swish") == nullptr) GTEST_SKIP() << "neither AVX-512F nor AVX2+FMA";
  for (int64_t side : {40, 8}) {
    SCOPED_TRACE(side);
    GraphBuilder b;
    const Dims in = {1, 8, side, side};
    Value* x = b.Input("x", DType::kFloat, D(in));
    Value* c = ConvOf(b, x, 8, 24, {1, 1}, {});
    // A SiLU of a SiLU: the second has no producer to fuse into.
    b.Output(b.Op("Swish", {b.Op("Swish", {c})}));
    auto model = b.Build(24);
    std::string plan = RunBoth(*model, {{"x", RandomF32(in, 47, -4, 4)}}, 0, 1e-5, 1e-5);
    const bool large = side * side * 24 >= (1 << 14);
    EXPECT_EQ(plan.find("+ [swish]") == std::string::npos, large) << plan;
    EXPECT_NE(plan.find("swish\tSwish"), std::string::npos) << plan;
  }
}

// A large gated SiLU spelled out (Swish(gate) * up, SwiGLU's form, whose Mul
// could be the Swish's binary post-op): the Swish still runs on our kernel,
// not as oneDNN's swish eltwise carrying the Mul.
TEST(FastPathsTest, LargeGatedSiluRunsNatively) {
  if (kernels::FastUnaryKernel("Swish") == nullptr) GTEST_SKIP() << "neither AVX-512F nor AVX2+FMA";
  GraphBuilder b;
  const Dims in = {1, 8, 40, 40};
  Value* x = b.Input("x", DType::kFloat, D(in));
  Value* up = b.Input("up", DType::kFloat, D({1, 24, 40, 40}));
  Value* gate = ConvOf(b, x, 8, 24, {1, 1}, {});
  b.Output(b.Op("Mul", {b.Op("Swish", {gate}), up}));
  auto model = b.Build(24);
  std::string plan = RunBoth(
      *model, {{"x", RandomF32(in, 48, -4, 4)}, {"up", RandomF32({1, 24, 40, 40}, 49, -2, 2)}}, 0, 1e-5, 1e-5);
  EXPECT_NE(plan.find("swish\tSwish"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("eltwise\tSwish"), std::string::npos) << plan;
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// A residual Add after a conv rides on the conv: as a binary post-op where
// oneDNN has that fast, else as its sum post-op into a destination that
// starts as the residual (AVX-512's brgconv; Step::accumulate). Every way
// the residual can stand: an activation dying at the Add (its bytes become
// the output's), the conv's own input (which the conv must not overwrite
// while reading it), a value read again after the Add, an Add whose result
// is a graph output; and a plain graph input, whose layout the conv does not
// write (a binary step then: only the values are checked).
TEST(FastPathsTest, ResidualAddsRideOnTheirConv) {
  enum class Residual { kDying, kGraphInput, kConvInput, kReadLater };
  for (Residual kind : {Residual::kDying, Residual::kGraphInput, Residual::kConvInput, Residual::kReadLater}) {
    for (bool relu_after : {false, true}) {
      SCOPED_TRACE(absl::StrCat("residual kind ", static_cast<int>(kind), relu_after ? ", relu after" : ""));
      GraphBuilder b;
      const Dims in = {1, 32, 12, 12};
      Value* x = b.Input("x", DType::kFloat, D(in));
      Value* r = kind == Residual::kGraphInput ? x : b.Op("Relu", {ConvOf(b, x, 32, 32, {1, 1}, {})});
      Value* h = kind == Residual::kConvInput ? r : b.Op("Relu", {ConvOf(b, r, 32, 16, {1, 1}, {})});
      Value* c = ConvOf(b, h, kind == Residual::kConvInput ? 32 : 16, 32, {1, 1}, {});
      Value* y = b.Op("Add", {c, r});
      if (relu_after) y = b.Op("Relu", {y});
      if (kind == Residual::kReadLater) y = b.Op("Mul", {y, r});
      b.Output(ConvOf(b, y, 32, 8, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})}));
      if (kind == Residual::kDying) b.Output(y);  // also a graph output
      auto model = b.Build(13);
      std::string plan = RunBoth(*model, {{"x", RandomF32(in, 51, -1, 1)}}, 0, 1e-4, 1e-4);
      if (kind == Residual::kGraphInput) continue;
      EXPECT_NE(plan.find("Add(residual"), std::string::npos) << plan;
      EXPECT_EQ(plan.find("binary\tAdd"), std::string::npos) << plan;
    }
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// Depthwise convs between pointwise ones (MobileNet, EfficientNet), 3x3 and
// 5x5, strides 1 and 2, with an activation after: never on oneDNN's brgemm
// depthwise kernel, which AVX-512 CPUs are offered first for channels-last
// and run slower than the direct one (ops_conv.cc says by how much).
TEST(FastPathsTest, DepthwiseConvsRunOnTheDirectKernel) {
  for (int64_t k : {3, 5}) {
    for (int64_t stride : {1, 2}) {
      SCOPED_TRACE(absl::StrCat(k, "x", k, " stride ", stride));
      GraphBuilder b;
      const Dims in = {1, 16, 20, 20};
      Value* x = b.Input("x", DType::kFloat, D(in));
      Value* h = b.Op("Relu", {ConvOf(b, x, 16, 48, {1, 1}, {})});
      const int64_t p = k / 2;
      h = b.Op("HardSwish", {ConvOf(b, h, 48, 48, {k, k},
                                     {Attribute::Ints("pads", {p, p, p, p}), Attribute::Ints("strides", {stride, stride})},
                                     48)});
      b.Output(ConvOf(b, h, 48, 16, {1, 1}, {}));
      auto model = b.Build(14);
      std::string plan = RunBoth(*model, {{"x", RandomF32(in, 61, -1, 1)}}, 0, 1e-4, 1e-4);
      EXPECT_EQ(plan.find("brdgmm"), std::string::npos) << plan;
    }
  }
}

}  // namespace
}  // namespace aic::cpu

namespace aic::cpu {
namespace {

// A strided 1x1 conv (ResNet's downsampling projection) never runs oneDNN's
// brgemm 1x1 kernel, which is up to 2.6x slower there than its direct one on
// AVX-512 CPUs (ops_conv.cc); a stride-1 one may.
TEST(FastPathsTest, StridedPointwiseConvsRunOnTheDirectKernel) {
  GraphBuilder b;
  const Dims in = {1, 32, 28, 28};
  Value* x = b.Input("x", DType::kFloat, D(in));
  Value* h = b.Op("Relu", {ConvOf(b, x, 32, 64, {3, 3}, {Attribute::Ints("pads", {1, 1, 1, 1})})});
  Value* down = ConvOf(b, h, 64, 128, {1, 1}, {Attribute::Ints("strides", {2, 2})});
  b.Output(b.Op("Relu", {down}));
  auto model = b.Build(14);
  std::string plan = RunBoth(*model, {{"x", RandomF32(in, 71, -1, 1)}}, 0, 1e-4, 1e-4);
  EXPECT_EQ(plan.find("brgconv_1x1"), std::string::npos) << plan;  // the only 1x1 conv is the strided one
}

}  // namespace
}  // namespace aic::cpu
