// MatMul and Gemm as one cuBLASLt call each, absorbing what follows them when
// cuBLASLt can compute it in the same call: a scalar Mul/Div (into alpha,
// before any addend), a row-vector bias Add (the BIAS epilogue), a same-shape
// residual Add (as C with beta = 1), then ReLU or GELU-tanh (see epilogue.h). Batched MatMuls whose weight has no batch
// fold the batch into M; other batches go through strided batching.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "exec/cuda/index_math.h"
#include "ops/fused/standard_aliases.h"
#include "exec/cuda/lowering.h"

namespace aic::cuda {

namespace {

struct EpilogueMatch {
  float alpha = 1;  // scalar factors applied to A·B
  int bias = -1;
  int c = -1;
  float beta = 0;
  Activation act = Activation::kNone;
  const Value* final_value = nullptr;
  std::vector<std::string> names;
};

// The input of binary node n that is not v (null when both or neither are v).
const Value* OtherInput(const Node& n, const Value* v) {
  if (n.num_inputs() != 2) return nullptr;
  if (n.input(0) == v && n.input(1) != v) return n.input(1);
  if (n.input(1) == v && n.input(0) != v) return n.input(0);
  return nullptr;
}

// A float constant broadcasting as one row of n values: [n], [1, n], [1, 1, n]...
bool IsRowVector(const Tensor* t, int64_t n) {
  if (t == nullptr || t->dtype() != DType::kFloat || t->num_elements() != n || t->dims().empty()) return false;
  return t->dims().back() == n;
}

// Consumers of y that the GEMM can absorb, given what it already has.
EpilogueMatch MatchEpilogue(Lowerer& L, const Value* y, int64_t n_cols, bool has_bias, bool has_c) {
  EpilogueMatch m;
  m.final_value = y;
  if (!L.options().fuse_epilogues) return m;
  const std::vector<int64_t> out_dims = L.V(y).dims;
  while (m.act == Activation::kNone) {
    const Node* c = L.SoleConsumer(m.final_value);
    if (c == nullptr || !HasStandardSemantics(*c) || c->output(0) == nullptr) break;
    if (L.V(c->output(0)).dims != out_dims || !L.IsF32(c->output(0))) break;
    std::optional<float> scalar;
    if ((c->op_type == "Mul" || c->op_type == "Div") && OtherInput(*c, m.final_value) != nullptr) {
      scalar = L.ScalarConst(OtherInput(*c, m.final_value));
    }
    if (scalar && !has_bias && !has_c && m.bias < 0 && m.c < 0 &&
        (c->op_type == "Mul" || (c->input(0) == m.final_value && *scalar != 0.0f))) {
      // Only before any addend: (A·B)·s + bias is alpha·A·B + bias, (A·B + bias)·s is not.
      m.alpha = c->op_type == "Mul" ? m.alpha * *scalar : m.alpha / *scalar;
      m.names.push_back("scale");
    } else if (c->op_type == "Add") {
      const Value* other = OtherInput(*c, m.final_value);
      if (other == nullptr) break;
      const Tensor* t = L.Const(other);
      if (!has_bias && m.bias < 0 && IsRowVector(t, n_cols) && t->dims().size() <= out_dims.size()) {
        m.bias = L.SlotOf(other);
        m.names.push_back("bias");
      } else if (!has_c && m.c < 0 && L.IsF32(other) && L.V(other).dims == out_dims &&
                 (t != nullptr || L.V(other).slot >= 0)) {
        // The residual must exist already: it is read by this earlier step.
        m.c = L.SlotOf(other);
        m.beta = 1.0f;
        m.names.push_back("residual");
      } else {
        break;
      }
    } else if (auto act = EpilogueActivation(*c)) {
      m.act = *act;
      m.names.push_back(c->op_type == "Relu" ? "relu" : "gelu_tanh");
    } else {
      break;
    }
    L.MarkFused(c);
    m.final_value = c->output(0);
  }
  return m;
}

void EmitGemm(Lowerer& L, const Node& n, MatMulDesc d, int a, int b, int bias, int c, const EpilogueMatch& m) {
  d.epilogue = ComposeEpilogue(bias >= 0, m.act);
  d.alpha *= m.alpha;
  int out = L.OutputSlot(m.final_value);
  std::string label = absl::StrCat(n.Describe(), " [", EpilogueName(d.epilogue), "]");
  if (!m.names.empty()) absl::StrAppend(&label, " + ", absl::StrJoin(m.names, ","));
  L.AddStep(std::make_unique<MatMulStep>(d, a, b, bias, c, out), label);
}

}  // namespace

bool LowerMatMul(Lowerer& L, const Node& n) {
  const Value *a = n.input(0), *b = n.input(1), *y = n.output(0);
  if (!L.IsF32(a) || !L.IsF32(b) || !L.IsF32(y)) return false;
  std::vector<int64_t> ad = L.V(a).dims, bd = L.V(b).dims;
  if (ad.empty() || bd.empty()) return false;
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  int64_t m = ad[ad.size() - 2], k = ad.back(), nn = bd.back();
  if (bd[bd.size() - 2] != k) return false;
  std::vector<int64_t> ab(ad.begin(), ad.end() - 2), bb(bd.begin(), bd.end() - 2);
  while (ab.size() < bb.size()) ab.insert(ab.begin(), 1);
  while (bb.size() < ab.size()) bb.insert(bb.begin(), 1);
  int64_t pa = NumElements(ab), pb = NumElements(bb);
  MatMulDesc d;
  d.k = k;
  d.n = nn;
  d.lda = k;
  d.ldb = nn;
  if (pb == 1) {
    d.m = pa * m;  // A's batch rows are contiguous: one GEMM
  } else if (pa == 1) {
    d.m = m;
    d.batch = pb;
    d.stride_b = k * nn;
  } else if (ab == bb) {
    d.m = m;
    d.batch = pa;
    d.stride_a = m * k;
    d.stride_b = k * nn;
  } else {
    return false;  // mixed broadcast batches: the reference kernel does it
  }
  if (d.batch * d.m * d.n != NumElements(L.V(y).dims)) return false;
  int sa = L.SlotOf(a), sb = L.SlotOf(b);
  EpilogueMatch em = MatchEpilogue(L, y, nn, false, false);
  d.beta = em.beta;
  EmitGemm(L, n, d, sa, sb, em.bias, em.c, em);
  return true;
}

namespace {

// Gemm, or ai.aic's FusedLinearReLU (Relu(Gemm) with Gemm's attributes) when `relu`.
bool LowerGemmNode(Lowerer& L, const Node& n, bool relu) {
  const Value *a = n.input(0), *b = n.input(1), *cv = n.input(2), *y = n.output(0);
  if (!L.IsF32(a) || !L.IsF32(b) || !L.IsF32(y)) return false;
  if (cv != nullptr && !L.IsF32(cv)) return false;
  const std::vector<int64_t>& ad = L.V(a).dims;
  const std::vector<int64_t>& bd = L.V(b).dims;
  if (ad.size() != 2 || bd.size() != 2) return false;
  MatMulDesc d;
  d.trans_a = n.GetInt("transA", 0) != 0;
  d.trans_b = n.GetInt("transB", 0) != 0;
  d.m = d.trans_a ? ad[1] : ad[0];
  d.k = d.trans_a ? ad[0] : ad[1];
  d.n = d.trans_b ? bd[0] : bd[1];
  if ((d.trans_b ? bd[1] : bd[0]) != d.k) return false;
  d.lda = ad[1];
  d.ldb = bd[1];
  d.alpha = n.GetFloat("alpha", 1.0f);
  float beta = n.GetFloat("beta", 1.0f);
  std::vector<int64_t> out_dims = {d.m, d.n};
  if (L.V(y).dims != out_dims) return false;
  int sa = L.SlotOf(a), sb = L.SlotOf(b);
  int bias = -1, c = -1;
  if (cv != nullptr && beta != 0.0f) {
    const Tensor* ct = L.Const(cv);
    if (IsRowVector(ct, d.n) && ct->dims().size() <= 2) {
      if (beta == 1.0f) {
        bias = L.SlotOf(cv);
      } else {
        // beta·bias folded at compile time.
        Tensor scaled = ct->Clone();
        for (float& v : scaled.mutable_span<float>()) v *= beta;
        L.plan().constants.push_back(scaled);
        bias = L.WeightSlot(L.plan().constants.back(), cv->name() + "*beta");
      }
    } else if (L.V(cv).dims == out_dims) {
      c = L.SlotOf(cv);
      d.beta = beta;
    } else {
      auto copy = ExpandCopy(L.V(cv).dims, out_dims, 4);
      if (!copy) return false;
      int src = L.SlotOf(cv);
      c = L.ScratchSlot(cv->name() + "/expanded", DType::kFloat, out_dims);
      L.AddStep(std::make_unique<CopyStep>(std::vector<CopyStep::Part>{{*copy, src}}, c),
                absl::StrCat(n.Describe(), " C broadcast"));
      d.beta = beta;
    }
  }
  EpilogueMatch em;
  if (relu) {
    em.final_value = y;
    em.act = Activation::kRelu;
    em.names.push_back("relu");
  } else {
    em = MatchEpilogue(L, y, d.n, bias >= 0, c >= 0);
  }
  if (em.bias >= 0) bias = em.bias;
  if (em.c >= 0) {
    c = em.c;
    d.beta = em.beta;
  }
  EmitGemm(L, n, d, sa, sb, bias, c, em);
  return true;
}

}  // namespace

bool LowerGemm(Lowerer& L, const Node& n) { return LowerGemmNode(L, n, false); }
bool LowerFusedLinearRelu(Lowerer& L, const Node& n) { return LowerGemmNode(L, n, true); }

}  // namespace aic::cuda
