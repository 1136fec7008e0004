#include "exec/cpu/dynamic_gemm.h"

#include <algorithm>
#include <cstdint>

#include "oneapi/dnnl/dnnl.h"
#include "ops/fused/standard_aliases.h"

namespace aic::cpu {

namespace {

const Tensor* FloatInput(const std::vector<const RuntimeValue*>& inputs, size_t i) {
  if (i >= inputs.size() || inputs[i] == nullptr || !inputs[i]->is_tensor()) return nullptr;
  const Tensor& t = inputs[i]->tensor;
  return t.dtype() == DType::kFloat ? &t : nullptr;
}

// out[M, N] = beta·C broadcast (C of rank <= 2, each dim 1 or the output's).
bool FillWithBias(const Tensor& c, float beta, int64_t m, int64_t n, float* out) {
  if (c.rank() > 2) return false;
  const int64_t rows = c.rank() == 2 ? c.dim(0) : 1;
  const int64_t cols = c.rank() >= 1 ? c.dim(c.rank() - 1) : 1;
  if ((rows != 1 && rows != m) || (cols != 1 && cols != n)) return false;
  const float* cv = c.data<float>();
  for (int64_t i = 0; i < m; ++i) {
    const float* row = cv + (rows == 1 ? 0 : i) * cols;
    float* o = out + i * n;
    if (cols == 1) {
      std::fill(o, o + n, beta * row[0]);
    } else {
      for (int64_t j = 0; j < n; ++j) o[j] = beta * row[j];
    }
  }
  return true;
}

bool Sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, const float* b,
           float beta, float* c) {
  if (m == 0 || n == 0) return true;
  if (k == 0) {
    // Why: an empty sum; sgemm with K = 0 may not touch C, so apply beta here.
    for (int64_t i = 0; i < m * n; ++i) c[i] = beta == 0.0f ? 0.0f : beta * c[i];
    return true;
  }
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, trans_a ? m : k, b,
                    trans_b ? k : n, beta, c, n) == dnnl_success;
}

std::optional<Tensor> Gemm(const Node& node, const std::vector<const RuntimeValue*>& inputs, bool relu) {
  const Tensor* a = FloatInput(inputs, 0);
  const Tensor* b = FloatInput(inputs, 1);
  if (a == nullptr || b == nullptr || a->rank() != 2 || b->rank() != 2) return std::nullopt;
  const bool trans_a = node.GetInt("transA", 0) != 0;
  const bool trans_b = node.GetInt("transB", 0) != 0;
  const float alpha = node.GetFloat("alpha", 1.0f);
  const float beta = node.GetFloat("beta", 1.0f);
  const int64_t m = trans_a ? a->dim(1) : a->dim(0);
  const int64_t k = trans_a ? a->dim(0) : a->dim(1);
  const int64_t n = trans_b ? b->dim(0) : b->dim(1);
  if ((trans_b ? b->dim(1) : b->dim(0)) != k) return std::nullopt;
  Tensor y(DType::kFloat, {m, n});
  float* out = y.mutable_data<float>();
  float accumulate = 0.0f;
  if (inputs.size() > 2 && inputs[2] != nullptr && beta != 0.0f) {
    const Tensor* c = FloatInput(inputs, 2);
    if (c == nullptr || !FillWithBias(*c, beta, m, n, out)) return std::nullopt;
    accumulate = 1.0f;
  }
  if (!Sgemm(trans_a, trans_b, m, n, k, alpha, a->data<float>(), b->data<float>(), accumulate, out)) {
    return std::nullopt;
  }
  if (relu) {
    for (int64_t i = 0; i < m * n; ++i) out[i] = std::max(out[i], 0.0f);
  }
  return y;
}

std::optional<Tensor> MatMul(const std::vector<const RuntimeValue*>& inputs) {
  const Tensor* a = FloatInput(inputs, 0);
  const Tensor* b = FloatInput(inputs, 1);
  // Why: a 1-D operand drops its axis from the result, and a batched second
  // operand is one product per batch: the reference kernel's cases.
  if (a == nullptr || b == nullptr || a->rank() < 2 || b->rank() != 2) return std::nullopt;
  const int64_t k = a->dim(a->rank() - 1);
  if (b->dim(0) != k) return std::nullopt;
  const int64_t n = b->dim(1);
  int64_t m = 1;  // the rows of every leading dim (num_elements / K fails at K = 0)
  for (int64_t i = 0; i + 1 < a->rank(); ++i) m *= a->dim(i);
  std::vector<int64_t> dims = a->dims();
  dims.back() = n;
  Tensor y(DType::kFloat, dims);
  if (!Sgemm(false, false, m, n, k, 1.0f, a->data<float>(), b->data<float>(), 0.0f, y.mutable_data<float>())) {
    return std::nullopt;
  }
  return y;
}

}  // namespace

bool IsDynamicGemmOp(const Node& node) {
  if (node.domain.empty() || node.domain == "ai.onnx") return node.op_type == "Gemm" || node.op_type == "MatMul";
  return node.domain == kAicDomain && node.op_type == "FusedLinearReLU";
}

std::optional<Tensor> RunDynamicGemm(const Node& node, const std::vector<const RuntimeValue*>& inputs) {
  if (!IsDynamicGemmOp(node)) return std::nullopt;
  if (node.op_type == "MatMul") return MatMul(inputs);
  return Gemm(node, inputs, node.op_type == "FusedLinearReLU");
}

}  // namespace aic::cpu
