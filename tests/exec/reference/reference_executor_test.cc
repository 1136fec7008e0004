#include <gtest/gtest.h>

#include "exec/reference/executor.h"
#include "graph/builder.h"
#include "tests/testing/op_test_util.h"

namespace aic {
namespace {

// y = Relu(x + b)
std::unique_ptr<Model> AddRelu() {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2});
  Value* bias = b.Constant("b", Tensor::FromVector<float>({1.0f, -5.0f}, {2}));
  Value* s = b.Op("Add", {x, bias}, {}, "s");
  Value* y = b.Op("Relu", {s}, {}, "y");
  b.Output(y);
  return b.Build();
}

TEST(ReferenceExecutorTest, RunsAndShowsIntermediates) {
  auto model = AddRelu();
  ReferenceExecutor exec(*model);
  std::vector<std::string> seen;
  ReferenceRunOptions options;
  options.on_node_done = [&](const Node& n, const std::vector<RuntimeValue>& outs) {
    seen.push_back(n.op_type + ":" + outs[0].tensor.DebugString());
  };
  auto out = exec.Run({{"x", RuntimeValue(Tensor::FromVector<float>({2.0f, 3.0f}, {2}))}}, options);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->at(0).tensor.data<float>()[0], 3.0f);
  EXPECT_EQ(out->at(0).tensor.data<float>()[1], 0.0f);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0], "Add:float[2] {3, -2}");
}

TEST(ReferenceExecutorTest, UnknownOpNamesOpDomainOpsetAndNode) {
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2});
  auto outs = b.OpN("Frobnicate", {x}, 1, {}, "com.example");
  b.last_node()->name = "frob_1";
  b.Output(outs[0]);
  auto model = b.Build();
  model->opset_imports.push_back({"com.example", 3});
  ReferenceExecutor exec(*model);
  absl::Status s = exec.CheckSupported();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  std::string msg(s.message());
  for (const char* part : {"Frobnicate", "com.example", "opset 3", "frob_1"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
  auto run = exec.Run({{"x", RuntimeValue(Tensor(DType::kFloat, {2}))}});
  EXPECT_EQ(run.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ReferenceExecutorTest, MissingAndUnknownFeedsAreErrors) {
  auto model = AddRelu();
  ReferenceExecutor exec(*model);
  EXPECT_FALSE(exec.Run({}).ok());
  EXPECT_FALSE(exec.Run({{"x", RuntimeValue(Tensor(DType::kFloat, {2}))},
                         {"zzz", RuntimeValue(Tensor(DType::kFloat, {2}))}})
                   .ok());
}

TEST(ReferenceExecutorTest, RunsModelLocalFunctionsWithAttributeReferences) {
  // f(a) = LeakyRelu(a, alpha=@alpha), called with alpha=0.5.
  GraphBuilder b;
  Value* x = b.Input("x", DType::kFloat, {2});
  auto outs = b.OpN("MyLeaky", {x}, 1, {Attribute::Float("alpha", 0.5f)}, "local");
  b.Output(outs[0]);
  auto model = b.Build();
  model->opset_imports.push_back({"local", 1});
  model->functions.push_back(testing::LocalLeakyReluFunction());
  ReferenceExecutor exec(*model);
  auto out = exec.Run({{"x", RuntimeValue(Tensor::FromVector<float>({-2.0f, 4.0f}, {2}))}});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FLOAT_EQ(out->at(0).tensor.data<float>()[0], -1.0f);
  EXPECT_FLOAT_EQ(out->at(0).tensor.data<float>()[1], 4.0f);
}

}  // namespace
}  // namespace aic
