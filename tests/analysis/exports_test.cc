// The report on the idioms of models people export, each built small with a
// known answer: embedding tables and tied copies counted as torch counts
// them, a class token, a q/k/v cut as one Split, squeeze-and-excitation's
// pool not a collapse point, mask arithmetic off the representation path,
// what random calibration feeds integer inputs, and the names line.
#include <gtest/gtest.h>

#include <random>

#include "analysis/analyze.h"
#include "analysis/render.h"
#include "graph/builder.h"
#include "session/input_kinds.h"

namespace aic::analysis {
namespace {

Tensor Random(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t(DType::kFloat, std::move(dims));
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0, 1);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = d(rng);
  return t;
}

Tensor Transposed(const Tensor& a) {
  Tensor t(DType::kFloat, {a.dim(1), a.dim(0)});
  for (int64_t r = 0; r < a.dim(0); ++r) {
    for (int64_t c = 0; c < a.dim(1); ++c) {
      t.mutable_data<float>()[c * a.dim(0) + r] = a.data<float>()[r * a.dim(1) + c];
    }
  }
  return t;
}

Value* Ints(GraphBuilder& b, const std::string& name, std::vector<int64_t> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return b.Constant(name, Tensor::FromVector<int64_t>(v, {n}));
}

const ReportNode* Named(const Report& r, const std::string& name) {
  for (const ReportNode& n : r.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// GPT-2's shape: token embedding, a position table sliced to the sequence
// (folded once the sizes are known), and a language-model head that reads
// the token table again as a transposed copy the exporter stored.
std::unique_ptr<Model> TinyLanguageModel() {
  GraphBuilder b;
  Value* ids = b.Input("ids", DType::kInt64, {Dim::Symbol("batch"), Dim::Symbol("sequence")});
  Tensor table = Random({128, 32}, 1);
  Value* wte = b.Constant("wte", table);
  Value* wpe = b.Constant("wpe", Random({64, 32}, 2));
  Value* positions = b.Constant("position_ids", Tensor::FromVector<int64_t>(
                                                    [] {
                                                      std::vector<int64_t> p(64);
                                                      for (int i = 0; i < 64; ++i) p[i] = i;
                                                      return p;
                                                    }(),
                                                    {64}));
  Value* tokens = b.Op("Gather", {wte, ids});
  Value* length = b.Op("Gather", {b.Op("Shape", {ids}), Ints(b, "one", {1})});
  Value* pos_ids = b.Op("Slice", {positions, Ints(b, "zero", {0}), length});
  Value* h = b.Op("Add", {tokens, b.Op("Gather", {wpe, pos_ids})});
  b.Output(b.Op("MatMul", {h, b.Constant("lm_head", Transposed(table))}));
  return b.Build();
}

TEST(ExportsReport, EmbeddingsPositionTablesAndTiedCopiesCountAsTorchCounts) {
  auto model = TinyLanguageModel();
  AnalysisOptions options;
  options.spectra = false;
  auto r = Analyze(*model, options);
  ASSERT_TRUE(r.ok()) << r.status();
  // wte and wpe whole, once; lm_head is wte again.
  EXPECT_EQ(r->total_params, 128 * 32 + 64 * 32);
  ASSERT_NE(Named(*r, "Embedding"), nullptr);
  EXPECT_EQ(Named(*r, "Embedding")->params, 128 * 32);
  EXPECT_FALSE(Named(*r, "Embedding")->traits.collapse_producing());
  bool tied_note = false;
  for (const std::string& n : r->notes) tied_note |= n.find("'lm_head' holds the same values as 'wte' transposed") != std::string::npos;
  EXPECT_TRUE(tied_note);
  // The head's MACs in the symbols: 32·128 per token; parameters do not
  // depend on the sequence (the position table counts whole).
  ASSERT_TRUE(r->symbolic && r->symbolic->fitted) << (r->symbolic ? r->symbolic->why_not : "");
  ASSERT_TRUE(r->symbolic->params && r->symbolic->macs);
  EXPECT_TRUE(r->symbolic->params->IsConstant());
  EXPECT_EQ(r->symbolic->macs->ToString(), "4096·batch·sequence");
  EXPECT_EQ(r->total_macs, 4096 * 1 * 16);  // analysed at the defaults batch 1, sequence 16
  // Random calibration feeds ids within the table.
  auto kinds = session::IntegerInputKinds(*model);
  ASSERT_EQ(kinds.count("ids"), 1u);
  EXPECT_TRUE(kinds["ids"].indexes_table);
  EXPECT_EQ(kinds["ids"].rows, 128);
}

// A dynamically quantized embedding: the table is DequantizeLinear of int8
// rows, not an initializer; its rows still bound the ids (opt's verification
// fed 0..9 into a 2-row token-type table before).
TEST(IntegerInputKinds, IdsIntoADequantizedTable) {
  GraphBuilder b;
  Value* ids = b.Input("ids", DType::kInt64, {Dim::Symbol("batch"), Dim::Symbol("sequence")});
  Tensor rows(DType::kInt8, {2, 8});
  Value* q = b.Constant("table_q", rows);
  Value* table = b.Op("DequantizeLinear", {q, b.Constant("scale", Tensor::Scalar<float>(0.1f))});
  b.Output(b.Op("Gather", {table, ids}));
  auto model = b.Build(17);  // as loaded: no inferred shape on the computed table
  auto kinds = session::IntegerInputKinds(*model);
  ASSERT_EQ(kinds.count("ids"), 1u);
  EXPECT_TRUE(kinds["ids"].indexes_table);
  EXPECT_EQ(kinds["ids"].rows, 2);
}

TEST(ExportsReport, ClassTokenIsAParameter) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 4, 16});
  Value* cls = b.Constant("cls_token", Random({1, 1, 16}, 3));
  b.Output(b.Op("Concat", {cls, x}, {Attribute::Int("axis", 1)}));
  auto model = b.Build();
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->total_params, 16);
}

// q, k and v sliced out of one projection: one Split, nothing collapses.
TEST(ExportsReport, SlicesCoveringATensorAreOneSplit) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8, 48});
  Value* axis = Ints(b, "axis", {2});
  std::vector<Value*> parts;
  for (int k = 0; k < 3; ++k) {
    parts.push_back(b.Op("Slice", {x, Ints(b, "s" + std::to_string(k), {16 * k}),
                                   Ints(b, "e" + std::to_string(k), {16 * (k + 1)}), axis}));
  }
  b.Output(b.Op("Add", {b.Op("Mul", {parts[0], parts[1]}), parts[2]}));
  auto model = b.Build();
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  const ReportNode* split = Named(*r, "Split");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->sources.size(), 3u);
  EXPECT_EQ(split->output_shapes.size(), 3u);
  EXPECT_TRUE(r->collapse_points.empty());
  // Two of the three are not a cover: each slice stays a collapse point.
  GraphBuilder b2;
  Value* y = b2.Input("y", DType::kFloat, {1, 8, 48});
  Value* axis2 = Ints(b2, "axis", {2});
  Value* p0 = b2.Op("Slice", {y, Ints(b2, "s0", {0}), Ints(b2, "e0", {16}), axis2});
  Value* p1 = b2.Op("Slice", {y, Ints(b2, "s1", {16}), Ints(b2, "e1", {32}), axis2});
  b2.Output(b2.Op("Add", {p0, p1}));
  auto partial = b2.Build();
  auto r2 = Analyze(*partial, AnalysisOptions{});
  ASSERT_TRUE(r2.ok()) << r2.status();
  EXPECT_EQ(Named(*r2, "Split"), nullptr);
  EXPECT_EQ(r2->collapse_points.size(), 2u);
}

// Squeeze-and-excitation: the pool and the ReLU inside the gate shape a
// statistic that rescales x; the ReLU on the main path is a collapse point.
TEST(ExportsReport, SqueezeExcitationPoolIsNotACollapsePoint) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8, 6, 6});
  Value* pooled = b.Op("GlobalAveragePool", {x});
  Value* squeezed = b.Op("Relu", {b.Op("Conv", {pooled, b.Constant("w1", Random({2, 8, 1, 1}, 4))})});
  Value* gate = b.Op("Sigmoid", {b.Op("Conv", {squeezed, b.Constant("w2", Random({8, 2, 1, 1}, 5))})});
  b.Output(b.Op("Relu", {b.Op("Mul", {x, gate})}));
  auto model = b.Build();
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->collapse_points.size(), 1u);
  EXPECT_EQ(r->nodes[r->collapse_points[0]].name, "ReLU");
  EXPECT_EQ(r->nodes[r->collapse_points[0]].index, static_cast<int>(r->nodes.size()) - 1);
}

// An attention mask made from an integer input is arithmetic off the
// representation path: listed apart, never a collapse point; random
// calibration feeds the mask ones.
TEST(ExportsReport, MaskArithmeticIsOffTheRepresentationPath) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 4, 4});
  Value* mask = b.Input("mask", DType::kInt64, {1, 4});
  Value* m = b.Op("Cast", {mask}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
  Value* keep = b.Op("Sub", {b.Constant("one", Tensor::Scalar<float>(1)), m});
  Value* bias = b.Op("Mul", {keep, b.Constant("big", Tensor::Scalar<float>(-1e4f))});
  Value* masked = b.Op("Relu", {b.Op("Add", {x, b.Op("Unsqueeze", {bias, Ints(b, "ax", {1})})})});
  b.Output(masked);
  auto model = b.Build();
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  int off = 0;
  for (const ReportNode& n : r->nodes) off += n.on_data_path ? 0 : 1;
  EXPECT_EQ(off, 4);  // Cast, Sub, Mul, Unsqueeze
  ASSERT_EQ(r->collapse_points.size(), 1u);
  EXPECT_EQ(r->nodes[r->collapse_points[0]].name, "ReLU");
  std::string text = RenderText(*r);
  EXPECT_NE(text.find("Shape, index and mask computations (off the representation path): 4 nodes"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("Node 0: Cast"), std::string::npos) << text;
  auto kinds = session::IntegerInputKinds(*model);
  EXPECT_FALSE(kinds["mask"].indexes_table);
  Tensor t(DType::kInt64, {1, 4});
  session::FillIntegerInput(kinds["mask"], 7, t);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.data<int64_t>()[i], 1);
}

// A GELU spelled out, as an exporter writes it below opset 20: the
// rewriter's fuse_gelu names it, the report lists one GELU node for the
// five ONNX nodes, with their costs.
TEST(ExportsReport, DecomposedGeluIsOneNode) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8, 32});
  Value* h = b.Op("MatMul", {x, b.Constant("w", Random({32, 32}, 7))});
  Value* erf = b.Op("Erf", {b.Op("Div", {h, b.Constant("sqrt2", Tensor::Scalar<float>(1.4142135f))})});
  Value* gelu = b.Op("Mul", {b.Op("Mul", {h, b.Op("Add", {erf, b.Constant("one", Tensor::Scalar<float>(1.f))})}),
                             b.Constant("half", Tensor::Scalar<float>(0.5f))});
  b.Output(gelu);
  auto model = b.Build(17);
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  const ReportNode* g = Named(*r, "GELU");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->sources.size(), 5u);
  EXPECT_EQ(r->nodes.size(), 2u);  // Linear, GELU
  EXPECT_GT(g->flops, 0);
}

// Attention as torch's SDPA is exported: one node, its heads and sizes, the
// softmax its collapse; the MACs of both products.
TEST(ExportsReport, ScaledDotProductAttentionIsOneNode) {
  GraphBuilder b;
  Value* q = b.Input("q", DType::kFloat, {1, 2, 8, 16});
  Value* k = b.Input("k", DType::kFloat, {1, 2, 8, 16});
  Value* v = b.Input("v", DType::kFloat, {1, 2, 8, 16});
  Value* mask = b.Input("mask", DType::kFloat, {1, 1, 1, 8});
  Value* kt = b.Op("Transpose", {k}, {Attribute::Ints("perm", {0, 1, 3, 2})});
  Value* scores = b.Op("Mul", {b.Op("MatMul", {q, kt}), b.Constant("scale", Tensor::Scalar<float>(0.25f))});
  Value* probs = b.Op("Softmax", {b.Op("Add", {scores, mask})}, {Attribute::Int("axis", -1)});
  Value* guarded = b.Op("Where", {b.Op("IsNaN", {probs}), b.Constant("zero", Tensor::Scalar<float>(0.f)), probs});
  b.Output(b.Op("MatMul", {guarded, v}));
  auto model = b.Build(17);
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->nodes.size(), 1u) << RenderText(*r);
  const ReportNode& a = r->nodes[0];
  EXPECT_EQ(a.name, "Attention");
  EXPECT_EQ(a.sources.size(), 8u);
  EXPECT_EQ(a.macs, 2 * (2 * 8 * 8 * 16));
  EXPECT_EQ(a.traits.effect_detail, "2 heads, 8 queries over 8 keys, head size 16");
  EXPECT_EQ(r->collapse_points, std::vector<int>{0});
}

// LayerNorm and RMSNorm spelled out with their learned scale (and shift):
// one node each, the gamma folded into the fused op's scale by the rule,
// the parameters those of the original nodes.
TEST(ExportsReport, SpelledOutNormsWithTheirScaleAreOneNodeEach) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 4, 16});
  Value* axes = Ints(b, "axes", {-1});
  Value* ms = b.Op("ReduceMean", {b.Op("Pow", {x, b.Constant("two", Tensor::Scalar<float>(2.f))}), axes});
  Value* rms = b.Op("Mul", {x, b.Op("Reciprocal", {b.Op("Sqrt", {b.Op("Add", {ms, b.Constant("eps", Tensor::Scalar<float>(1e-6f))})})})});
  Value* h = b.Op("Mul", {rms, b.Constant("gamma", Random({16}, 8))});
  Value* d = b.Op("Sub", {h, b.Op("ReduceMean", {h, axes})});
  Value* var = b.Op("ReduceMean", {b.Op("Pow", {d, b.Constant("two2", Tensor::Scalar<float>(2.f))}), axes});
  Value* ln = b.Op("Div", {d, b.Op("Sqrt", {b.Op("Add", {var, b.Constant("eps2", Tensor::Scalar<float>(1e-5f))})})});
  b.Output(b.Op("Add", {b.Op("Mul", {ln, b.Constant("g2", Random({16}, 9))}), b.Constant("b2", Random({16}, 10))}));
  auto model = b.Build(18);
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->nodes.size(), 2u) << RenderText(*r);
  EXPECT_EQ(r->nodes[0].name, "RMSNorm");
  EXPECT_EQ(r->nodes[1].name, "LayerNorm");
  EXPECT_EQ(r->total_params, 16 + 32);
  EXPECT_TRUE(r->collapse_points.empty());
}

// A quantized model's activations are uint8: still the representation, so
// its nodes are listed; a uint8 image input is data and random calibration
// draws pixels, not ones.
TEST(ExportsReport, QuantizedValuesAndPixelInputsAreData) {
  GraphBuilder b;
  Value* img = b.Input("image", DType::kUint8, {1, 3, 8, 8});
  Value* x = b.Op("Cast", {img}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))});
  Value* q = b.Op("QuantizeLinear", {x, b.Constant("s", Tensor::Scalar<float>(0.05f)),
                                     b.Constant("z", Tensor::FromVector<uint8_t>({128}, {}))});
  Value* dq = b.Op("DequantizeLinear", {q, b.Constant("s2", Tensor::Scalar<float>(0.05f)),
                                        b.Constant("z2", Tensor::FromVector<uint8_t>({128}, {}))});
  b.Output(b.Op("Relu", {b.Op("Conv", {dq, b.Constant("w", Random({4, 3, 3, 3}, 11))})}));
  auto model = b.Build(13);
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  for (const ReportNode& n : r->nodes) EXPECT_TRUE(n.on_data_path) << n.name;
  auto kinds = session::IntegerInputKinds(*model);
  ASSERT_TRUE(kinds["image"].samples);
  Tensor t(DType::kUint8, {1, 3, 8, 8});
  session::FillIntegerInput(kinds["image"], 3, t);
  int distinct_values = 0;
  std::vector<bool> seen(256, false);
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    uint8_t v = t.data<uint8_t>()[i];
    distinct_values += seen[v] ? 0 : 1;
    seen[v] = true;
  }
  EXPECT_GT(distinct_values, 50);
}

// A QDQ Conv (8-bit activation and weight, int32 bias, QuantizeLinear after)
// is an int8 op: its MACs are int8 MACs and its bytes the stored operands',
// 1 byte per activation and weight element, 4 per bias, 1 per output. The
// float Conv beside it is not.
TEST(ExportsReport, QdqConvsCountInt8MacsAndStoredBytes) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8, 10, 10});
  Value* q = b.Op("QuantizeLinear", {x, b.Constant("xs", Tensor::Scalar<float>(0.05f)),
                                     b.Constant("xz", Tensor::FromVector<uint8_t>({128}, {}))});
  Value* dq = b.Op("DequantizeLinear", {q, b.Constant("xs2", Tensor::Scalar<float>(0.05f)),
                                        b.Constant("xz2", Tensor::FromVector<uint8_t>({128}, {}))});
  std::vector<int8_t> wq(16 * 8 * 3 * 3);
  for (size_t i = 0; i < wq.size(); ++i) wq[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
  Value* w = b.Op("DequantizeLinear", {b.Constant("wq", Tensor::FromVector<int8_t>(wq, {16, 8, 3, 3})),
                                       b.Constant("ws", Tensor::Scalar<float>(0.01f))});
  Tensor bq = Tensor::FromVector<int32_t>(std::vector<int32_t>(16, 7), {16});
  Value* bias = b.Op("DequantizeLinear", {b.Constant("bq", bq),
                                          b.Constant("bs", Tensor::Scalar<float>(0.0005f))});
  Value* c = b.Op("Conv", {dq, w, bias}, {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* y = b.Op("QuantizeLinear", {c, b.Constant("ys", Tensor::Scalar<float>(0.1f)),
                                     b.Constant("yz", Tensor::FromVector<uint8_t>({0}, {}))});
  b.Output(y);
  b.Output(b.Op("Conv", {x, b.Constant("wf", Random({4, 8, 1, 1}, 12))}));
  auto model = b.Build(13);
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  const ReportNode* qconv = nullptr;
  const ReportNode* fconv = nullptr;
  for (const ReportNode& n : r->nodes) {
    if (n.sources.size() == 1 && n.sources[0].op_type == "Conv") (n.int8 ? qconv : fconv) = &n;
  }
  ASSERT_NE(qconv, nullptr);
  ASSERT_NE(fconv, nullptr);
  EXPECT_FALSE(fconv->int8);
  EXPECT_EQ(qconv->macs, 16 * 100 * 8 * 9);
  EXPECT_EQ(qconv->bytes_read, 8 * 100 + 16 * 8 * 9 + 16 * 4);
  EXPECT_EQ(qconv->bytes_written, 16 * 100);
  EXPECT_EQ(r->total_int8_macs, qconv->macs);
  EXPECT_EQ(r->total_macs, qconv->macs + fconv->macs);
  EXPECT_NE(RenderText(*r).find("of which on 8-bit operands (int8): 11520"), std::string::npos) << RenderText(*r);
  EXPECT_NE(RenderJson(*r).find("\"total_int8_macs\": 11520"), std::string::npos);
}

TEST(ExportsReport, NamesLineNamesTheOnnxNodes) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {1, 8});
  b.Output(b.Op("Relu", {b.Op("MatMul", {x, b.Constant("w", Random({8, 8}, 6))})}));
  auto model = b.Build();
  model->graph->nodes()[0]->name = "fc/MatMul";
  auto r = Analyze(*model, AnalysisOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(RenderText(*r, NodeNames::kAlways).find("Node 0: Linear\nONNX: 'fc/MatMul' (MatMul)\n"),
            std::string::npos);
  // A graph of the seed's size prints the seed's format unless asked.
  EXPECT_EQ(RenderText(*r).find("ONNX:"), std::string::npos);
}

}  // namespace
}  // namespace aic::analysis
