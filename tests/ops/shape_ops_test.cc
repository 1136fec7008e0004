// Tests of the shape op family (Reshape, Flatten, Squeeze, Unsqueeze,
// Identity, Shape, Size) and of the seed traits of the tensor families.
#include <gtest/gtest.h>

#include "graph/builder.h"
#include "ops/infer_shapes.h"
#include "ops/registry.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

using testing::InferNode;
using testing::RunNode;
using testing::Op;
using testing::SingleNode;

Tensor F(std::vector<float> v, std::vector<int64_t> dims) { return Tensor::FromVector<float>(v, dims); }
Tensor I(std::vector<int64_t> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>(v, {n});
}
TypeInfo FT(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(dims)); }
TypeInfo I64T(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kInt64, Shape(dims)); }
Dim S(const char* name) { return Dim::Symbol(name); }

// Runs inference and traits of a one-node model; input i is a constant when
// consts[i] is non-null.
Traits TraitsOf(const SingleNode& spec, const std::vector<TypeInfo>& types,
                const std::vector<const Tensor*>& consts = {}) {
  GraphBuilder b;
  std::vector<Value*> ins;
  for (size_t i = 0; i < types.size(); ++i) {
    std::string name = "in" + std::to_string(i);
    ins.push_back(i < consts.size() && consts[i] ? b.Constant(name, *consts[i]) : b.Input(name, types[i]));
  }
  std::vector<Value*> outs = b.OpN(spec.op_type, ins, spec.num_outputs, spec.attributes);
  Node* node = b.last_node();
  std::vector<const Tensor*> c(types.size(), nullptr);
  for (size_t i = 0; i < consts.size(); ++i) c[i] = consts[i];
  OpContext ctx(*node, spec.opset, types, c, nullptr);
  const OpDef* def = OpRegistry::Global().Find("", spec.op_type, spec.opset);
  EXPECT_NE(def, nullptr);
  EXPECT_TRUE(def->infer(ctx).ok());
  return def->traits(ctx);
}

// ---- Reshape ----

TEST(ShapeOpsTest, ReshapeNumerics) {
  auto out = RunNode(Op("Reshape"), {F({1, 2, 3, 4, 5, 6}, {2, 3}), I({3, -1})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*out)[0].data<float>()[5], 6.f);
}

TEST(ShapeOpsTest, ReshapeZeroCopiesDimUnlessAllowzero) {
  auto out = RunNode(Op("Reshape"), {F({1, 2, 3, 4, 5, 6}, {2, 3}), I({0, 3})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 3}));
  auto bad = RunNode(Op("Reshape", {Attribute::Int("allowzero", 1)}),
                     {F({1, 2, 3, 4, 5, 6}, {2, 3}), I({0, 3})});
  EXPECT_FALSE(bad.ok());
}

TEST(ShapeOpsTest, ReshapeSymbolicZeroAndMinusOne) {
  Tensor shape = I({0, -1, 4});
  auto t = InferNode(Op("Reshape"), {FT({S("batch"), 8, 6}), I64T({3})}, {nullptr, &shape});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape, Shape({S("batch"), 12, 4}));
  // -1 takes the remaining symbol when the known parts cancel.
  Tensor flat = I({-1, 6});
  t = InferNode(Op("Reshape"), {FT({S("n"), 2, 3}), I64T({2})}, {nullptr, &flat});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape, Shape({S("n"), 6}));
}

TEST(ShapeOpsTest, ReshapeBadTargetIsAnError) {
  Tensor shape = I({5, -1});
  EXPECT_FALSE(InferNode(Op("Reshape"), {FT({2, 3}), I64T({2})}, {nullptr, &shape}).ok());
  Tensor two = I({-1, -1});
  EXPECT_FALSE(InferNode(Op("Reshape"), {FT({2, 3}), I64T({2})}, {nullptr, &two}).ok());
}

// ---- Flatten ----

TEST(ShapeOpsTest, FlattenNumericsAndSymbolic) {
  auto out = RunNode(Op("Flatten", {Attribute::Int("axis", 2)}), {F(std::vector<float>(24, 1.f), {2, 3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{6, 4}));
  auto t = InferNode(Op("Flatten"), {FT({S("b"), 3, 4})});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 12}));
  EXPECT_FALSE(InferNode(Op("Flatten", {Attribute::Int("axis", 5)}), {FT({2, 3})}).ok());
}

// ---- Squeeze / Unsqueeze ----

TEST(ShapeOpsTest, SqueezeAxesInputAndAttribute) {
  auto out = RunNode(Op("Squeeze"), {F({1, 2, 3}, {1, 3, 1}), I({0})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{3, 1}));
  auto all = RunNode(Op("Squeeze", {}, 11), {F({1, 2, 3}, {1, 3, 1})});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ((*all)[0].dims(), (std::vector<int64_t>{3}));
  auto attr = InferNode(Op("Squeeze", {Attribute::Ints("axes", {-1})}, 11), {FT({S("b"), 1})});
  ASSERT_TRUE(attr.ok()) << attr.status();
  EXPECT_EQ((*attr)[0].shape, Shape({S("b")}));
  EXPECT_FALSE(InferNode(Op("Squeeze", {Attribute::Ints("axes", {0})}, 11), {FT({2, 1})}).ok());
}

TEST(ShapeOpsTest, Unsqueeze) {
  Tensor axes = I({0, 3});
  auto t = InferNode(Op("Unsqueeze"), {FT({S("b"), 5}), I64T({2})}, {nullptr, &axes});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)[0].shape, Shape({1, S("b"), 5, 1}));
  auto out = RunNode(Op("Unsqueeze", {Attribute::Ints("axes", {1})}, 11), {F({1, 2}, {2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{2, 1}));
  Tensor dup = I({1, 1});
  EXPECT_FALSE(InferNode(Op("Unsqueeze"), {FT({2}), I64T({2})}, {nullptr, &dup}).ok());
}

// ---- Identity, Shape, Size ----

TEST(ShapeOpsTest, IdentityPassesThrough) {
  auto out = RunNode(Op("Identity"), {F({7, 8}, {2})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].data<float>()[1], 8.f);
  auto t = InferNode(Op("Identity"), {FT({S("b"), 2})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({S("b"), 2}));
  auto seq = InferNode(Op("Identity"), {TypeInfo::SequenceOf(FT({2}))});
  ASSERT_TRUE(seq.ok());
  EXPECT_EQ((*seq)[0].kind, TypeInfo::Kind::kSequence);
}

TEST(ShapeOpsTest, ShapeWithStartEnd) {
  auto out = RunNode(Op("Shape", {Attribute::Int("start", 1), Attribute::Int("end", -1)}),
                     {F(std::vector<float>(24, 0.f), {2, 3, 4})});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1}));
  EXPECT_EQ((*out)[0].data<int64_t>()[0], 3);
  auto t = InferNode(Op("Shape"), {FT({S("b"), 3})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape({2}));
  EXPECT_EQ((*t)[0].dtype, DType::kInt64);
}

TEST(ShapeOpsTest, ShapeGatherReshapeResolvesStaticDims) {
  // x: [batch, 4, 6]; Reshape(y, Concat(Gather(Shape(x), 1), [-1])) folds to [4, -1].
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {S("batch"), 4, 6});
  Value* y = b.Input("y", DType::kFloat, {8, 3});
  Value* shape = b.Op("Shape", {x});
  Value* idx = b.Constant("idx", Tensor::FromVector<int64_t>({1}, {1}));
  Value* dim = b.Op("Gather", {shape, idx});
  Value* rest = b.Constant("rest", I({-1}));
  Value* target = b.Op("Concat", {dim, rest}, {Attribute::Int("axis", 0)});
  Value* out = b.Op("Reshape", {y, target});
  b.Output(out);
  auto model = b.Build(17);
  InferOptions o;
  o.best_effort = false;
  ASSERT_TRUE(InferShapes(*model, o).ok());
  EXPECT_EQ(out->shape(), Shape({4, 6}));
}

TEST(ShapeOpsTest, ReshapeAndExpandToAShapeOutputKeepSymbols) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {S("batch"), 6});
  Value* y = b.Input("y", DType::kFloat, {S("batch"), 2, 3});
  Value* z = b.Input("z", DType::kFloat, {1, 3});
  Value* shape = b.Op("Shape", {y});
  Value* r = b.Op("Reshape", {x, shape});
  Value* e = b.Op("Expand", {z, shape});
  b.Output(r);
  b.Output(e);
  auto model = b.Build(17);
  InferOptions o;
  o.best_effort = false;
  ASSERT_TRUE(InferShapes(*model, o).ok());
  EXPECT_EQ(r->shape(), Shape({S("batch"), 2, 3}));
  EXPECT_EQ(e->shape(), Shape({S("batch"), 2, 3}));
}

// HF's head split: view(batch, seq, -1, 64) with batch and seq read off the
// input's shape (Shape -> Gather -> Unsqueeze -> Concat with constants, and
// a Cast as TorchScript writes it): the -1 resolves to 4 and the symbols
// carry through; Expand to Concat(Shape) keeps its rank and known dims.
TEST(ShapeOpsTest, ReshapeToAConcatOfShapeElementsKeepsSymbols) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {S("batch"), S("seq"), 256});
  Value* shape = b.Op("Shape", {x});
  auto element = [&](int64_t i) {
    Value* g = b.Op("Gather", {shape, b.Constant("i" + std::to_string(i), Tensor::Scalar<int64_t>(i))});
    Value* c = b.Op("Cast", {g}, {Attribute::Int("to", static_cast<int64_t>(DType::kInt64))});
    return b.Op("Unsqueeze", {c, b.Constant("ax" + std::to_string(i), I({0}))});
  };
  Value* target = b.Op("Concat", {element(0), element(1), b.Constant("m1", I({-1})), b.Constant("d", I({64}))},
                       {Attribute::Int("axis", 0)});
  Value* heads = b.Op("Reshape", {x, target});
  // seq * 1 and a Slice of the shape also keep their symbol.
  Value* seq = b.Op("Mul", {b.Op("Slice", {shape, b.Constant("s0", I({1})), b.Constant("s1", I({2}))}),
                            b.Constant("one", I({1}))});
  Value* mask_shape = b.Op("Concat", {b.Constant("ones", I({1, 1})), seq, seq}, {Attribute::Int("axis", 0)});
  // torch's Expand target: Where(shape == -1, 1, shape).
  Value* minus_one = b.Constant("minus_one", Tensor::Scalar<int64_t>(-1));
  Value* safe_shape = b.Op("Where", {b.Op("Equal", {mask_shape, minus_one}),
                                     b.Constant("one_s", Tensor::Scalar<int64_t>(1)), mask_shape});
  Value* mask = b.Op("Expand", {b.Input("m", DType::kFloat, {1, 1, 1, 1}), safe_shape});
  // A target whose length only is known: the rank, x's dims where not 1.
  Value* free_shape = b.Input("free", DType::kInt64, {3});
  Value* wide = b.Op("Expand", {b.Input("w", DType::kFloat, {5, 1}), free_shape});
  b.Output(heads);
  b.Output(mask);
  b.Output(wide);
  auto model = b.Build(17);
  InferOptions o;
  o.best_effort = false;
  ASSERT_TRUE(InferShapes(*model, o).ok());
  EXPECT_EQ(heads->shape(), Shape({S("batch"), S("seq"), 4, 64}));
  EXPECT_EQ(mask->shape(), Shape({1, 1, S("seq"), S("seq")}));
  ASSERT_EQ(wide->shape().rank(), 3);
  EXPECT_EQ(wide->shape()[1], Dim(5));
}

// HF's position embeddings: position_ids[:, 0:seq] of a [1, 512] buffer is
// min(seq, 512) long, and added to the [batch, seq] word embeddings it gives
// seq (where the model runs at all); the same slice of a seq axis is seq.
TEST(ShapeOpsTest, PrefixSliceToADimBroadcastsBackToIt) {
  GraphBuilder b;
  Value* ids = b.Input("ids", DType::kInt64, {S("batch"), S("seq")});
  Value* seq = b.Op("Slice", {b.Op("Shape", {ids}), b.Constant("one", I({1})), b.Constant("two", I({2}))});
  Value* buffer = b.Constant("buffer", Tensor(DType::kFloat, {1, 512}));
  Value* zero = b.Constant("zero", I({0}));
  Value* axis = b.Constant("axis", I({1}));
  Value* positions = b.Op("Slice", {buffer, zero, seq, axis});
  Value* words = b.Op("Cast", {ids}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
  Value* sum = b.Op("Add", {words, positions});
  Value* sum2 = b.Op("Add", {positions, words});
  Value* own = b.Op("Slice", {words, zero, seq, axis});
  // A slice that does not start at 0 says nothing of its length.
  Value* later = b.Op("Slice", {buffer, b.Constant("three", I({3})), seq, axis});
  b.Output(sum);
  b.Output(sum2);
  b.Output(own);
  b.Output(later);
  auto model = b.Build(17);
  InferOptions o;
  o.best_effort = false;
  ASSERT_TRUE(InferShapes(*model, o).ok());
  EXPECT_EQ(positions->shape(), Shape({1, S("min(seq,512)")}));
  EXPECT_EQ(sum->shape(), Shape({S("batch"), S("seq")}));
  EXPECT_EQ(sum2->shape(), Shape({S("batch"), S("seq")}));
  EXPECT_EQ(own->shape(), Shape({S("batch"), S("seq")}));
  ASSERT_EQ(later->shape().rank(), 2);
  EXPECT_FALSE(later->shape()[1].SameAs(S("seq")));
  EXPECT_FALSE(later->shape()[1].SameAs(S("min(seq,512)")));
}

// torch's legacy (TorchScript) exporter: the Expand target of repeat_kv is
// Where(t == ConstantOfShape(Shape(t)) * -1, ConstantOfShape(Shape(t)), t),
// and arange(seq) is Range(0, Shape(x)[1], 1).
TEST(ShapeOpsTest, LegacyExporterFillsAndRangeKeepSymbols) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {S("batch"), 2, 1, S("seq"), 32});
  Value* shape = b.Op("Shape", {x});
  auto element = [&](int64_t i) {
    Value* g = b.Op("Gather", {shape, b.Constant("i" + std::to_string(i), Tensor::Scalar<int64_t>(i))});
    return b.Op("Unsqueeze", {g, b.Constant("ax" + std::to_string(i), I({0}))});
  };
  Value* t = b.Op("Reshape", {b.Op("Concat", {element(0), b.Constant("two", I({2})), b.Constant("four", I({4})),
                                              element(3), b.Constant("d", I({32}))},
                                    {Attribute::Int("axis", 0)}),
                              b.Constant("flat", I({-1}))});
  Tensor one = I({1});
  Value* ones = b.Op("ConstantOfShape", {b.Op("Shape", {t})}, {Attribute::TensorValue("value", one)});
  Value* minus_ones = b.Op("Mul", {ones, b.Constant("m1", Tensor::Scalar<int64_t>(-1))});
  Value* target = b.Op("Where", {b.Op("Equal", {t, minus_ones}), ones, t});
  Value* repeated = b.Op("Expand", {x, target});
  Value* seq = b.Op("Gather", {shape, b.Constant("three", Tensor::Scalar<int64_t>(3))});
  Value* positions = b.Op("Range", {b.Constant("zero", Tensor::Scalar<int64_t>(0)), seq,
                                    b.Constant("step", Tensor::Scalar<int64_t>(1))});
  // A step other than 1 says nothing of the length's symbol.
  Value* odd = b.Op("Range", {b.Constant("zero2", Tensor::Scalar<int64_t>(0)), seq,
                              b.Constant("step2", Tensor::Scalar<int64_t>(2))});
  b.Output(repeated);
  b.Output(positions);
  b.Output(odd);
  auto model = b.Build(17);
  InferOptions o;
  o.best_effort = false;
  ASSERT_TRUE(InferShapes(*model, o).ok());
  EXPECT_EQ(repeated->shape(), Shape({S("batch"), 2, 4, S("seq"), 32}));
  EXPECT_EQ(positions->shape(), Shape({S("seq")}));
  ASSERT_EQ(odd->shape().rank(), 1);
  EXPECT_FALSE(odd->shape()[0].is_value());
  EXPECT_NE(odd->shape()[0], Dim(S("seq")));
}

TEST(ShapeOpsTest, SizeIsConstantWhenStatic) {
  auto out = RunNode(Op("Size"), {F(std::vector<float>(6, 0.f), {2, 3})});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].data<int64_t>()[0], 6);
  auto t = InferNode(Op("Size"), {FT({S("b"), 3})});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[0].shape, Shape::Scalar());
}

// ---- Traits of the seed's ops ----

TEST(TensorTraitsTest, ViewOpsAreLinearInvertibleReindexing) {
  Tensor shape = I({6});
  Traits t = TraitsOf(Op("Reshape"), {FT({2, 3}), I64T({1})}, {nullptr, &shape});
  EXPECT_EQ(t.semantic_name, "Reshape");
  EXPECT_EQ(t.linearity, Linearity::kLinear);
  EXPECT_EQ(t.invertibility, Invertibility::kInvertible);
  EXPECT_EQ(t.collapse, CollapseKind::kNone);
  EXPECT_EQ(t.effect, RepresentationEffect::kPreserves);
  EXPECT_EQ(t.removable_when, "output shape equals input shape");
  EXPECT_EQ(t.fuses_with, std::vector<std::string>{"Reshape"});
  EXPECT_EQ(t.PropertyWords(), (std::vector<std::string>{"linear", "invertible"}));
  for (const char* op : std::vector<const char*>{"Flatten", "Identity"}) {
    Traits v = TraitsOf(Op(op), {FT({2, 3})});
    EXPECT_EQ(v.semantic_name, op);
    EXPECT_EQ(v.invertibility, Invertibility::kInvertible);
    EXPECT_EQ(v.fuses_with, std::vector<std::string>{"Reshape"});
  }
  EXPECT_EQ(TraitsOf(Op("Identity"), {FT({2})}).removable_when, "always (Identity)");
}

TEST(TensorTraitsTest, TransposeAndConcat) {
  Traits t = TraitsOf(Op("Transpose", {Attribute::Ints("perm", {1, 0})}), {FT({2, 3})});
  EXPECT_EQ(t.linearity, Linearity::kLinear);
  EXPECT_EQ(t.invertibility, Invertibility::kInvertible);
  EXPECT_EQ(t.removable_when, "perm is identity");
  EXPECT_EQ(t.fuses_with, (std::vector<std::string>{"Transpose", "Gemm", "MatMul"}));
  Traits c = TraitsOf(Op("Concat", {Attribute::Int("axis", 0)}), {FT({2}), FT({3})});
  EXPECT_EQ(c.linearity, Linearity::kLinear);
  EXPECT_EQ(c.invertibility, Invertibility::kInvertible);
  EXPECT_EQ(c.effect, RepresentationEffect::kPreserves);
}

TEST(TensorTraitsTest, SliceAndGatherSelect) {
  Tensor starts = I({1}), ends = I({3});
  Traits s = TraitsOf(Op("Slice"), {FT({4}), I64T({1}), I64T({1})}, {nullptr, &starts, &ends});
  EXPECT_EQ(s.collapse, CollapseKind::kSelects);
  EXPECT_EQ(s.invertibility, Invertibility::kIrreversible);
  EXPECT_TRUE(s.collapse_producing());
  Tensor all_end = I({4}), zero = I({0});
  Traits keep = TraitsOf(Op("Slice"), {FT({4}), I64T({1}), I64T({1})}, {nullptr, &zero, &all_end});
  EXPECT_EQ(keep.collapse, CollapseKind::kNone);
  Tensor idx = I({0, 2});
  Traits g = TraitsOf(Op("Gather"), {FT({4, 2}), I64T({2})}, {nullptr, &idx});
  EXPECT_EQ(g.collapse, CollapseKind::kSelects);
  EXPECT_EQ(g.linearity, Linearity::kLinear);
}

TEST(TensorTraitsTest, MovementCostIsBytesOnly) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2, 3});
  b.Op("Transpose", {x});
  Node* node = b.last_node();
  OpContext ctx(*node, 17, {FT({2, 3})}, {nullptr}, nullptr);
  const OpDef* def = OpRegistry::Global().Find("", "Transpose", 17);
  ASSERT_TRUE(def->infer(ctx).ok());
  Cost c = def->cost(ctx);
  EXPECT_TRUE(c.known);
  EXPECT_EQ(c.flops, 0);
  EXPECT_EQ(c.macs, 0);
  EXPECT_EQ(c.bytes_read, 24);
  EXPECT_EQ(c.bytes_written, 24);
}

}  // namespace
}  // namespace aic
