// Conv (1-D and 2-D, groups, dilations) as one ConvStep (cuDNN or the
// implicit-GEMM kernel) with a following BatchNorm folded into its weights and its
// bias, residual Add and activation as one elementwise program; 2-D pooling.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "exec/cuda/lowering.h"

namespace aic::cuda {

namespace {

// Symmetric begin pads per spatial dim, or nullopt (cuDNN takes symmetric pads only).
std::optional<std::vector<int64_t>> SymmetricPads(const Node& n, const std::vector<int64_t>& in,
                                                  const std::vector<int64_t>& out, const std::vector<int64_t>& k,
                                                  const std::vector<int64_t>& s, const std::vector<int64_t>& d) {
  size_t sp = k.size();
  std::string auto_pad = n.GetString("auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * sp, 0);
  if (auto_pad == "NOTSET") {
    pads = n.GetInts("pads", pads);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; ++i) {
      int64_t total = std::max<int64_t>(0, (out[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in[i]);
      if (total % 2 != 0) return std::nullopt;
      pads[i] = pads[i + sp] = total / 2;
    }
  } else if (auto_pad != "VALID") {
    return std::nullopt;
  }
  if (pads.size() != 2 * sp) return std::nullopt;
  for (size_t i = 0; i < sp; ++i) {
    if (pads[i] != pads[i + sp]) return std::nullopt;
  }
  pads.resize(sp);
  return pads;
}

}  // namespace

bool LowerConv(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *w = n.input(1), *b = n.input(2), *y = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(y) || L.Const(w) == nullptr || L.Const(w)->dtype() != DType::kFloat) return false;
  if (b != nullptr && (L.Const(b) == nullptr || L.Const(b)->dtype() != DType::kFloat)) return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& yd = L.V(y).dims;
  const Tensor& wt = *L.Const(w);
  if ((xd.size() != 4 && xd.size() != 3) || wt.dims().size() != xd.size() || yd.size() != xd.size()) return false;
  bool one_d = xd.size() == 3;
  size_t sp = xd.size() - 2;
  std::vector<int64_t> in(xd.begin() + 2, xd.end()), out(yd.begin() + 2, yd.end());
  std::vector<int64_t> k(wt.dims().begin() + 2, wt.dims().end());
  std::vector<int64_t> s = n.GetInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> d = n.GetInts("dilations", std::vector<int64_t>(sp, 1));
  if (s.size() != sp || d.size() != sp) return false;
  auto pads = SymmetricPads(n, in, out, k, s, d);
  if (!pads) return false;
  ConvDesc cd;
  cd.n = xd[0];
  cd.c = xd[1];
  cd.k = wt.dims()[0];
  cd.groups = n.GetInt("group", 1);
  if (cd.groups <= 0 || cd.c % cd.groups != 0 || cd.k % cd.groups != 0 || wt.dims()[1] != cd.c / cd.groups ||
      yd[1] != cd.k) {
    return false;
  }
  cd.h = one_d ? 1 : in[0];
  cd.w = in[sp - 1];
  cd.oh = one_d ? 1 : out[0];
  cd.ow = out[sp - 1];
  cd.kh = one_d ? 1 : k[0];
  cd.kw = k[sp - 1];
  cd.sh = one_d ? 1 : s[0];
  cd.sw = s[sp - 1];
  cd.dh = one_d ? 1 : d[0];
  cd.dw = d[sp - 1];
  cd.ph = one_d ? 0 : (*pads)[0];
  cd.pw = (*pads)[sp - 1];

  // Fold a following inference BatchNorm into the weights and bias.
  Tensor weights = wt;
  std::optional<Tensor> bias;
  if (b != nullptr) bias = L.Const(b)->Clone();
  const Value* value = y;
  std::string label = n.Describe();
  Tensor scale, shift;
  if (const Node* c = L.SoleConsumer(y); c != nullptr && L.options().fuse_epilogues &&
                                         c->op_type == "BatchNormalization" && c->domain.empty() &&
                                         FoldBatchNorm(L, *c, &scale, &shift) && scale.num_elements() == cd.k) {
    weights = wt.Clone();
    int64_t per = weights.num_elements() / cd.k;
    float* wp = weights.mutable_data<float>();
    for (int64_t o = 0; o < cd.k; ++o) {
      for (int64_t i = 0; i < per; ++i) wp[o * per + i] *= scale.data<float>()[o];
    }
    Tensor nb(DType::kFloat, {cd.k});
    for (int64_t o = 0; o < cd.k; ++o) {
      float b0 = bias ? static_cast<float>(bias->ElementAsDouble(o)) : 0.0f;
      nb.mutable_data<float>()[o] = b0 * scale.data<float>()[o] + shift.data<float>()[o];
    }
    bias = nb;
    L.MarkFused(c);
    value = c->output(0);
    absl::StrAppend(&label, " + ", c->Describe());
  }
  L.plan().constants.push_back(weights);
  int wslot = L.WeightSlot(L.plan().constants.back(), w->name());
  int xslot = L.SlotOf(x);
  std::vector<int64_t> cdims(yd.size() - 1, 1);
  cdims[0] = cd.k;
  int scratch = L.ScratchSlot(value->name() + "/conv", DType::kFloat, yd);
  EltChain chain(L, yd);
  bool ok = chain.Start(scratch, yd);
  if (ok && bias) {
    L.plan().constants.push_back(bias->WithDims(cdims));
    ok = chain.AppendOperand(EltOp::kAdd, L.WeightSlot(L.plan().constants.back(), label + "/bias"), cdims, "bias");
  }
  AIC_CHECK(ok, "a conv output and its bias always make a program");
  const Value* last = chain.Extend(value);
  if (chain.size() == 0) {
    L.AddStep(std::make_unique<ConvStep>(cd, xslot, wslot, L.OutputSlot(value)), label);
  } else {
    L.AddStep(std::make_unique<ConvStep>(cd, xslot, wslot, scratch), label);
    chain.Emit(last, label + " epilogue");
  }
  return true;
}

bool LowerPool(Lowerer& L, const Node& n) {
  const Value *x = n.input(0), *y = n.output(0);
  if (!L.IsF32(x) || !L.IsF32(y) || n.output(1) != nullptr) return false;
  const std::vector<int64_t>& xd = L.V(x).dims;
  const std::vector<int64_t>& yd = L.V(y).dims;
  if ((xd.size() != 4 && xd.size() != 3) || yd.size() != xd.size()) return false;
  size_t sp = xd.size() - 2;
  bool one_d = sp == 1;
  std::vector<int64_t> k = n.GetInts("kernel_shape");
  std::vector<int64_t> s = n.GetInts("strides", std::vector<int64_t>(sp, 1));
  std::vector<int64_t> d = n.GetInts("dilations", std::vector<int64_t>(sp, 1));
  if (k.size() != sp || s.size() != sp || n.GetInt("storage_order", 0) != 0) return false;
  for (int64_t v : d) {
    if (v != 1) return false;
  }
  std::vector<int64_t> in(xd.begin() + 2, xd.end()), out(yd.begin() + 2, yd.end());
  auto pads = SymmetricPads(n, in, out, k, s, d);
  PoolDesc p;
  p.max = n.op_type == "MaxPool";
  p.count_include_pad = !p.max && n.GetInt("count_include_pad", 0) != 0;
  std::vector<int64_t> begin(sp, 0);
  if (pads) {
    begin = *pads;
  } else if (n.GetString("auto_pad", "NOTSET") == "NOTSET" && !p.count_include_pad) {
    // Asymmetric explicit pads: the window start is what matters, the output
    // size (from inference) bounds the rest.
    std::vector<int64_t> all = n.GetInts("pads", std::vector<int64_t>(2 * sp, 0));
    if (all.size() != 2 * sp) return false;
    begin.assign(all.begin(), all.begin() + static_cast<int64_t>(sp));
  } else {
    return false;
  }
  p.n = xd[0];
  p.c = xd[1];
  p.h = one_d ? 1 : in[0];
  p.w = in[sp - 1];
  p.oh = one_d ? 1 : out[0];
  p.ow = out[sp - 1];
  p.kh = one_d ? 1 : k[0];
  p.kw = k[sp - 1];
  p.sh = one_d ? 1 : s[0];
  p.sw = s[sp - 1];
  p.ph = one_d ? 0 : begin[0];
  p.pw = begin[sp - 1];
  int xs = L.SlotOf(x);
  L.AddStep(std::make_unique<PoolStep>(p, xs, L.OutputSlot(y)), n.Describe());
  return true;
}

}  // namespace aic::cuda
