// Lowerings of MatMul and Gemm to oneDNN's matmul: constant right-hand sides
// are packed once (format_tag::any lets oneDNN choose its GEMM-friendly
// layout), Gemm's alpha is folded into the packed weights and beta*C becomes
// the bias, and bias adds/activations after a MatMul become post-ops.
#include "exec/cpu/lowering.h"

namespace aic::cpu {

namespace {

std::vector<int64_t> PadTo(const std::vector<int64_t>& d, size_t rank) {
  std::vector<int64_t> p(rank - d.size(), 1);
  p.insert(p.end(), d.begin(), d.end());
  return p;
}

Tensor Scaled(const Tensor& t, float k) {
  Tensor c = t.Clone();
  for (float& v : c.mutable_span<float>()) v *= k;
  return c;
}

}  // namespace

bool LowerMatMul(Lowerer& L, const Node& n) {
  const Value* a = n.input(0);
  const Value* b = n.input(1);
  const Value* out = n.output(0);
  if (!L.IsF32(a) || !L.IsF32(b) || !L.IsF32(out)) return false;
  const std::vector<int64_t>& ad = L.V(a).dims;
  const std::vector<int64_t>& bd = L.V(b).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (ad.size() < 2 || bd.size() < 2 || od.size() > 5 || NumElements(od) == 0) return false;
  const Tensor* bc = L.Const(b);
  memory::desc a_md = PlainMd(PadTo(ad, od.size()));
  memory::desc b_plain = PlainMd(PadTo(bd, od.size()));
  memory::desc b_md = bc != nullptr && L.options().blocked_layouts ? AnyMd(PadTo(bd, od.size())) : b_plain;
  memory::desc dst_md = PlainMd(od);
  Plan& plan = L.plan();
  std::vector<PostOp> chain = L.CollectPostOps(out);
  auto [pd, k] = L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, dst_md), attr, plan.engine);
  });
  int sa = L.PlainSlot(a);
  int sb = bc != nullptr ? L.PackedConstSlot(*bc, b_plain, pd.weights_desc()) : L.PlainSlot(b);
  DnnlStep* step = L.AddDnnlStep(dnnl::matmul(pd), "matmul", n);
  step->AddArg(DNNL_ARG_SRC, sa, a_md, false);
  step->AddArg(DNNL_ARG_WEIGHTS, sb, pd.weights_desc(), false);
  L.FinishPostOps(step, out, chain, k, dst_md, true);
  return true;
}

bool LowerGemm(Lowerer& L, const Node& n) {
  const Value* a = n.input(0);
  const Value* b = n.input(1);
  const Value* c = n.has_input(2) ? n.input(2) : nullptr;
  const Value* out = n.output(0);
  if (!L.IsF32(a) || !L.IsF32(b) || !L.IsF32(out)) return false;
  const std::vector<int64_t>& ad = L.V(a).dims;
  const std::vector<int64_t>& bd = L.V(b).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  if (ad.size() != 2 || bd.size() != 2 || od.size() != 2) return false;
  bool ta = n.GetInt("transA", 0) != 0, tb = n.GetInt("transB", 0) != 0;
  float alpha = n.GetFloat("alpha", 1.0f), beta = n.GetFloat("beta", 1.0f);
  int64_t m = od[0], nn = od[1], kk = ta ? ad[0] : ad[1];
  const Tensor* bc = L.Const(b);
  if (bc == nullptr && alpha != 1.0f) return false;
  const Tensor* cc = c != nullptr ? L.Const(c) : nullptr;
  if (c != nullptr && beta != 0.0f && (cc == nullptr || cc->dtype() != DType::kFloat)) return false;
  // Transposed operands are strided views of the stored matrices.
  memory::desc a_md(memory::dims{m, kk}, memory::data_type::f32, ta ? memory::dims{1, m} : memory::dims{kk, 1});
  memory::desc b_from(memory::dims{kk, nn}, memory::data_type::f32, tb ? memory::dims{1, kk} : memory::dims{nn, 1});
  memory::desc b_md = bc != nullptr && L.options().blocked_layouts ? AnyMd({kk, nn}) : b_from;
  memory::desc bias_md;
  Tensor bias;
  if (cc != nullptr && beta != 0.0f) {
    auto dims = BroadcastDims(cc->dims(), od);
    if (!dims) return false;
    bias = beta == 1.0f ? *cc : Scaled(*cc, beta);
    bias_md = PlainMd(*dims);
  }
  memory::desc dst_md = PlainMd(od);
  Plan& plan = L.plan();
  std::vector<PostOp> chain = L.CollectPostOps(out);
  auto [pd, k] = L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_md, bias_md, dst_md), attr, plan.engine);
  });
  int sa = L.PlainSlot(a);
  int sb;
  if (bc != nullptr) {
    Tensor w = *bc;
    if (alpha != 1.0f) {
      plan.constants.push_back(Scaled(*bc, alpha));
      w = plan.constants.back();
    }
    sb = L.PackedConstSlot(w, b_from, pd.weights_desc());
  } else {
    sb = L.PlainSlot(b);
  }
  DnnlStep* step = L.AddDnnlStep(dnnl::matmul(pd), "gemm", n);
  step->AddArg(DNNL_ARG_SRC, sa, a_md, false);
  step->AddArg(DNNL_ARG_WEIGHTS, sb, pd.weights_desc(), false);
  if (bias.defined()) {
    plan.constants.push_back(bias);
    step->AddArg(DNNL_ARG_BIAS, L.ConstSlot(plan.constants.back(), bias_md), bias_md, false);
  }
  L.FinishPostOps(step, out, chain, k, dst_md, true);
  return true;
}

}  // namespace aic::cpu
