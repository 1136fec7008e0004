// Which graph nodes can ride along as oneDNN post-ops of the step before
// them: unary activations and affine maps by scalars (eltwise post-ops),
// adds/muls by broadcast constants or by a same-shaped activation computed
// earlier (binary post-ops: bias, per-channel scale, residual add), and
// inference BatchNormalization (a per-channel mul and add). Nothing here
// recognises an exporter's idiom: the rewriter has already turned the GELU and
// HardSwish that exporters spell out into single nodes (rewrite/rules/
// pattern_rules.cc), which map to one eltwise post-op each.
#include <cfloat>
#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/unary.h"
#include "exec/cpu/lowering.h"
#include "ops/fused/standard_aliases.h"
#include "ops/nn/batch_norm_affine.h"
#include "ops/nn/clip_bounds.h"

namespace aic::cpu {

namespace {

// Outputs from which a transcendental activation runs as its own native step
// (TranscendentalRunsNatively).
constexpr int64_t kNativeActivationMinElements = int64_t{1} << 14;

using dnnl::algorithm;

}  // namespace

// oneDNN 2.6's swish, tanh, logistic and tanh-GELU post-ops (and eltwise)
// cost more than our kernels (kernels/unary*.cc) in a pass of their own over
// the producer's output, in its layout and in place. Swish: ~0.7 ns an
// element against ~0.3 with AVX-512 (a 1x1 conv to [1, 96, 112, 112] with
// SiLU 1.6-1.9 ms fused, 1.1-1.2 apart; EfficientNet-B0 0.82-0.88x its time).
// On a Zen 3 with AVX2 (aic-onnx bench, 1 thread): a 1x1 conv to
// [1, 64, 56, 56] with Tanh 0.99 ms fused, 0.40 apart; with Sigmoid 0.46 and
// 0.41; Gemma-2's logit soft-capping (tanh after the [64, 8192] LM head) and
// tanh-GELU MLPs: 13-15 ms a run fused, 10-12 apart (ORT 13.2). A small
// output keeps the fusion (a step of its own costs more than the post-op there).
bool TranscendentalRunsNatively(const Elt& e, const std::vector<int64_t>& dims) {
  if (NumElements(dims) < kNativeActivationMinElements) return false;
  switch (e.alg) {
    case algorithm::eltwise_swish: return e.alpha == 1.0f && kernels::FastUnaryKernel("Swish") != nullptr;
    case algorithm::eltwise_tanh: return kernels::FastUnaryKernel("Tanh") != nullptr;
    case algorithm::eltwise_logistic: return kernels::FastUnaryKernel("Sigmoid") != nullptr;
    case algorithm::eltwise_gelu_tanh: return kernels::FastUnaryKernel("GeluTanh") != nullptr;
    default: return false;
  }
}

std::optional<algorithm> BinaryAlg(const std::string& op) {
  if (op == "Add") return algorithm::binary_add;
  if (op == "Sub") return algorithm::binary_sub;
  if (op == "Mul") return algorithm::binary_mul;
  if (op == "Div") return algorithm::binary_div;
  if (op == "Max") return algorithm::binary_max;
  if (op == "Min") return algorithm::binary_min;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& c,
                                                   const std::vector<int64_t>& out) {
  if (c.size() > out.size()) return std::nullopt;
  std::vector<int64_t> padded(out.size() - c.size(), 1);
  padded.insert(padded.end(), c.begin(), c.end());
  for (size_t i = 0; i < out.size(); ++i) {
    if (padded[i] != 1 && padded[i] != out[i]) return std::nullopt;
  }
  return padded;
}

bool PostOpsReadRight(const std::vector<PostOp>& chain, size_t k, const memory::desc& dst) {
  memory::dims dd = dst.dims();
  std::vector<int64_t> dst_dims(dd.begin(), dd.end());
  bool dst_plain = dst == PlainMd(dst_dims);
  int64_t spatial = 1;
  for (size_t i = 2; i < dst_dims.size(); ++i) spatial *= dst_dims[i];
  // [N, C, 1, 1] with N > 1: oneDNN indexes a partly broadcast operand by the batch.
  bool batched_point = dst_dims.size() >= 3 && dst_dims[0] > 1 && spatial == 1;
  for (size_t i = 0; i < k && i < chain.size(); ++i) {
    if (!chain[i].binary || chain[i].sum) continue;
    memory::dims sd = chain[i].src1_md.dims();
    std::vector<int64_t> src_dims(sd.begin(), sd.end());
    bool scalar = std::all_of(src_dims.begin(), src_dims.end(), [](int64_t d) { return d == 1; });
    if (batched_point && !scalar && src_dims != dst_dims) return false;
    if (scalar) continue;
    bool per_channel = true;
    for (size_t d = 0; d < src_dims.size(); ++d) {
      if (src_dims[d] != 1 && d != 1) per_channel = false;
    }
    if (per_channel) continue;
    if (chain[i].src1_md == dst) continue;
    if (dst_plain && chain[i].src1_md == PlainMd(src_dims)) continue;
    return false;
  }
  return true;
}

// oneDNN 2.6's GEMM-based primitives (gemm:jit: the f32 matmul without
// AVX-512) apply post-ops in a pass over C after the GEMM, binary ones at
// about 0.55 ns an element; a binary step of its own (with any eltwise
// post-ops after it) takes a tenth of that. Measured on Zen 3, 1 thread,
// medians of 5 (oneDNN primitives alone, in cache):
//   [128, 256] x [256, 1024]: matmul 0.729 ms, + bias as a binary post-op
//   0.803, + bias and GELU post-ops 0.912; matmul 0.729 then a binary
//   bias add with a GELU post-op 0.117
//   [3136, 96] x [96, 384] (Swin's MLP): 2.42, 3.10, 4.09; apart 2.42 + 1.09
// A linear layer's bias is the matmul's own argument instead (ops_matmul.cc),
// which gemm:jit adds as it writes C: 0.741 and 2.55 ms.
bool BinaryPostOpsRunApart(const std::vector<PostOp>& chain, size_t k, const std::string& impl) {
  // Convolutions name theirs "x64:gemm:jit", the matmul "gemm:jit".
  if (!absl::StrContains(impl, "gemm")) return false;
  for (size_t i = 0; i < k && i < chain.size(); ++i) {
    if (chain[i].binary && !chain[i].sum) return true;
  }
  return false;
}

memory::desc AnyMd(const std::vector<int64_t>& dims) {
  return memory::desc(ToDnnlDims(dims), memory::data_type::f32, memory::format_tag::any);
}

std::vector<Elt> Lowerer::UnaryAsEltwise(const Node& n, const Value* x) {
  if (!HasStandardSemantics(n) || n.output(0) == nullptr || !IsF32(x) || !IsF32(n.output(0))) return {};
  if (V(n.output(0)).dims != V(x).dims) return {};
  const std::string& op = n.op_type;
  bool unary = n.num_inputs() >= 1 && n.input(0) == x;
  if (unary && op == "Relu") return {{algorithm::eltwise_relu, 0, 0, "relu"}};
  if (unary && op == "LeakyRelu") return {{algorithm::eltwise_relu, n.GetFloat("alpha", 0.01f), 0, "leaky_relu"}};
  if (unary && op == "Sigmoid") return {{algorithm::eltwise_logistic, 0, 0, "sigmoid"}};
  if (unary && op == "Tanh") return {{algorithm::eltwise_tanh, 0, 0, "tanh"}};
  if (unary && op == "Exp") return {{algorithm::eltwise_exp, 0, 0, "exp"}};
  if (unary && op == "Sqrt") return {{algorithm::eltwise_sqrt, 0, 0, "sqrt"}};
  if (unary && op == "Abs") return {{algorithm::eltwise_abs, 0, 0, "abs"}};
  if (unary && op == "Elu") return {{algorithm::eltwise_elu, n.GetFloat("alpha", 1.0f), 0, "elu"}};
  if (unary && op == "Neg") return {{algorithm::eltwise_linear, -1.0f, 0, "neg"}};
  if (unary && op == "HardSwish") return {{algorithm::eltwise_hardswish, 1.0f / 6, 0.5f, "hardswish"}};
  if (unary && op == "Swish") return {{algorithm::eltwise_swish, n.GetFloat("alpha", 1.0f), 0, "swish"}};
  if (unary && op == "Gelu") {
    bool tanh = n.GetString("approximate", "none") == "tanh";
    return {{tanh ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf, 0, 0, tanh ? "gelu_tanh" : "gelu"}};
  }
  if (unary && op == "HardSigmoid") {
    return {{algorithm::eltwise_linear, n.GetFloat("alpha", 0.2f), n.GetFloat("beta", 0.5f), "hardsigmoid"},
            {algorithm::eltwise_clip_v2, 0.0f, 1.0f, "hardsigmoid"}};
  }
  if (unary && op == "Clip") {
    ClipBounds b = DecodeClipBounds(n, OpsetOf(n), [&](size_t i) { return Const(n.input(i)); });
    if (!b.known()) return {};
    return {{algorithm::eltwise_clip_v2, b.lo ? static_cast<float>(*b.lo) : -FLT_MAX,
             b.hi ? static_cast<float>(*b.hi) : FLT_MAX, "clip"}};
  }
  if (n.num_inputs() != 2) return {};
  bool first = n.input(0) == x;
  if (!first && n.input(1) != x) return {};
  std::optional<float> c = ScalarConst(n.input(first ? 1 : 0));
  if (!c) return {};
  if (op == "Add") return {{algorithm::eltwise_linear, 1.0f, *c, "add"}};
  if (op == "Mul") return {{algorithm::eltwise_linear, *c, 0, "mul"}};
  if (op == "Sub") return {{algorithm::eltwise_linear, first ? 1.0f : -1.0f, first ? -*c : *c, "sub"}};
  if (op == "Div" && first && *c != 0) return {{algorithm::eltwise_linear, 1.0f / *c, 0, "div"}};
  if (op == "Pow" && first) {
    // oneDNN 2.6's JIT pow goes through exp and log for any exponent; the
    // common ones have cheap eltwise forms, and the native kernel
    // (kernels/binary.cc) multiplies out small integer powers.
    if (*c == 1.0f) return {{algorithm::eltwise_linear, 1.0f, 0, "pow"}};
    if (*c == 2.0f) return {{algorithm::eltwise_square, 0, 0, "square"}};
    if (*c == 0.5f) return {{algorithm::eltwise_sqrt, 0, 0, "sqrt"}};
    if (*c == 3.0f || *c == 4.0f || *c == -1.0f) return {};
    return {{algorithm::eltwise_pow, 1.0f, *c, "pow"}};
  }
  return {};
}

std::vector<PostOp> Lowerer::CollectPostOps(const Value* v) {
  std::vector<PostOp> chain;
  if (!options_.fuse_post_ops) return chain;
  const Value* cur = v;
  while (chain.size() < 16) {
    ValueState& st = V(cur);
    if (st.graph_output) break;
    if (st.consumers.size() != 1) break;
    const Node& c = *st.consumers[0];
    const Value* out = c.output(0);
    if (!HasStandardSemantics(c) || out == nullptr || !IsF32(out)) break;
    std::vector<Elt> elts = UnaryAsEltwise(c, cur);
    if (elts.size() == 1 && TranscendentalRunsNatively(elts[0], st.dims)) break;
    if (elts.size() == 1 && elts[0].alg == algorithm::eltwise_linear && !chain.empty() && !chain.back().binary &&
        chain.back().alg == algorithm::eltwise_linear) {
      // a2*(a1*x + b1) + b2 as one post-op: shorter, and oneDNN 2.6's
      // depthwise kernels mishandle two linear post-ops in a row.
      PostOp& prev = chain.back();
      prev.beta = elts[0].alpha * prev.beta + elts[0].beta;
      prev.alpha = elts[0].alpha * prev.alpha;
      prev.nodes.push_back(&c);
      prev.out = out;
      absl::StrAppend(&prev.name, "+", elts[0].name);
      cur = out;
      continue;
    }
    auto seen = [&](algorithm alg) {
      for (const PostOp& p : chain) {
        if (!p.binary && p.alg == alg) return true;
      }
      return false;
    };
    if (elts.size() == 1 && elts[0].alg == algorithm::eltwise_linear && seen(algorithm::eltwise_linear)) {
      // oneDNN 2.6's depthwise kernels also mishandle a repeated eltwise
      // algorithm with other parameters: a scale and shift as binary post-ops
      // by scalars instead.
      std::vector<int64_t> ones(std::max<size_t>(st.dims.size(), 1), 1);
      memory::desc smd = PlainMd(ones);
      std::vector<std::pair<algorithm, float>> parts;
      if (elts[0].alpha != 1.0f) parts.emplace_back(algorithm::binary_mul, elts[0].alpha);
      if (elts[0].beta != 0.0f || parts.empty()) parts.emplace_back(algorithm::binary_add, elts[0].beta);
      for (size_t i = 0; i < parts.size(); ++i) {
        plan_.constants.push_back(Tensor::FromVector<float>({parts[i].second}, ones));
        PostOp p;
        p.binary = true;
        p.alg = parts[i].first;
        p.src1_md = smd;
        p.src1_slot = ConstSlot(plan_.constants.back(), smd);
        p.name = elts[0].name;
        if (i + 1 == parts.size()) {
          p.nodes = {&c};
          p.out = out;
        }
        chain.push_back(p);
      }
      cur = out;
      continue;
    }
    if (!elts.empty()) {
      bool repeated = false;
      for (const Elt& e : elts) repeated = repeated || seen(e.alg);
      if (repeated) break;
      for (size_t i = 0; i < elts.size(); ++i) {
        PostOp p;
        p.alg = elts[i].alg;
        p.alpha = elts[i].alpha;
        p.beta = elts[i].beta;
        p.name = elts[i].name;
        if (i + 1 == elts.size()) {
          p.nodes = {&c};
          p.out = out;
        }
        chain.push_back(p);
      }
      cur = out;
      continue;
    }
    if (V(out).dims != st.dims) break;  // the post-op may not broadcast the main operand
    std::optional<algorithm> alg = BinaryAlg(c.op_type);
    if (alg && c.num_inputs() == 2 && c.input(0) != c.input(1)) {
      bool first = c.input(0) == cur;
      const Value* other = c.input(first ? 1 : 0);
      if (!first && (c.op_type == "Sub" || c.op_type == "Div")) break;
      PostOp p;
      p.binary = true;
      p.alg = *alg;
      p.nodes = {&c};
      p.out = out;
      if (const Tensor* k = Const(other)) {
        auto dims = BroadcastDims(k->dims(), st.dims);
        if (!dims || k->dtype() != DType::kFloat) break;
        p.src1_md = PlainMd(*dims);
        p.src1_slot = ConstSlot(*k, p.src1_md);
        p.name = absl::StrCat(c.op_type, "(const)");
      } else if (IsF32(other) && V(other).slot >= 0 && V(other).dims == st.dims) {
        p.src1_slot = V(other).slot;  // computed earlier: a residual connection
        p.src1_md = plan_.slots[p.src1_slot].md;
        p.name = absl::StrCat(c.op_type, "(residual)");
      } else {
        break;
      }
      chain.push_back(p);
      cur = out;
      continue;
    }
    if (c.op_type == "BatchNormalization" && c.input(0) == cur && st.dims.size() >= 2) {
      std::vector<int64_t> dims(st.dims.size(), 1);
      dims[1] = st.dims[1];
      Tensor scale, shift;
      if (!FoldBatchNorm(c, &scale, &shift)) break;
      plan_.constants.push_back(scale);
      plan_.constants.push_back(shift);
      PostOp mul;
      mul.binary = true;
      mul.alg = algorithm::binary_mul;
      mul.src1_md = PlainMd(dims);
      mul.src1_slot = ConstSlot(plan_.constants[plan_.constants.size() - 2], mul.src1_md);
      mul.name = "bn_scale";
      PostOp add = mul;
      add.alg = algorithm::binary_add;
      add.src1_slot = ConstSlot(plan_.constants.back(), add.src1_md);
      add.name = "bn_shift";
      add.nodes = {&c};
      add.out = out;
      chain.push_back(mul);
      chain.push_back(add);
      cur = out;
      continue;
    }
    break;
  }
  return chain;
}

bool Lowerer::FoldBatchNorm(const Node& bn, Tensor* scale, Tensor* shift) {
  if (bn.num_inputs() < 5) return false;
  std::optional<ChannelAffine> a =
      BatchNormAsAffine(bn, Const(bn.input(1)), Const(bn.input(2)), Const(bn.input(3)), Const(bn.input(4)));
  if (!a) return false;
  *scale = a->ScaleF32();
  *shift = a->ShiftF32();
  return true;
}

}  // namespace aic::cpu
