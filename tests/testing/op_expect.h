// gtest checks shared by the op tests that compare a kernel's output with
// hand-worked values and check that a bad input's error names its node.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/tensor.h"

namespace aic::testing {

// Every element of `got` within tol·(1 + |want|) of `want`; `what` names the
// output in the failure message.
inline void ExpectValues(const Tensor& got, const std::vector<double>& want, const std::string& what,
                         double tol = 2e-6) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got.ElementAsDouble(static_cast<int64_t>(i)), want[i], tol * (1 + std::fabs(want[i])))
        << what << " [" << i << "]";
  }
}

// `s` is an error naming the node ("Op 'name'") and containing `words`.
inline void ExpectErrorNaming(const absl::Status& s, const std::string& op, const std::string& words) {
  ASSERT_FALSE(s.ok()) << op << " should fail with: " << words;
  EXPECT_NE(s.message().find(op + " '"), std::string::npos) << s;
  EXPECT_NE(s.message().find(words), std::string::npos) << s;
}

}  // namespace aic::testing
