#include <map>
#include <memory>

#include <gtest/gtest.h>

#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "ops/infer_shapes.h"
#include "ops/registry.h"
#include "ops/sequence/type_proto_decode.h"

namespace aic {
namespace {

TypeInfo F32(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kFloat, Shape(std::move(dims))); }
TypeInfo I64(std::vector<Dim> dims) { return TypeInfo::Tensor(DType::kInt64, Shape(std::move(dims))); }

Tensor F(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<float>(v, {n});
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.num_elements(); ++i) v.push_back(t.ElementAsDouble(i));
  return v;
}

RuntimeValue Seq(std::vector<Tensor> items) {
  const DType dtype = items.empty() ? DType::kFloat : items[0].dtype();
  return RuntimeValue::Sequence(std::move(items), dtype);
}

// A one-node model over named inputs of the given types, opset 17 unless given.
struct OneNode {
  std::unique_ptr<Model> model;
  std::vector<Value*> outputs;
};
OneNode Build(const std::string& op, const std::vector<std::pair<std::string, TypeInfo>>& inputs,
              std::vector<Attribute> attrs = {}, size_t num_outputs = 1, int64_t opset = 17) {
  GraphBuilder b;
  std::vector<Value*> ins;
  for (const auto& [name, type] : inputs) {
    ins.push_back(name.empty() ? nullptr : b.Input(name, type));
  }
  OneNode n;
  n.outputs = b.OpN(op, ins, num_outputs, std::move(attrs));
  for (Value* v : n.outputs) b.Output(v);
  n.model = b.Build(opset);
  return n;
}

absl::StatusOr<std::vector<RuntimeValue>> RunModel(const Model& m,
                                                   const std::map<std::string, RuntimeValue>& feeds) {
  ReferenceExecutor exec(m);
  return exec.Run(feeds);
}

TypeInfo SeqOf(TypeInfo t) { return TypeInfo::SequenceOf(std::move(t)); }
TypeInfo Scalar(DType t) { return TypeInfo::Tensor(t, Shape::Scalar()); }

// Traits of the first node after inference.
Traits TraitsOf(const Model& m) {
  const Node& node = *m.graph->nodes()[0];
  std::vector<TypeInfo> types;
  for (const Value* v : node.inputs()) types.push_back(v ? v->type() : TypeInfo());
  OpContext ctx(node, m.OpsetFor(""), types, {}, nullptr);
  return OpRegistry::Global().Find("", node.op_type, m.OpsetFor(""))->traits(ctx);
}

// ---- Basic container ops ---------------------------------------------------

TEST(SequenceTest, ConstructAtLength) {
  OneNode n = Build("SequenceConstruct", {{"a", F32({Dim(2)})}, {"b", F32({Dim(1)})}});
  auto r = RunModel(*n.model, {{"a", F({1, 2})}, {"b", F({3})}});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE((*r)[0].is_sequence());
  EXPECT_EQ((*r)[0].sequence.size(), 2u);
  EXPECT_EQ((*r)[0].sequence_dtype, DType::kFloat);

  OneNode at = Build("SequenceAt", {{"s", SeqOf(F32({Dim(2)}))}, {"p", Scalar(DType::kInt32)}});
  auto last = RunModel(*at.model, {{"s", Seq({F({1, 2}), F({3, 4})})},
                                   {"p", Tensor::Scalar<int32_t>(-1)}});
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_EQ(Values((*last)[0].tensor), (std::vector<double>{3, 4}));

  OneNode len = Build("SequenceLength", {{"s", SeqOf(F32({Dim(2)}))}});
  auto l = RunModel(*len.model, {{"s", Seq({F({1, 2}), F({3, 4}), F({5, 6})})}});
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->at(0).tensor.dtype(), DType::kInt64);
  EXPECT_EQ(Values(l->at(0).tensor), (std::vector<double>{3}));
}

TEST(SequenceTest, ConstructRejectsMixedDtypes) {
  OneNode n = Build("SequenceConstruct", {{"a", F32({Dim(1)})}, {"b", I64({Dim(1)})}});
  EXPECT_FALSE(InferShapes(*n.model, {.best_effort = false}).ok());
  auto r = RunModel(*n.model, {{"a", F({1})}, {"b", Tensor::FromVector<int64_t>({1}, {1})}});
  EXPECT_FALSE(r.ok());
}

TEST(SequenceTest, AtOutOfRangeIsAnError) {
  OneNode at = Build("SequenceAt", {{"s", SeqOf(F32({Dim(2)}))}, {"p", Scalar(DType::kInt64)}});
  auto r = RunModel(*at.model, {{"s", Seq({F({1, 2})})}, {"p", Tensor::Scalar<int64_t>(1)}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("SequenceAt"), std::string::npos);
}

TEST(SequenceTest, InsertAndErasePositions) {
  OneNode ins = Build("SequenceInsert", {{"s", SeqOf(F32({Dim(1)}))},
                                         {"t", F32({Dim(1)})},
                                         {"p", Scalar(DType::kInt64)}});
  auto front = RunModel(*ins.model, {{"s", Seq({F({1}), F({2})})},
                                     {"t", F({0})},
                                     {"p", Tensor::Scalar<int64_t>(-2)}});
  ASSERT_TRUE(front.ok()) << front.status();
  ASSERT_EQ((*front)[0].sequence.size(), 3u);
  EXPECT_EQ(Values((*front)[0].sequence[0]), (std::vector<double>{0}));
  auto end = RunModel(*ins.model, {{"s", Seq({F({1})})}, {"t", F({9})},
                                   {"p", Tensor::Scalar<int64_t>(1)}});
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(Values((*end)[0].sequence[1]), (std::vector<double>{9}));
  auto past = RunModel(*ins.model, {{"s", Seq({F({1})})}, {"t", F({9})},
                                    {"p", Tensor::Scalar<int64_t>(2)}});
  EXPECT_FALSE(past.ok());

  OneNode wrong = Build("SequenceInsert", {{"s", SeqOf(F32({Dim(1)}))}, {"t", I64({Dim(1)})}});
  EXPECT_FALSE(InferShapes(*wrong.model, {.best_effort = false}).ok());

  OneNode erase = Build("SequenceErase", {{"s", SeqOf(F32({Dim(1)}))}});
  auto e = RunModel(*erase.model, {{"s", Seq({F({1}), F({2})})}});
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ((*e)[0].sequence.size(), 1u);
  EXPECT_EQ(Values((*e)[0].sequence[0]), (std::vector<double>{1}));
  auto empty = RunModel(*erase.model, {{"s", Seq({})}});
  EXPECT_FALSE(empty.ok());
}

TEST(SequenceTest, EmptyHasTheAttributeDtype) {
  OneNode n = Build("SequenceEmpty", {}, {Attribute::Int("dtype", 7)});
  auto r = RunModel(*n.model, {});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE((*r)[0].sequence.empty());
  EXPECT_EQ((*r)[0].sequence_dtype, DType::kInt64);
  ASSERT_TRUE(InferShapes(*n.model, {.best_effort = false}).ok());
  EXPECT_EQ(n.outputs[0]->type().element->dtype, DType::kInt64);
}

TEST(SequenceTest, InferElementTypes) {
  OneNode n = Build("SequenceConstruct", {{"a", F32({Dim::Symbol("N"), Dim(2)})},
                                          {"b", F32({Dim::Symbol("N"), Dim(3)})}});
  ASSERT_TRUE(InferShapes(*n.model, {.best_effort = false}).ok());
  const TypeInfo& seq = n.outputs[0]->type();
  ASSERT_EQ(seq.kind, TypeInfo::Kind::kSequence);
  EXPECT_EQ(seq.element->shape[0], Dim::Symbol("N"));
  EXPECT_TRUE(seq.element->shape[1].is_symbol());
  EXPECT_NE(seq.element->shape[1], Dim::Symbol("N"));

  OneNode at = Build("SequenceAt", {{"s", SeqOf(F32({Dim::Symbol("N")}))},
                                    {"p", Scalar(DType::kInt64)}});
  ASSERT_TRUE(InferShapes(*at.model, {.best_effort = false}).ok());
  EXPECT_EQ(at.outputs[0]->type().ToString(), "float[N]");

  OneNode bad_pos = Build("SequenceAt", {{"s", SeqOf(F32({Dim(1)}))}, {"p", F32({})}});
  EXPECT_FALSE(InferShapes(*bad_pos.model, {.best_effort = false}).ok());
}

TEST(SequenceTest, Traits) {
  OneNode at = Build("SequenceAt", {{"s", SeqOf(F32({Dim(1)}))}, {"p", Scalar(DType::kInt64)}});
  Traits t = TraitsOf(*at.model);
  EXPECT_EQ(t.semantic_name, "SequenceAt");
  EXPECT_EQ(t.collapse, CollapseKind::kSelects);
  OneNode c = Build("SequenceConstruct", {{"a", F32({Dim(1)})}, {"b", F32({Dim(1)})}});
  Traits ct = TraitsOf(*c.model);
  EXPECT_EQ(ct.meaning, "y = [x0 .. x1]");
  EXPECT_EQ(ct.PropertyWords(), (std::vector<std::string>{"linear", "invertible"}));
}

// ---- Split / concat -------------------------------------------------------

TEST(SequenceTest, ConcatFromSequenceJoinsOrStacks) {
  OneNode cat = Build("ConcatFromSequence", {{"s", SeqOf(F32({Dim::Symbol("n"), Dim(2)}))}},
                      {Attribute::Int("axis", 0)});
  RuntimeValue s = Seq({Tensor::FromVector<float>({1, 2}, {1, 2}),
                        Tensor::FromVector<float>({3, 4, 5, 6}, {2, 2})});
  auto r = RunModel(*cat.model, {{"s", s}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].tensor.dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values((*r)[0].tensor), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  ASSERT_TRUE(InferShapes(*cat.model, {.best_effort = false}).ok());
  EXPECT_EQ(cat.outputs[0]->shape().rank(), 2);
  EXPECT_EQ(cat.outputs[0]->shape()[1], Dim(2));

  OneNode stack = Build("ConcatFromSequence", {{"s", SeqOf(F32({Dim(2)}))}},
                        {Attribute::Int("axis", -1), Attribute::Int("new_axis", 1)});
  auto st = RunModel(*stack.model, {{"s", Seq({F({1, 2}), F({3, 4})})}});
  ASSERT_TRUE(st.ok()) << st.status();
  EXPECT_EQ((*st)[0].tensor.dims(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(Values((*st)[0].tensor), (std::vector<double>{1, 3, 2, 4}));

  auto mismatch = RunModel(*stack.model, {{"s", Seq({F({1, 2}), F({3})})}});
  EXPECT_FALSE(mismatch.ok());
}

TEST(SequenceTest, SplitToSequenceModes) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3, 4, 5}, {5});
  OneNode ones = Build("SplitToSequence", {{"x", F32({Dim(5)})}}, {Attribute::Int("keepdims", 0)});
  auto r1 = RunModel(*ones.model, {{"x", x}});
  ASSERT_TRUE(r1.ok()) << r1.status();
  ASSERT_EQ((*r1)[0].sequence.size(), 5u);
  EXPECT_EQ((*r1)[0].sequence[4].rank(), 0);
  EXPECT_EQ(Values((*r1)[0].sequence[4]), (std::vector<double>{5}));

  OneNode by_size = Build("SplitToSequence", {{"x", F32({Dim(5)})}, {"split", Scalar(DType::kInt64)}});
  auto r2 = RunModel(*by_size.model, {{"x", x}, {"split", Tensor::Scalar<int64_t>(2)}});
  ASSERT_TRUE(r2.ok()) << r2.status();
  ASSERT_EQ((*r2)[0].sequence.size(), 3u);
  EXPECT_EQ(Values((*r2)[0].sequence[2]), (std::vector<double>{5}));

  OneNode lens = Build("SplitToSequence",
                       {{"x", F32({Dim(5)})}, {"split", TypeInfo::Tensor(DType::kInt32, Shape({Dim(2)}))}});
  auto r3 = RunModel(*lens.model, {{"x", x}, {"split", Tensor::FromVector<int32_t>({1, 4}, {2})}});
  ASSERT_TRUE(r3.ok()) << r3.status();
  EXPECT_EQ(Values((*r3)[0].sequence[1]), (std::vector<double>{2, 3, 4, 5}));
  auto bad = RunModel(*lens.model, {{"x", x}, {"split", Tensor::FromVector<int32_t>({1, 1}, {2})}});
  EXPECT_FALSE(bad.ok());
}

TEST(SequenceTest, SplitToSequenceInfer) {
  OneNode ones = Build("SplitToSequence", {{"x", F32({Dim::Symbol("b"), Dim(6)})}},
                       {Attribute::Int("axis", 1), Attribute::Int("keepdims", 0)});
  ASSERT_TRUE(InferShapes(*ones.model, {.best_effort = false}).ok());
  EXPECT_EQ(ones.outputs[0]->type().ToString(), "seq(float[b])");

  // A constant split size dividing the dim gives equal pieces.
  GraphBuilder b;
  Value* x = b.Input("x", F32({Dim::Symbol("b"), Dim(6)}));
  Value* split = b.Constant("split", Tensor::Scalar<int64_t>(3));
  Value* y = b.Op("SplitToSequence", {x, split}, {Attribute::Int("axis", -1)});
  b.Output(y);
  auto m = b.Build(17);
  ASSERT_TRUE(InferShapes(*m, {.best_effort = false}).ok());
  EXPECT_EQ(y->type().ToString(), "seq(float[b, 3])");

  OneNode bad_axis = Build("SplitToSequence", {{"x", F32({Dim(6)})}}, {Attribute::Int("axis", 1)});
  EXPECT_FALSE(InferShapes(*bad_axis.model, {.best_effort = false}).ok());
}

// ---- SequenceMap ----------------------------------------------------------

TEST(SequenceTest, SequenceMapRunsBodyPerElement) {
  GraphBuilder b;
  Value* xs = b.Input("xs", SeqOf(F32({Dim::Symbol("N")})));
  Value* bias = b.Input("bias", F32({Dim(1)}));
  auto body = std::make_shared<Graph>(&b.graph());
  GraphBuilder bb(body.get());
  Value* e = bb.Input("e", F32({Dim::Symbol("N")}));
  Value* c = bb.Input("c", F32({Dim(1)}));
  Value* sum = bb.Op("Add", {e, c});
  sum->set_type(F32({Dim::Symbol("N")}));
  bb.Output(sum);
  Value* shape = bb.Op("Shape", {e});
  shape->set_type(I64({Dim(1)}));
  bb.Output(shape);
  std::vector<Value*> outs = b.OpN("SequenceMap", {xs, bias}, 2, {Attribute::GraphValue("body", body)});
  b.Output(outs[0]);
  b.Output(outs[1]);
  auto m = b.Build(17);
  auto r = RunModel(*m, {{"xs", Seq({F({1, 2}), F({3})})}, {"bias", F({10})}});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ((*r)[0].sequence.size(), 2u);
  EXPECT_EQ(Values((*r)[0].sequence[0]), (std::vector<double>{11, 12}));
  EXPECT_EQ(Values((*r)[1].sequence[1]), (std::vector<double>{1}));
  EXPECT_EQ((*r)[1].sequence_dtype, DType::kInt64);

  auto none = RunModel(*m, {{"xs", Seq({})}, {"bias", F({10})}});
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE((*none)[1].sequence.empty());
  EXPECT_EQ((*none)[1].sequence_dtype, DType::kInt64);  // from the body's declaration

  ASSERT_TRUE(InferShapes(*m, {.best_effort = false}).ok());
  EXPECT_EQ(outs[0]->type().ToString(), "seq(float[N])");
  EXPECT_EQ(TraitsOf(*m).semantic_name, "SequenceMap");
}

TEST(SequenceTest, SequenceMapLengthMismatchIsAnError) {
  GraphBuilder b;
  Value* xs = b.Input("xs", SeqOf(F32({Dim(1)})));
  Value* ys = b.Input("ys", SeqOf(F32({Dim(1)})));
  auto body = std::make_shared<Graph>(&b.graph());
  GraphBuilder bb(body.get());
  Value* e = bb.Input("e", F32({Dim(1)}));
  Value* f = bb.Input("f", F32({Dim(1)}));
  bb.Output(bb.Op("Add", {e, f}));
  b.Output(b.Op("SequenceMap", {xs, ys}, {Attribute::GraphValue("body", body)}));
  auto m = b.Build(17);
  auto r = RunModel(*m, {{"xs", Seq({F({1}), F({2})})}, {"ys", Seq({F({1})})}});
  EXPECT_FALSE(r.ok());
}

// ---- Optional -------------------------------------------------------------

// TypeProto{sequence_type{elem_type{tensor_type{elem_type: FLOAT, shape{dim{dim_value: 5}}}}}}.
std::string SeqOfFloat5Proto() {
  const std::string dim = std::string("\x0a\x02\x08\x05", 4);                // dim { dim_value: 5 }
  const std::string shape = std::string("\x12") + char(dim.size()) + dim;    // shape
  const std::string tensor = std::string("\x08\x01", 2) + shape;             // elem_type: 1
  const std::string type_t = std::string("\x0a") + char(tensor.size()) + tensor;
  const std::string seq = std::string("\x0a") + char(type_t.size()) + type_t;  // elem_type
  return std::string("\x22") + char(seq.size()) + seq;                       // sequence_type = 4
}

TEST(SequenceTest, DecodeTypeProto) {
  auto t = DecodeTypeProto(SeqOfFloat5Proto());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToString(), "seq(float[5])");
  EXPECT_FALSE(DecodeTypeProto(std::string("\x22\x10", 2)).ok());  // length past the end
}

TEST(SequenceTest, OptionalWrapsTestsAndUnwraps) {
  OneNode wrap = Build("Optional", {{"x", F32({Dim(2)})}});
  auto w = RunModel(*wrap.model, {{"x", F({1, 2})}});
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE((*w)[0].is_tensor());
  ASSERT_TRUE(InferShapes(*wrap.model, {.best_effort = false}).ok());
  EXPECT_EQ(wrap.outputs[0]->type().ToString(), "optional(float[2])");

  Attribute type;
  type.name = "type";
  type.type = AttrType::kTypeProto;
  type.opaque_protos = {SeqOfFloat5Proto()};
  OneNode empty = Build("Optional", {}, {type});
  auto e = RunModel(*empty.model, {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE((*e)[0].is_none());
  ASSERT_TRUE(InferShapes(*empty.model, {.best_effort = false}).ok());
  EXPECT_EQ(empty.outputs[0]->type().ToString(), "optional(seq(float[5]))");

  TypeInfo opt = TypeInfo::OptionalOf(F32({Dim(2)}));
  OneNode has = Build("OptionalHasElement", {{"o", opt}}, {}, 1, 15);
  auto yes = RunModel(*has.model, {{"o", F({1, 2})}});
  auto no = RunModel(*has.model, {{"o", RuntimeValue::None()}});
  ASSERT_TRUE(yes.ok() && no.ok());
  EXPECT_TRUE((*yes)[0].tensor.data<bool>()[0]);
  EXPECT_FALSE((*no)[0].tensor.data<bool>()[0]);

  OneNode get = Build("OptionalGetElement", {{"o", opt}}, {}, 1, 15);
  auto value = RunModel(*get.model, {{"o", F({1, 2})}});
  ASSERT_TRUE(value.ok()) << value.status();
  EXPECT_EQ(Values((*value)[0].tensor), (std::vector<double>{1, 2}));
  auto missing = RunModel(*get.model, {{"o", RuntimeValue::None()}});
  EXPECT_FALSE(missing.ok());
  ASSERT_TRUE(InferShapes(*get.model, {.best_effort = false}).ok());
  EXPECT_EQ(get.outputs[0]->type().ToString(), "float[2]");
}

TEST(SequenceTest, OptionalOpsCheckTheirInputKind) {
  OneNode plain = Build("OptionalGetElement", {{"x", F32({Dim(2)})}}, {}, 1, 15);
  EXPECT_FALSE(InferShapes(*plain.model, {.best_effort = false}).ok());
  OneNode at18 = Build("OptionalHasElement", {{"x", F32({Dim(2)})}}, {}, 1, 18);
  EXPECT_TRUE(InferShapes(*at18.model, {.best_effort = false}).ok());
  OneNode nothing = Build("Optional", {});
  EXPECT_FALSE(InferShapes(*nothing.model, {.best_effort = false}).ok());
}

}  // namespace
}  // namespace aic
