// Gemm, MatMul and 1x1 Conv of a few rows by constant weights on
// kernels::GemvMatrix (why: kernels/gemv.h): the row bias and the unary
// activations after it run in the same step, over the few output rows while
// they are in L1, instead of as oneDNN post-ops; what else follows runs as
// steps of its own.
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exec/cpu/kernels/gemv.h"
#include "exec/cpu/kernels/unary.h"
#include "exec/cpu/lowering.h"
#include "exec/cpu/native_step.h"

namespace aic::cpu {

namespace {

using dnnl::algorithm;

// One activation over the output rows, as oneDNN's eltwise algorithm of the
// same name computes it (alpha and beta as the post-op carries them).
struct RowActivation {
  algorithm alg = algorithm::undef;
  float alpha = 0, beta = 0;
  kernels::UnaryRowFn fn = nullptr;  // the transcendental ones
};

std::optional<RowActivation> AsRowActivation(const PostOp& p) {
  if (p.binary) return std::nullopt;
  RowActivation r{p.alg, p.alpha, p.beta, nullptr};
  switch (p.alg) {
    case algorithm::eltwise_relu:
    case algorithm::eltwise_linear:
    case algorithm::eltwise_clip_v2:
    case algorithm::eltwise_hardswish:
    case algorithm::eltwise_abs:
    case algorithm::eltwise_square:
      return r;
    case algorithm::eltwise_logistic: r.fn = kernels::UnaryKernel("Sigmoid"); break;
    case algorithm::eltwise_tanh: r.fn = kernels::UnaryKernel("Tanh"); break;
    case algorithm::eltwise_exp: r.fn = kernels::UnaryKernel("Exp"); break;
    case algorithm::eltwise_gelu_erf: r.fn = kernels::UnaryKernel("GeluErf"); break;
    case algorithm::eltwise_gelu_tanh: r.fn = kernels::UnaryKernel("GeluTanh"); break;
    case algorithm::eltwise_swish:
      if (p.alpha == 1.0f) r.fn = kernels::UnaryKernel("Swish");
      break;
    default: break;
  }
  if (r.fn == nullptr) return std::nullopt;
  return r;
}

void Apply(const RowActivation& act, float* y, int64_t count) {
  if (act.fn != nullptr) return act.fn(y, y, count);
  const float a = act.alpha, b = act.beta;
  for (int64_t i = 0; i < count; ++i) {
    const float x = y[i];
    switch (act.alg) {
      case algorithm::eltwise_relu: y[i] = x > 0 ? x : x * a; break;
      case algorithm::eltwise_linear: y[i] = a * x + b; break;
      case algorithm::eltwise_clip_v2: y[i] = x < a ? a : (x > b ? b : x); break;  // NaN stays NaN
      case algorithm::eltwise_hardswish: y[i] = x * std::fmin(1.0f, std::fmax(0.0f, a * x + b)); break;
      case algorithm::eltwise_abs: y[i] = std::fabs(x); break;
      case algorithm::eltwise_square: y[i] = x * x; break;
      default: break;
    }
  }
}

// The 8-bit form of weights that are a DequantizeLinear of constants, where
// the kernel reads it so: int8 or uint8 values with float scales (and zero
// points) per tensor or per column of B (`transposed`: W's axis 0, else its
// last), no blocks, a float output. nullopt: use the float values.
std::optional<kernels::GemvMatrix::Quantized> QuantizedWeights(Lowerer& L, const FewRowsProduct& p) {
  const Node* dq = p.weights_value != nullptr ? p.weights_value->producer() : nullptr;
  if (dq == nullptr || p.scale != 1.0f || p.weights->dtype() != DType::kFloat) return std::nullopt;
  std::optional<Lowerer::ConstantDequantize> d = L.DequantizeOfConstants(*dq);
  if (!d || (d->x->dtype() != DType::kInt8 && d->x->dtype() != DType::kUint8) || d->x->dims() != p.weights->dims() ||
      d->x->byte_offset() != 0) {
    return std::nullopt;
  }
  const int64_t count = d->scale->num_elements();
  const int64_t column_axis = p.transposed ? 0 : static_cast<int64_t>(d->x->dims().size()) - 1;
  if (count != 1 && d->axis != column_axis) return std::nullopt;
  kernels::GemvMatrix::Quantized w;
  w.values = d->x->raw_data();
  w.is_signed = d->x->dtype() == DType::kInt8;
  for (int64_t j = 0; j < p.n; ++j) {
    const int64_t c = count == 1 ? 0 : j;
    w.scales.push_back(d->scale->data<float>()[c]);
    w.zeros.push_back(d->zero == nullptr ? 0
                      : w.is_signed      ? static_cast<int32_t>(d->zero->data<int8_t>()[c])
                                         : static_cast<int32_t>(d->zero->data<uint8_t>()[c]));
  }
  return w;
}

}  // namespace

bool LowerFewRowsProduct(Lowerer& L, const Node& n, const FewRowsProduct& p) {
  if (p.m < 1 || p.m > kernels::GemvMatrix::kMaxRows || p.k < 1 || p.n < 1 || p.weights == nullptr ||
      p.weights->dtype() != DType::kFloat || !L.IsF32(p.a) || !NativeReady(L, p.a)) {
    return false;
  }
  // The bias: one value per column (n or 1 of them), or a full [m, n]
  // matrix (a Gemm's C; oneDNN 2.6's matmul has only its reference kernel
  // for that), added after the product.
  std::vector<float> bias, full_bias;
  if (p.bias != nullptr) {
    const int64_t count = p.bias->num_elements();
    const std::vector<int64_t>& bd = p.bias->dims();
    if (p.bias->dtype() != DType::kFloat) return false;
    const float* b = p.bias->data<float>();
    if (count == 1 || (count == p.n && !bd.empty() && bd.back() == p.n)) {
      for (int64_t j = 0; j < p.n; ++j) bias.push_back(p.bias_scale * b[count == 1 ? 0 : j]);
    } else if (bd == std::vector<int64_t>{p.m, p.n}) {
      for (int64_t i = 0; i < count; ++i) full_bias.push_back(p.bias_scale * b[i]);
    } else {
      return false;
    }
  }
  // What follows: a row bias (when the node has none), then activations.
  std::vector<PostOp> chain = L.CollectPostOps(p.out);
  std::vector<const Node*> fused;
  const Value* final_value = p.out;
  std::vector<std::string> names;
  std::vector<RowActivation> acts;
  if (p.relu) {
    acts.push_back({algorithm::eltwise_relu, 0.0f, 0.0f, nullptr});
    names.push_back("relu");
  }
  if (p.bias == nullptr && !p.relu) {
    if (std::optional<PostOp> row = TakeRowBias(L, chain, p.n)) {
      const float* values = L.plan().slots[row->src1_slot].tensor.data<float>();
      bias.assign(values, values + p.n);
      fused = row->nodes;
      final_value = row->out;
      names.push_back("bias");
    }
  }
  std::vector<RowActivation> pending;  // a node's activations, taken once the node is whole
  for (size_t i = 0; i < chain.size(); ++i) {
    std::optional<RowActivation> act = AsRowActivation(chain[i]);
    if (!act) break;
    pending.push_back(*act);
    if (chain[i].out == nullptr) continue;  // mid-node (HardSigmoid's linear before its clip)
    acts.insert(acts.end(), pending.begin(), pending.end());
    pending.clear();
    fused.insert(fused.end(), chain[i].nodes.begin(), chain[i].nodes.end());
    final_value = chain[i].out;
    names.push_back(chain[i].name);
  }
  // (The output slot first: it is what can decline, and nothing may be
  // emitted then; PlainSlot may add a reorder step.)
  const int slot = NativeOutSlot(L, final_value);
  if (slot < 0) return false;
  const int in = L.PlainSlot(p.a);
  const int64_t ld = p.transposed ? p.k : p.n;
  std::optional<kernels::GemvMatrix::Quantized> quantized = QuantizedWeights(L, p);
  auto matrix =
      quantized ? std::make_shared<kernels::GemvMatrix>(*quantized, p.k, p.n, ld, p.transposed)
                : std::make_shared<kernels::GemvMatrix>(p.weights->data<float>(), p.k, p.n, ld, p.transposed, p.scale);
  L.plan().stats.weight_bytes += static_cast<size_t>(matrix->packed_bytes());
  if (p.release_weights && p.scale == 1.0f) {
    L.ReleaseWeight(*p.weights, [matrix, ld, t = p.transposed](uint8_t* dst) {
      matrix->Unpack(reinterpret_cast<float*>(dst), ld, t);
    });
  }
  if (quantized) {  // the 8-bit values too, where the model holds them alone
    L.ReleaseWeight(*L.Const(p.weights_value->producer()->input(0)),
                    [matrix, ld, t = p.transposed](uint8_t* dst) { matrix->UnpackQuantized(dst, ld, t); });
  }
  const int64_t m = p.m, cols = p.n;
  NativeStep* step = AddNativeStep(L, n, {in}, slot,
                                   [matrix, m, cols, bias = std::move(bias), full_bias = std::move(full_bias),
                                    acts](const void* const* ins, void* o) {
                                     float* y = static_cast<float*>(o);
                                     matrix->Multiply(static_cast<const float*>(ins[0]), m, matrix->rows(),
                                                      bias.empty() ? nullptr : bias.data(), y, cols);
                                     for (size_t i = 0; i < full_bias.size(); ++i) y[i] += full_bias[i];
                                     for (const RowActivation& a : acts) Apply(a, y, m * cols);
                                     return absl::OkStatus();
                                   });
  step->kind = "gemv";
  for (const Node* f : fused) L.MarkFused(f);
  if (!names.empty()) absl::StrAppend(&step->label, " + [", absl::StrJoin(names, ","), "]");
  return true;
}

}  // namespace aic::cpu
