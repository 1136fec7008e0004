#include <gtest/gtest.h>

#include "ops/registry.h"

namespace aic {
namespace {

TEST(OpRegistryTest, UnknownOpIsNotFound) {
  EXPECT_EQ(OpRegistry::Global().Find("", "NoSuchOp", 17), nullptr);
  EXPECT_EQ(OpRegistry::Global().Find("com.example", "Relu", 1), nullptr);
}

}  // namespace
}  // namespace aic
