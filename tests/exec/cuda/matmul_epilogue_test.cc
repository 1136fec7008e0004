// The GEMM step's fallback for a cuBLASLt without the fused epilogue: a
// DEFAULT GEMM followed by EpilogueAsProgram must equal the fused epilogue,
// for every epilogue, with and without a residual C and batches.
#include "exec/cuda/kernels_host.h"
#include "exec/cuda/steps.h"
#include "gtest/gtest.h"
#include "tests/exec/cuda/test_models.h"

namespace aic::cuda {
namespace {

TEST(MatMulEpilogueTest, SplitEpilogueEqualsFused) {
  for (Epilogue e : {Epilogue::kBias, Epilogue::kRelu, Epilogue::kReluBias, Epilogue::kGelu, Epilogue::kGeluBias}) {
    for (bool with_c : {false, true}) {
      SCOPED_TRACE(std::string(EpilogueName(e)) + (with_c ? " with C" : ""));
      MatMulDesc d;
      d.m = 5;
      d.n = 7;
      d.k = 3;
      d.batch = 2;
      d.lda = d.k;
      d.ldb = d.n;
      d.stride_a = d.m * d.k;
      d.stride_b = d.k * d.n;
      d.alpha = 0.5f;
      d.beta = with_c ? 1.0f : 0.0f;
      d.epilogue = e;
      bool bias = e == Epilogue::kBias || e == Epilogue::kReluBias || e == Epilogue::kGeluBias;
      Tensor a = testing::RandomTensor({2, 5, 3}, 1), b = testing::RandomTensor({2, 3, 7}, 2);
      Tensor bv = testing::RandomTensor({7}, 3), c = testing::RandomTensor({2, 5, 7}, 4);
      Tensor fused(DType::kFloat, {2, 5, 7}), split(DType::kFloat, {2, 5, 7});
      EmulateMatMul(d, a.data<float>(), b.data<float>(), bias ? bv.data<float>() : nullptr,
                    with_c ? c.data<float>() : nullptr, fused.mutable_data<float>());
      MatMulDesc plain = d;
      plain.epilogue = Epilogue::kDefault;
      EmulateMatMul(plain, a.data<float>(), b.data<float>(), nullptr, with_c ? c.data<float>() : nullptr,
                    split.mutable_data<float>());
      EltProgram p = EpilogueAsProgram(d, bias);
      const float* ins[2] = {split.data<float>(), bv.data<float>()};
      host::Eltwise(p, ins, split.mutable_data<float>());
      EXPECT_TRUE(testing::Close(split, fused, 1e-6, 1e-6));
    }
  }
}

}  // namespace
}  // namespace aic::cuda
