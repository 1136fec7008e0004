// Lowerings of MatMul and Gemm to oneDNN's matmul: constant right-hand sides
// are packed once (format_tag::any lets oneDNN choose its GEMM-friendly
// layout), Gemm's alpha is folded into the packed weights and beta*C becomes
// the bias, a MatMul's bias add (a constant row) becomes its bias argument,
// and activations and other adds after it post-ops.
// ai.aic FusedLinearReLU (Gemm + ReLU, from `opt --target aic`) is the Gemm
// lowering with the ReLU as its first, mandatory post-op.

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/gemv.h"
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

namespace {

// A strided (not blocked) layout: a transposed view (LowerTransposeAsView), which
// oneDNN's matmul reads in place.
bool IsStridedView(const Slot& s) {
  return !s.plain && s.md.data.format_kind == dnnl_blocked && s.md.data.format_desc.blocking.inner_nblks == 0;
}

// When out's only reader is a Transpose that keeps the last dim (attention's
// head merge), the dims-of-out desc whose bytes are laid out as that
// transpose's plain output, so the matmul writes the transposed tensor directly.
const Node* TransposedDst(Lowerer& L, const Value* out, memory::desc* md) {
  const ValueState& st = L.V(out);
  if (st.graph_output || st.consumers.size() != 1) return nullptr;
  const Node* t = st.consumers[0];
  if (t->op_type != "Transpose" || !t->domain.empty() || t->output(0) == nullptr || !L.IsF32(t->output(0))) {
    return nullptr;
  }
  auto rank = static_cast<int64_t>(st.dims.size());
  std::vector<int64_t> perm = t->GetInts("perm");
  if (static_cast<int64_t>(perm.size()) != rank || perm.back() != rank - 1) return nullptr;
  const std::vector<int64_t>& td = L.V(t->output(0)).dims;
  std::vector<int64_t> tstrides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i) tstrides[i] = tstrides[i + 1] * td[i + 1];
  memory::dims strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank) return nullptr;
    strides[perm[i]] = tstrides[i];  // out dim perm[i] is the transposed dim i
  }
  *md = memory::desc(ToDnnlDims(st.dims), memory::data_type::f32, strides);
  return t;
}

// A MatMul of [.., M, K] by a 2-D [K, N] as the 2-D GEMM [M', K] x [K, N]
// (M' = all leading dims), when there are leading dims to fold and every
// binary post-op operand reads the same bytes either way: broadcast over all
// rows ([1, .., 1, N] or a scalar, becoming [1, N] / [1, 1]), or dense with
// the output's dims (becoming [M', N]); `chain` gets the rewritten descs.
// False leaves everything as it was.
bool FlattenRows(const std::vector<int64_t>& ad, const std::vector<int64_t>& od, std::vector<PostOp>& chain,
                 std::vector<int64_t>* flat_a, std::vector<int64_t>* flat_o) {
  size_t rank = od.size();
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= od[i];
  *flat_a = {rows, ad[rank - 1]};
  *flat_o = {rows, od[rank - 1]};
  std::vector<memory::desc> rewritten;
  for (const PostOp& p : chain) {
    if (!p.binary) {
      rewritten.push_back(p.src1_md);
      continue;
    }
    memory::dims d = p.src1_md.dims();
    std::vector<int64_t> dims(d.begin(), d.end());
    if (d.size() != rank || p.src1_md != PlainMd(dims)) return false;
    bool row_broadcast = true;
    for (size_t i = 0; row_broadcast && i + 1 < rank; ++i) row_broadcast = d[i] == 1;
    if (row_broadcast) {
      rewritten.push_back(PlainMd({1, d.back()}));
    } else if (dims == od) {
      rewritten.push_back(PlainMd(*flat_o));
    } else {
      return false;
    }
  }
  for (size_t i = 0; i < chain.size(); ++i) chain[i].src1_md = rewritten[i];
  return true;
}

// The bias desc for a destination of `rank` dims: [1, .., 1, N].
memory::desc RowBiasMd(size_t rank, int64_t n) {
  std::vector<int64_t> d(rank, 1);
  d.back() = n;
  return PlainMd(d);
}

// The layout for a constant [K, N] weight read by oneDNN 2.6's gemm:jit
// (the f32 matmul without AVX-512) where N is a multiple of 1024: rows
// N + 16 floats apart. Rows 4 KB apart map to the same cache sets, and the
// kernel gemm:jit picks for a 64-byte aligned B reads them in place: a
// [128, 768] x [768, 3072] MatMul took 14.1 ms with such a B, 7.8 with B as
// a file leaves it (16 bytes past a line, so packed first), 6.5 padded;
// [128, 256] x [256, 1024] 1.68 / 0.90 / 0.75 (aic-onnx bench p10, Zen 3).
// Other widths stay as they are (padding them measured within noise).
// nullopt where the primitive is not gemm:jit or B is not plain 2-D.
std::optional<memory::desc> GemmWeightsMd(const dnnl::matmul::primitive_desc& pd, const memory::desc& b_md) {
  if (std::string(pd.impl_info_str()).find("gemm") == std::string::npos) return std::nullopt;
  const memory::desc w = pd.weights_desc();
  const memory::dims d = w.dims();
  if (d.size() != 2 || b_md.dims() != d || w != PlainMd({d[0], d[1]}) || d[1] % 1024 != 0) return std::nullopt;
  return memory::desc(d, memory::data_type::f32, memory::dims{d[1] + 16, 1});
}

}  // namespace

// A leading Add of a constant row ([N], [1, N], [1, .., 1, N]: a linear
// layer's bias) taken off `chain`, to be the matmul's own bias argument,
// which every implementation adds as it writes the output (gemm:jit nearly
// for free, where as a binary post-op it is a slow pass: post_ops.cc
// BinaryPostOpsRunApart). nullopt leaves the chain as it was.
std::optional<PostOp> TakeRowBias(Lowerer& L, std::vector<PostOp>& chain, int64_t n) {
  if (chain.empty() || !chain[0].binary || chain[0].alg != dnnl::algorithm::binary_add || chain[0].out == nullptr ||
      L.plan().slots[chain[0].src1_slot].storage != Slot::Storage::kConstant) {
    return std::nullopt;
  }
  memory::dims d = chain[0].src1_md.dims();
  for (size_t i = 0; i + 1 < d.size(); ++i) {
    if (d[i] != 1) return std::nullopt;
  }
  if (d.empty() || d.back() != n) return std::nullopt;
  PostOp bias = chain[0];
  chain.erase(chain.begin());
  return bias;
}

bool LowerMatMul(Lowerer& L, const Node& n) {
  const Value* a = n.input(0);
  const Value* b = n.input(1);
  const Value* out = n.output(0);
  if (!L.IsF32(a) || !L.IsF32(b) || !L.IsF32(out)) return false;
  const std::vector<int64_t>& ad = L.V(a).dims;
  const std::vector<int64_t>& bd = L.V(b).dims;
  const std::vector<int64_t>& od = L.V(out).dims;
  // oneDNN 2.6's matmul takes at most 5 dims; a deeper [.., M, K] x [K, N]
  // (Twins' windowed attention: [1, 8, 8, 7, 7, 64] x [64, 192]) folds its
  // leading dims into M below.
  constexpr size_t kMaxMatMulRank = 5;
  const bool rows_fold = bd.size() == 2 && ad.size() == od.size() && ad.size() >= 3;
  if (ad.size() < 2 || bd.size() < 2 || (od.size() > kMaxMatMulRank && !rows_fold) || NumElements(od) == 0) {
    return false;
  }
  const Tensor* bc = L.Const(b);
  if (bc != nullptr && bd.size() == 2 && ad.size() == od.size()) {
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < od.size(); ++i) rows *= od[i];
    FewRowsProduct p;
    p.a = a;
    p.out = out;
    p.m = rows;
    p.k = bd[0];
    p.n = bd[1];
    p.weights = bc;
    p.weights_value = b;
    p.release_weights = true;
    if (rows <= kernels::GemvMatrix::kMaxRows && LowerFewRowsProduct(L, n, p)) return true;
  }
  memory::desc a_md = PlainMd(PadTo(ad, od.size()));
  memory::desc b_plain = PlainMd(PadTo(bd, od.size()));
  memory::desc b_md = bc != nullptr && L.options().blocked_layouts ? AnyMd(PadTo(bd, od.size())) : b_plain;
  memory::desc dst_md = PlainMd(od);
  Plan& plan = L.plan();
  std::vector<PostOp> chain = L.CollectPostOps(out);
  std::optional<PostOp> bias = TakeRowBias(L, chain, od.back());
  const Value* computed = bias ? bias->out : out;  // what the matmul itself writes
  auto build = [&](const memory::desc& am, const memory::desc& bm, const memory::desc& dm) {
    return L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
      if (!bias) return dnnl::matmul::primitive_desc(dnnl::matmul::desc(am, bm, dm), attr, plan.engine);
      memory::desc bias_md = RowBiasMd(dm.dims().size(), od.back());
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(am, bm, bias_md, dm), attr, plan.engine);
    });
  };
  // Transposed views as operands and a transposed destination, when the
  // primitive takes them with an optimized kernel; else plain copies.
  int sa = -1, sb = -1;
  const Slot* va = L.V(a).slot >= 0 && L.Const(a) == nullptr ? &plan.slots[L.V(a).slot] : nullptr;
  const Slot* vb = L.V(b).slot >= 0 && bc == nullptr ? &plan.slots[L.V(b).slot] : nullptr;
  bool a_view = va != nullptr && IsStridedView(*va) && ad.size() == od.size();
  bool b_view = vb != nullptr && IsStridedView(*vb) && bd.size() == od.size();
  // bf16 compute (issue #17, as LowerConv): constant weights and a left-hand
  // side the model both declares bfloat16 are read as bfloat16, the left one
  // rounded by a reorder into a plain bf16 copy; f32 accumulation and output.
  bool bf16 = bc != nullptr && L.ReadsAsBf16(a) && L.ReadsAsBf16(b);
  const auto bf16_type = memory::data_type::bf16;
  if (bf16) a_view = b_view = false;
  memory::desc tdst;
  const Node* transpose = chain.empty() && !bf16 ? TransposedDst(L, computed, &tdst) : nullptr;
  std::optional<std::pair<dnnl::matmul::primitive_desc, size_t>> built;
  if ((a_view || b_view || transpose != nullptr) && od.size() <= kMaxMatMulRank) {
    built = IfFast("matmul", [&] {
      return build(a_view ? va->md : a_md, b_view ? vb->md : b_md, transpose != nullptr ? tdst : dst_md);
    });
  }
  if (built) {
    if (a_view) {
      a_md = va->md;
      sa = L.V(a).slot;
    }
    if (b_view) {
      b_md = vb->md;
      sb = L.V(b).slot;
    }
  } else {
    transpose = nullptr;
    // [.., M, K] x [K, N]: as a batched problem oneDNN 2.6 neither packs the
    // weights nor merges the rows (ConvNeXt's [1, 7, 7, 768] ran as 7 GEMMs of
    // M = 7, 2.6x slower than the same bytes as one GEMM of M = 49).
    std::vector<int64_t> flat_a, flat_o;
    bool flat = rows_fold && FlattenRows(ad, od, chain, &flat_a, &flat_o);
    if (rows_fold && !flat && od.size() > kMaxMatMulRank) {
      chain.clear();  // the nodes after it run as steps of their own
      flat = FlattenRows(ad, od, chain, &flat_a, &flat_o);
    }
    if (flat) {
      a_md = PlainMd(flat_a);
      dst_md = PlainMd(flat_o);
      b_plain = PlainMd(bd);
      b_md = bc != nullptr && L.options().blocked_layouts ? AnyMd(bd) : b_plain;
    }
    if (bf16) {
      built = IfFast("matmul", [&] {
        return build(WithDataType(a_md, bf16_type), WithDataType(b_md, bf16_type), dst_md);
      });
      bf16 = built.has_value();  // no fast bf16 kernel on this CPU: f32
    }
    if (!built) built = build(a_md, b_md, dst_md);
    if (bc != nullptr && !bf16) {
      if (std::optional<memory::desc> gemm_b = GemmWeightsMd(built->first, b_md)) {
        auto padded = IfFast("matmul", [&] { return build(a_md, *gemm_b, dst_md); });
        if (padded) built = padded;
      }
    }
  }
  auto& [pd, k] = *built;
  if (bf16) {
    a_md = WithDataType(a_md, bf16_type);  // the same bytes as the plain bf16 copy
    sa = L.SlotIn(a, WithDataType(PlainMd(ad), bf16_type));
  }
  if (sa < 0) sa = L.PlainSlot(a);
  if (sb < 0) sb = bc != nullptr ? L.PackedConstSlot(*bc, b_plain, pd.weights_desc()) : L.PlainSlot(b);
  DnnlStep* step = L.AddDnnlStep(dnnl::matmul(pd), "matmul", n);
  step->AddArg(DNNL_ARG_SRC, sa, a_md, false);
  step->AddArg(DNNL_ARG_WEIGHTS, sb, pd.weights_desc(), false);
  if (bias) {
    step->AddArg(DNNL_ARG_BIAS, bias->src1_slot, pd.bias_desc(), false);
    for (const Node* b : bias->nodes) L.MarkFused(b);
    absl::StrAppend(&step->label, " + bias");
  }
  if (transpose == nullptr) {
    L.FinishPostOps(step, computed, chain, k, PlainMd(od), true, &dst_md);
    return true;
  }
  // The output lives in the transposed order; the Transpose's output is a
  // plain alias of the same bytes, and the Transpose node is done.
  int slot = L.FinishPostOps(step, computed, chain, 0, tdst, false);
  const Value* tout = transpose->output(0);
  Slot s;
  s.name = tout->name();
  s.dtype = DType::kFloat;
  s.dims = L.V(tout).dims;
  s.md = PlainMd(s.dims);
  s.plain = true;
  s.storage = Slot::Storage::kArena;
  s.buffer = plan.slots[slot].buffer;
  s.alias_of = slot;
  plan.slots.push_back(std::move(s));
  L.V(tout).slot = static_cast<int>(plan.slots.size()) - 1;
  L.MarkFused(transpose);
  absl::StrAppend(&step->label, " + [", transpose->Describe(), "]");
  return true;
}

namespace {

// Gemm, followed by a ReLU fused into the same primitive when `relu`.
bool LowerGemmWith(Lowerer& L, const Node& n, bool relu) {
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
  if (bc != nullptr && !ta && m <= kernels::GemvMatrix::kMaxRows) {
    FewRowsProduct p;
    p.a = a;
    p.out = out;
    p.m = m;
    p.k = kk;
    p.n = nn;
    p.weights = bc;
    p.weights_value = b;
    p.transposed = tb;
    p.scale = alpha;
    p.bias = cc != nullptr && beta != 0.0f ? cc : nullptr;
    p.bias_scale = beta;
    p.release_weights = true;
    p.relu = relu;
    if (LowerFewRowsProduct(L, n, p)) return true;
  }
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
  std::vector<PostOp> chain;
  if (relu) {
    PostOp r;
    r.alg = dnnl::algorithm::eltwise_relu;
    r.out = out;  // the node's own output: no graph node besides n behind it
    r.name = "relu";
    chain.push_back(r);
  }
  std::vector<PostOp> more = L.CollectPostOps(out);
  chain.insert(chain.end(), more.begin(), more.end());
  auto build = [&](const memory::desc& am, const memory::desc& bm) {
    return L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(am, bm, bias_md, dst_md), attr, plan.engine);
    });
  };
  // bf16 compute, as LowerMatMul (alpha scaling would change the weights' values).
  bool bf16 = bc != nullptr && alpha == 1.0f && L.ReadsAsBf16(a) && L.ReadsAsBf16(b);
  std::optional<std::pair<dnnl::matmul::primitive_desc, size_t>> built;
  if (bf16) {
    const auto t = memory::data_type::bf16;
    built = IfFast("matmul", [&] { return build(WithDataType(a_md, t), WithDataType(b_md, t)); });
    bf16 = built.has_value();
  }
  if (!built) built = build(a_md, b_md);
  auto [pd, k] = *built;
  if (relu && k == 0) return false;  // the ReLU is part of the node: never drop it
  int sa = -1;
  if (bf16) {
    a_md = WithDataType(a_md, memory::data_type::bf16);  // strided over the plain bf16 copy's bytes
    sa = L.SlotIn(a, WithDataType(PlainMd(ad), memory::data_type::bf16));
  } else {
    sa = L.PlainSlot(a);
  }
  int sb;
  if (bc != nullptr) {
    // A reference, not a copy: a copy would keep the weight's plain bytes
    // from being released (Lowerer::ReleasePlainCopy).
    const Tensor* w = bc;
    if (alpha != 1.0f) {
      plan.constants.push_back(Scaled(*bc, alpha));
      w = &plan.constants.back();
    }
    sb = L.PackedConstSlot(*w, b_from, pd.weights_desc());
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

}  // namespace

bool LowerGemm(Lowerer& L, const Node& n) { return LowerGemmWith(L, n, /*relu=*/false); }
bool LowerFusedLinearReLU(Lowerer& L, const Node& n) { return LowerGemmWith(L, n, /*relu=*/true); }

}  // namespace aic::cpu
