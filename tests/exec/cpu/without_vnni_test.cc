// The int8 paths of a CPU without VNNI and AVX-512 (a Zen 3, an older Intel)
// run on every CI machine: with AIC_TEST_INT8_WITHOUT_VNNI=1 in the
// environment, this binary lowers int8 products on the pair kernels
// (ForceInt8WithoutVnni) and quantizes with the AVX2 passes
// (ForceQuantizeWithoutAvx512) before any test runs. tests/CMakeLists.txt runs
// the int8 suites a second time so (exec_cpu_int8_without_vnni); a VNNI
// machine would otherwise only ever test oneDNN's int8 primitives there.
#include <cstdlib>
#include <string>

#include "exec/cpu/kernels/pair_gemm.h"
#include "exec/cpu/kernels/quantize_run.h"
#include "exec/cpu/lowering.h"
#include "gtest/gtest.h"

namespace aic::cpu {
namespace {

bool RequestedWithoutVnni() {
  const char* v = std::getenv("AIC_TEST_INT8_WITHOUT_VNNI");
  return v != nullptr && std::string(v) == "1";
}

// Before main: every test of the binary sees the forced paths.
const bool kForced = [] {
  if (RequestedWithoutVnni()) {
    ForceInt8WithoutVnni(true);
    kernels::ForceQuantizeWithoutAvx512(true);
  }
  return RequestedWithoutVnni();
}();

TEST(WithoutVnniTest, TheEnvironmentForcesThePairKernels) {
  if (!kForced) GTEST_SKIP() << "AIC_TEST_INT8_WITHOUT_VNNI is not set: the CPU's own int8 paths run";
  EXPECT_FALSE(ExactInt8Products());
  EXPECT_FALSE(kernels::QuantizeRunIsVectorized(0.5f));
  if (!kernels::PairGemmAvailable()) GTEST_SKIP() << "no AVX2: the pair kernels do not run here";
}

}  // namespace
}  // namespace aic::cpu
