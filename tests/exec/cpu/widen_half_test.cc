// Half-precision models on the CPU backend run in f32 (exec/cpu/widen_half.h):
// the plan has no reference step, outputs keep the declared half type and
// agree with the reference executor (which rounds to half after every op)
// within fp16 tolerance.
#include "absl/strings/str_cat.h"
#include "graph/builder.h"
#include "gtest/gtest.h"
#include "ops/util/float_convert.h"
#include "tests/exec/cpu/run_both.h"

namespace aic::cpu {
namespace {

Tensor Half(const Tensor& f, DType t = DType::kFloat16) { return NarrowFromFloat(f, t); }

// Conv -> Relu -> GlobalAveragePool -> Flatten -> MatMul -> Add -> Softmax, all in `t`.
std::unique_ptr<Model> HalfCnn(DType t, bool float_io) {
  GraphBuilder b;
  Value* x = b.Input("x", float_io ? DType::kFloat : t, D({1, 8, 12, 12}));
  Value* h = float_io ? b.Op("Cast", {x}, {Attribute::Int("to", static_cast<int64_t>(t))}) : x;
  Value* c = b.Op("Conv", {h, b.Constant("w", Half(RandomF32({16, 8, 3, 3}, 1, -0.2f, 0.2f), t)),
                           b.Constant("bias", Half(RandomF32({16}, 2, -0.1f, 0.1f), t))},
                  {Attribute::Ints("pads", {1, 1, 1, 1})});
  Value* f = b.Op("Flatten", {b.Op("GlobalAveragePool", {b.Op("Relu", {c})})});
  Value* m = b.Op("Add", {b.Op("MatMul", {f, b.Constant("fc", Half(RandomF32({16, 10}, 3, -0.5f, 0.5f), t))}),
                          b.Constant("fb", Half(RandomF32({10}, 4), t))});
  Value* y = b.Op("Softmax", {m});
  b.Output(float_io ? b.Op("Cast", {y}, {Attribute::Int("to", static_cast<int64_t>(DType::kFloat))}) : y);
  b.Output(c);  // an intermediate as a second output (half even with float IO)
  return b.Build(17);
}

TEST(WidenHalfTest, HalfModelsRunInFloatWithoutReferenceSteps) {
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    for (bool float_io : {false, true}) {
      SCOPED_TRACE(absl::StrCat(DTypeName(t), float_io ? " with float IO" : " with half IO"));
      auto model = HalfCnn(t, float_io);
      Tensor x = RandomF32({1, 8, 12, 12}, 5, -1, 1);
      double tol = t == DType::kFloat16 ? 1e-2 : 4e-2;
      std::string plan = RunBoth(*model, {{"x", float_io ? x : Half(x, t)}}, 0, tol, tol);
      EXPECT_NE(plan.find("conv"), std::string::npos) << plan;
    }
  }
}

TEST(WidenHalfTest, OutputsKeepTheirDeclaredTypes) {
  auto model = HalfCnn(DType::kFloat16, false);
  CpuExecutor cpu(*model);
  auto got = cpu.Run({{"x", Half(RandomF32({1, 8, 12, 12}, 5, -1, 1))}});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].tensor.dtype(), DType::kFloat16);
  EXPECT_EQ((*got)[1].tensor.dtype(), DType::kFloat16);
  EXPECT_EQ((*got)[1].tensor.dims(), (std::vector<int64_t>{1, 16, 12, 12}));
  // The caller's model is untouched: only the plan's clone is widened.
  EXPECT_EQ(model->graph->FindValue("w")->initializer()->dtype(), DType::kFloat16);
}

}  // namespace
}  // namespace aic::cpu
