// Which graph nodes can ride along as oneDNN post-ops of the step before
// them: unary activations and affine maps by scalars (eltwise post-ops),
// adds/muls by broadcast constants or by a same-shaped activation computed
// earlier (binary post-ops: bias, per-channel scale, residual add), inference
// BatchNormalization (a per-channel mul and add), and the HardSwish that
// exporters spell x * Clip(x + 3, 0, 6) / 6.
#include <cfloat>
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "exec/cpu/lowering.h"

namespace aic::cpu {

namespace {

using dnnl::algorithm;

bool Near(float a, float b) { return std::fabs(a - b) <= 1e-6f * std::max(1.0f, std::fabs(b)); }

}  // namespace

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

memory::desc AnyMd(const std::vector<int64_t>& dims) {
  return memory::desc(ToDnnlDims(dims), memory::data_type::f32, memory::format_tag::any);
}

std::vector<Elt> Lowerer::UnaryAsEltwise(const Node& n, const Value* x) {
  if (!n.domain.empty() || n.output(0) == nullptr || !IsF32(x) || !IsF32(n.output(0))) return {};
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
  if (unary && op == "Gelu") {
    bool tanh = n.GetString("approximate", "none") == "tanh";
    return {{tanh ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf, 0, 0, tanh ? "gelu_tanh" : "gelu"}};
  }
  if (unary && op == "HardSigmoid") {
    return {{algorithm::eltwise_linear, n.GetFloat("alpha", 0.2f), n.GetFloat("beta", 0.5f), "hardsigmoid"},
            {algorithm::eltwise_clip_v2, 0.0f, 1.0f, "hardsigmoid"}};
  }
  if (unary && op == "Clip") {
    float lo = -FLT_MAX, hi = FLT_MAX;
    if (OpsetOf(n) < 11) {
      lo = n.GetFloat("min", lo);
      hi = n.GetFloat("max", hi);
    } else {
      for (size_t i = 1; i <= 2; ++i) {
        if (!n.has_input(i)) continue;
        std::optional<float> c = ScalarConst(n.input(i));
        if (!c) return {};
        (i == 1 ? lo : hi) = *c;
      }
    }
    return {{algorithm::eltwise_clip_v2, lo, hi, "clip"}};
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
  if (op == "Pow" && first) return {{algorithm::eltwise_pow, 1.0f, *c, "pow"}};
  return {};
}

bool Lowerer::MatchHardSwish(const Value* v, PostOp* op) {
  const std::vector<const Node*>& cs = V(v).consumers;
  if (cs.size() != 2 || !IsF32(v)) return false;
  auto single = [&](const Value* x) -> const Node* {
    if (x == nullptr || V(x).graph_output || V(x).consumers.size() != 1) return nullptr;
    return V(x).consumers[0];
  };
  auto is_div6 = [&](const Node* d, const Value* x) {
    std::vector<Elt> e = d == nullptr ? std::vector<Elt>{} : UnaryAsEltwise(*d, x);
    return e.size() == 1 && e[0].alg == algorithm::eltwise_linear && Near(e[0].alpha, 1.0f / 6) && e[0].beta == 0;
  };
  auto is_mul_with_v = [&](const Node* m, const Value* x) {
    return m != nullptr && m->op_type == "Mul" && m->domain.empty() && m->num_inputs() == 2 &&
           ((m->input(0) == v && m->input(1) == x) || (m->input(1) == v && m->input(0) == x));
  };
  for (int swap = 0; swap < 2; ++swap) {
    const Node* add = cs[swap];
    const Node* mul = cs[1 - swap];
    std::vector<Elt> a = UnaryAsEltwise(*add, v);
    if (add->op_type != "Add" || a.size() != 1 || !Near(a[0].beta, 3.0f) || a[0].alpha != 1.0f) continue;
    const Node* clip = single(add->output(0));
    if (clip == nullptr) continue;
    std::vector<Elt> c = UnaryAsEltwise(*clip, add->output(0));
    if (clip->op_type != "Clip" || c.size() != 1 || c[0].alpha != 0.0f || c[0].beta != 6.0f) continue;
    const Node* next = single(clip->output(0));
    const Value* out = nullptr;
    std::vector<const Node*> nodes = {add, clip};
    if (next == mul && is_mul_with_v(mul, clip->output(0))) {  // (x * clip) / 6
      const Node* div = single(mul->output(0));
      if (!is_div6(div, mul->output(0))) continue;
      nodes.insert(nodes.end(), {mul, div});
      out = div->output(0);
    } else if (is_div6(next, clip->output(0))) {  // x * (clip / 6)
      if (single(next->output(0)) != mul || !is_mul_with_v(mul, next->output(0))) continue;
      nodes.insert(nodes.end(), {next, mul});
      out = mul->output(0);
    } else {
      continue;
    }
    op->binary = false;
    op->alg = algorithm::eltwise_hardswish;
    op->alpha = 1.0f / 6;
    op->beta = 0.5f;
    op->nodes = nodes;
    op->out = out;
    op->name = "hardswish";
    return true;
  }
  return false;
}

bool Lowerer::MatchGelu(const Value* v, PostOp* op) {
  const std::vector<const Node*>& cs = V(v).consumers;
  if (cs.size() != 2 || !IsF32(v)) return false;
  auto single = [&](const Value* x) -> const Node* {
    if (x == nullptr || V(x).graph_output || V(x).consumers.size() != 1) return nullptr;
    return V(x).consumers[0];
  };
  // Node m is `op`(x, c) (or (c, x) when commutative) with scalar constant c
  // within 1e-6 of `want` (exporters round √2 and 1/√2 differently).
  auto by_scalar = [&](const Node* m, const char* type, const Value* x, double want) {
    if (m == nullptr || m->op_type != type || !m->domain.empty() || m->num_inputs() != 2 || !IsF32(m->output(0)) ||
        V(m->output(0)).dims != V(v).dims) {
      return false;
    }
    bool commutative = m->op_type != "Div";
    for (int side = 0; side < (commutative ? 2 : 1); ++side) {
      if (m->input(side) != x) continue;
      std::optional<float> c = ScalarConst(m->input(1 - side));
      if (c && std::fabs(*c - want) <= 1e-6 * std::fabs(want)) return true;
    }
    return false;
  };
  auto is_mul_of = [&](const Node* m, const Value* a, const Value* b) {
    return m != nullptr && m->op_type == "Mul" && m->domain.empty() && m->num_inputs() == 2 &&
           ((m->input(0) == a && m->input(1) == b) || (m->input(0) == b && m->input(1) == a));
  };
  for (int swap = 0; swap < 2; ++swap) {
    const Node* scale = cs[swap];
    const Node* other = cs[1 - swap];
    if (!by_scalar(scale, "Div", v, std::sqrt(2.0)) && !by_scalar(scale, "Mul", v, std::sqrt(0.5))) continue;
    const Node* erf = single(scale->output(0));
    if (erf == nullptr || erf->op_type != "Erf" || !erf->domain.empty()) continue;
    const Node* add = single(erf->output(0));
    if (!by_scalar(add, "Add", erf->output(0), 1.0)) continue;
    const Value* a = add->output(0);  // 1 + erf(x/√2)
    const Node* m1 = single(a);
    std::vector<const Node*> nodes = {scale, erf, add};
    const Value* out = nullptr;
    if (m1 == other && is_mul_of(m1, v, a)) {  // (x * A) * 0.5
      const Node* m2 = single(m1->output(0));
      if (!by_scalar(m2, "Mul", m1->output(0), 0.5)) continue;
      nodes.insert(nodes.end(), {m1, m2});
      out = m2->output(0);
    } else if (by_scalar(other, "Mul", v, 0.5) && single(other->output(0)) == m1 &&
               is_mul_of(m1, other->output(0), a)) {  // (x * 0.5) * A
      nodes.insert(nodes.end(), {other, m1});
      out = m1->output(0);
    } else if (by_scalar(m1, "Mul", a, 0.5) && single(m1->output(0)) == other &&
               is_mul_of(other, v, m1->output(0))) {  // x * (0.5 * A)
      nodes.insert(nodes.end(), {m1, other});
      out = other->output(0);
    } else {
      continue;
    }
    if (!IsF32(out) || V(out).dims != V(v).dims) continue;
    op->binary = false;
    op->alg = algorithm::eltwise_gelu_erf;
    op->alpha = op->beta = 0;
    op->nodes = nodes;
    op->out = out;
    op->name = "gelu";
    return true;
  }
  return false;
}

std::vector<PostOp> Lowerer::CollectPostOps(const Value* v) {
  std::vector<PostOp> chain;
  if (!options_.fuse_post_ops) return chain;
  const Value* cur = v;
  while (chain.size() < 16) {
    ValueState& st = V(cur);
    if (st.graph_output) break;
    PostOp hs;
    bool hardswish_seen = false;
    for (const PostOp& p : chain) hardswish_seen = hardswish_seen || (!p.binary && p.alg == algorithm::eltwise_hardswish);
    if (!hardswish_seen && MatchHardSwish(cur, &hs)) {
      chain.push_back(hs);
      cur = hs.out;
      continue;
    }
    bool gelu_seen = false;
    for (const PostOp& p : chain) gelu_seen = gelu_seen || (!p.binary && p.alg == algorithm::eltwise_gelu_erf);
    if (!gelu_seen && MatchGelu(cur, &hs)) {
      chain.push_back(hs);
      cur = hs.out;
      continue;
    }
    if (st.consumers.size() != 1) break;
    const Node& c = *st.consumers[0];
    const Value* out = c.output(0);
    if (!c.domain.empty() || out == nullptr || !IsF32(out)) break;
    std::vector<Elt> elts = UnaryAsEltwise(c, cur);
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
  if (bn.num_inputs() < 5 || bn.GetInt("training_mode", 0) != 0) return false;
  for (size_t i = 1; i < bn.num_outputs(); ++i) {
    if (bn.output(i) != nullptr) return false;
  }
  const Tensor* s = Const(bn.input(1));
  const Tensor* b = Const(bn.input(2));
  const Tensor* mean = Const(bn.input(3));
  const Tensor* var = Const(bn.input(4));
  if (!s || !b || !mean || !var) return false;
  int64_t c = s->num_elements();
  for (const Tensor* t : {b, mean, var}) {
    if (t->num_elements() != c) return false;
  }
  double eps = bn.GetFloat("epsilon", 1e-5f);
  *scale = Tensor(DType::kFloat, {c});
  *shift = Tensor(DType::kFloat, {c});
  float* sc = scale->mutable_data<float>();
  float* sh = shift->mutable_data<float>();
  for (int64_t i = 0; i < c; ++i) {
    double k = s->ElementAsDouble(i) / std::sqrt(var->ElementAsDouble(i) + eps);
    sc[i] = static_cast<float>(k);
    sh[i] = static_cast<float>(b->ElementAsDouble(i) - mean->ElementAsDouble(i) * k);
  }
  return true;
}

}  // namespace aic::cpu
