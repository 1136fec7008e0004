// Status helpers. Abseil 20220623 (Debian 12) ships neither status macros nor
// absl/log, so the project defines its own here: every error that comes from
// input travels as absl::Status, and AIC_CHECK guards our own invariants.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

#define AIC_STATUS_CONCAT_INNER_(a, b) a##b
#define AIC_STATUS_CONCAT_(a, b) AIC_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define AIC_RETURN_IF_ERROR(expr)                    \
  do {                                               \
    ::absl::Status aic_status_ = (expr);             \
    if (!aic_status_.ok()) return aic_status_;       \
  } while (0)

// AIC_ASSIGN_OR_RETURN(auto x, MakeX()): unwraps a StatusOr or returns its error.
#define AIC_ASSIGN_OR_RETURN(lhs, expr) \
  AIC_ASSIGN_OR_RETURN_IMPL_(AIC_STATUS_CONCAT_(aic_statusor_, __LINE__), lhs, expr)
#define AIC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).status();   \
  lhs = std::move(tmp).value()

namespace aic::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace aic::internal

// Internal invariant: a failure is a bug in aic-onnx, never bad input.
#define AIC_CHECK(cond, ...)                                                   \
  do {                                                                         \
    if (!(cond))                                                               \
      ::aic::internal::CheckFailed(__FILE__, __LINE__, #cond,                  \
                                   ::absl::StrCat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
