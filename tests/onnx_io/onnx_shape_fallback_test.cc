#include <gtest/gtest.h>

#include "graph/builder.h"
#include "onnx_io/onnx_shape_fallback.h"

namespace aic {
namespace {

TEST(OnnxShapeFallbackTest, FillsWhatOurInferenceLeftUnknown) {
  // y = LeakyRelu via a model-local function (no OpDef of ours knows "local::Leaky").
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {Dim::Symbol("n"), 3});
  Tensor w(DType::kFloat, {3, 5000});  // large: travels as a typed input, not data
  Value* wv = b.Constant("w", w);
  Value* m = b.Op("MatMul", {x, wv}, {}, "m");
  auto outs = b.OpN("Leaky", {m}, 1, {}, "local");
  b.Output(outs[0]);
  auto model = b.Build();
  model->opset_imports.push_back({"local", 1});
  Function fn;
  fn.name = "Leaky";
  fn.domain = "local";
  fn.opset_imports = {{"", 17}};
  fn.body = std::make_shared<Graph>();
  Value* a = fn.body->AddValue("a");
  fn.body->AddInput(a);
  Value* r = fn.body->AddValue("r");
  fn.body->AddNode("LeakyRelu", {a}, {r});
  fn.body->AddOutput(r);
  model->functions.push_back(fn);

  auto filled = FillTypesFromOnnxInference(*model);
  ASSERT_TRUE(filled.ok()) << filled.status();
  EXPECT_GE(*filled, 2);
  EXPECT_EQ(m->type().ToString(), "float[n, 5000]");
  EXPECT_EQ(outs[0]->type().ToString(), "float[n, 5000]");
  // Known types are never overridden.
  EXPECT_EQ(*FillTypesFromOnnxInference(*model), 0);
}

}  // namespace
}  // namespace aic
