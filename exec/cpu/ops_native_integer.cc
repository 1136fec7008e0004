// Lowerings of the integer ops of quantized models: QLinearMatMul (what a
// session makes of statically quantized QDQ MatMuls) onto oneDNN's int8
// matmul, and those of dynamically quantized models
// (onnxruntime.quantization.quantize_dynamic): DynamicQuantizeLinear onto our
// kernel (exec/cpu/kernels/dynamic_quantize.h), and MatMulInteger as oneDNN's
// int8 matmul computing the raw product in s32 plus an exact pass applying
// the zero points (exec/cpu/kernels/integer_matmul.h). oneDNN's matmul takes
// int8 weights only, so uint8 B is shifted to int8 (B - 128) and its zero
// point with it; constant B is shifted, summed per column and packed once
// here. When the product's one reader is Cast to float and that Cast's one
// reader a Mul by a scalar (the scales quantize_dynamic multiplies in), the
// pass writes the Mul's f32 output directly, with the rounding of each op.
// On CPUs without VNNI oneDNN's u8·s8 pairs go through vpmaddubsw, which
// saturates at int16: there both ops run on our exact pair kernels
// (exec/cpu/kernels/pair_gemm.h) with a constant B instead.
// What is not covered returns false and the reference kernel runs it: a
// computed b zero point (or, without VNNI, a computed B), B of rank other
// than 2, zero points of other sizes.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "exec/cpu/kernels/dynamic_quantize.h"
#include "exec/cpu/kernels/integer_matmul.h"
#include "exec/cpu/kernels/pair_gemm.h"
#include "exec/cpu/native_step.h"

namespace aic::cpu {

namespace {

// A scratch arena slot of at least `bytes` bytes.
int ScratchSlot(Lowerer& L, int64_t bytes) { return L.NewArenaSlot(nullptr, PlainMd({(bytes + 3) / 4}), true); }

// A plain row-major desc of `dims` in type t.
memory::desc PlainOf(const std::vector<int64_t>& dims, memory::data_type t) {
  memory::dims d = ToDnnlDims(dims);
  memory::dims strides(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * d[i + 1];
  return memory::desc(d, t, strides);
}

// The post-op operand desc `md` (of a rank-r destination with leading dims
// 1) as the same bytes against the 2-D [rows, n] destination; false when
// they are not plain.
bool FlattenOperand(memory::desc* md) {
  memory::dims d = md->dims();
  std::vector<int64_t> dims(d.begin(), d.end());
  if (dims.size() < 2 || *md != PlainMd(dims)) return false;
  for (size_t i = 0; i + 2 < dims.size(); ++i) {
    if (dims[i] != 1) return false;
  }
  *md = PlainMd({dims[dims.size() - 2], dims.back()});
  return true;
}

// The model's constant B, once B' (its int8 copy, shifted from uint8) is in
// the plan: nothing reads B while the plan runs, and holding it beside B'
// (packed, or plain where oneDNN reads it as it is) kept a dynamically
// quantized model's weights twice (bert_small_dyn of bench/ZOO.md: 3.2 MB of
// its 27.6 MiB peak, over ONNX Runtime's 24.2, which drops its prepacked
// initializers). So B gives its bytes up (Lowerer::ReleaseWeight: where no
// one but the model compiled and the plan's clone of it holds them), and
// reading it later reads B' (unpacked where it gave up its own plain bytes)
// and shifts it back.
void ReleaseModelB(Lowerer& L, const Tensor& b, const Tensor& shifted) {
  if (b.byte_size() != shifted.byte_size()) return;
  const uint8_t flip = b.dtype() == DType::kUint8 ? 0x80 : 0;  // B' = B - 128: the sign bit flipped
  L.ReleaseWeight(b, [shifted, flip](uint8_t* dst) {
    const auto* s = static_cast<const uint8_t*>(shifted.raw_data());
    for (size_t i = 0; i < shifted.byte_size(); ++i) dst[i] = static_cast<uint8_t>(s[i] ^ flip);
  });
}

// What the fused form needs from LowerMatMulInteger.
struct ScaledProduct {
  const Node* cast;
  const Node* mul;
  const Value* scale;
  const Value* a;
  const Value* azp;  // null: none; else one value
  memory::data_type a_type;
  std::vector<int64_t> a_dims;
  int64_t k, cols;
  const Tensor* shifted;  // B' (int8, k x cols), no b zero point
  std::shared_ptr<std::vector<int32_t>> col_sums;
};

// MatMulInteger -> Cast -> Mul(scale) -> [what CollectPostOps takes] as one
// oneDNN primitive: the brgemm int8 kernel with an s32 bias of -a_zp·colsum(B')
// per column and the scale as the first binary post-op. oneDNN 2.6 adds an s32
// bias in f32 and its brgemm declines runtime output scales; with
// K·255·128 < 2^24 (checked by the caller) S, the bias and their sum are
// integers below 2^24, so the f32 sum is exact and equals f32(C), the Cast's
// result, before the Mul. False (nothing emitted) when oneDNN takes no such
// primitive on a fast path.
bool LowerScaledProduct(Lowerer& L, const Node& n, const ScaledProduct& p) {
  const Value* y = p.mul->output(0);
  const std::vector<int64_t>& od = L.V(y).dims;
  const size_t rank = od.size();
  // [1, .., 1, M, K] runs as the 2-D product (oneDNN packs weights only there).
  bool flat = true;
  for (size_t i = 0; i + 2 < rank; ++i) flat = flat && od[i] == 1;
  std::vector<int64_t> dst_dims = flat ? std::vector<int64_t>{od[rank - 2], p.cols} : od;
  std::vector<int64_t> a_dims = flat ? std::vector<int64_t>{od[rank - 2], p.k} : p.a_dims;
  std::vector<int64_t> b_dims(dst_dims.size(), 1), bias_dims(dst_dims.size(), 1);
  b_dims[b_dims.size() - 2] = p.k;
  b_dims.back() = p.cols;
  bias_dims.back() = p.cols;
  using dt = memory::data_type;
  memory::desc a_md = PlainOf(a_dims, p.a_type);
  memory::desc b_plain = PlainOf(b_dims, dt::s8);
  memory::desc b_any(ToDnnlDims(b_dims), dt::s8, memory::format_tag::any);
  memory::desc bias_md = p.azp != nullptr ? PlainOf(bias_dims, dt::s32) : memory::desc();
  memory::desc dst_md = PlainMd(dst_dims);

  PostOp scale;
  scale.binary = true;
  scale.alg = dnnl::algorithm::binary_mul;
  scale.src1_md = PlainMd(std::vector<int64_t>(dst_dims.size(), 1));
  scale.nodes = {p.cast, p.mul};
  scale.out = y;
  scale.name = "Mul(scale)";
  std::vector<PostOp> chain = {scale};
  for (PostOp& more : L.CollectPostOps(y)) {
    if (flat && more.binary && !FlattenOperand(&more.src1_md)) break;
    chain.push_back(more);
  }
  Plan& plan = L.plan();
  std::optional<std::pair<dnnl::matmul::primitive_desc, size_t>> built;
  try {
    built = L.WithPostOps(chain, [&](const dnnl::primitive_attr& attr) {
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_any, bias_md, dst_md), attr, plan.engine);
    });
  } catch (const dnnl::error&) {
    return false;
  }
  auto& [pd, k] = *built;
  if (k == 0 || IsSlowImplementation("matmul", pd.impl_info_str())) return false;

  chain[0].src1_slot = L.PlainSlot(p.scale);
  int a_slot = L.PlainSlot(p.a);
  int b_slot = L.PackedConstSlot(*p.shifted, b_plain, pd.weights_desc());
  int bias_slot = -1;
  if (p.azp != nullptr) {
    // -a_zp·colsum(B') per column, each run (a_zp is computed).
    bias_slot = ScratchSlot(L, p.cols * 4);
    bool a_signed = p.a_type == dt::s8;
    int64_t cols = p.cols;
    AddNativeStep(L, n, {L.PlainSlot(p.azp)}, bias_slot, [a_signed, cols, sums = p.col_sums](const void* const* i, void* o) {
      kernels::ZeroPointBias(i[0], a_signed, sums->data(), cols, static_cast<int32_t*>(o));
      return absl::OkStatus();
    })->kind = "zero_point_bias";
  }
  DnnlStep* step = L.AddDnnlStep(dnnl::matmul(pd), "matmul_integer", n);
  step->AddArg(DNNL_ARG_SRC, a_slot, a_md, false);
  step->AddArg(DNNL_ARG_WEIGHTS, b_slot, pd.weights_desc(), false);
  if (bias_slot >= 0) step->AddArg(DNNL_ARG_BIAS, bias_slot, bias_md, false);
  L.FinishPostOps(step, y, chain, k, PlainMd(od), true, &dst_md);
  return true;
}

}  // namespace

const Node* ScaledCastOf(Lowerer& L, const Value* out, const Value** scale) {
  const ValueState& st = L.V(out);
  if (st.graph_output || st.consumers.size() != 1) return nullptr;
  const Node* cast = st.consumers[0];
  if (cast->op_type != "Cast" || !cast->domain.empty() || cast->input(0) != out || cast->output(0) == nullptr ||
      cast->GetInt("to", 0) != static_cast<int64_t>(DType::kFloat)) {
    return nullptr;
  }
  const Value* f = cast->output(0);
  const ValueState& fs = L.V(f);
  if (fs.graph_output || fs.consumers.size() != 1 || !L.IsF32(f)) return nullptr;
  const Node* mul = fs.consumers[0];
  if (mul->op_type != "Mul" || !mul->domain.empty() || mul->num_inputs() != 2 || mul->output(0) == nullptr) {
    return nullptr;
  }
  const Value* other = mul->input(0) == f ? mul->input(1) : mul->input(0);
  if (other == f || !L.IsF32(other) || !NativeReady(L, other) || NumElements(L.V(other).dims) != 1 ||
      !L.IsF32(mul->output(0)) || L.V(mul->output(0)).dims != fs.dims) {
    return nullptr;
  }
  *scale = other;
  return mul;
}

void FuseScaledCast(Lowerer& L, const Value* out, const Node* mul, const Node* add, Step* step) {
  const Node* cast = L.V(out).consumers[0];
  absl::StrAppend(&step->label, " + [", cast->Describe(), ", ", mul->Describe(),
                  add != nullptr ? ", " + add->Describe() : std::string(), "]");
  L.MarkFused(cast);
  L.MarkFused(mul);
  if (add != nullptr) L.MarkFused(add);
}

namespace {
std::atomic<bool> forced_without_vnni{false};
}  // namespace

void ForceInt8WithoutVnni(bool on) { forced_without_vnni.store(on); }

// Without VNNI, oneDNN's u8·s8 products saturate in int16: not exact.
bool ExactInt8Products() {
  if (forced_without_vnni.load(std::memory_order_relaxed)) return false;
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
    case dnnl::cpu_isa::avx2_vnni:
      return true;
    default:
      return false;
  }
}


bool LowerDynamicQuantizeLinear(Lowerer& L, const Node& n) {
  const Value* x = n.input(0);
  if (!L.IsF32(x) || !NativeReady(L, x)) return false;
  int64_t count = NumElements(L.V(x).dims);
  if (count == 0) return false;
  const Value* outs[3] = {n.output(0), n.num_outputs() > 1 ? n.output(1) : nullptr,
                          n.num_outputs() > 2 ? n.output(2) : nullptr};
  if (outs[0] != nullptr && (L.V(outs[0]).dtype != DType::kUint8 || L.V(outs[0]).dims != L.V(x).dims)) return false;
  // Readers of the scale that multiply it by a constant scalar (quantize_dynamic's
  // x_scale * w_scale, one per product reading x): computed here, in f32 as
  // the Mul would, instead of as one-element steps of their own (each cost
  // microseconds, tens of them with two threads).
  std::vector<const Node*> muls;
  std::vector<float> factors;
  if (outs[1] != nullptr) {
    for (const Node* c : L.V(outs[1]).consumers) {
      if (c->op_type != "Mul" || !c->domain.empty() || c->num_inputs() != 2 || c->output(0) == nullptr ||
          L.Done(c) || !L.IsF32(c->output(0)) || NumElements(L.V(c->output(0)).dims) != 1) {
        continue;
      }
      const Value* other = c->input(0) == outs[1] ? c->input(1) : c->input(0);
      std::optional<float> k = L.V(other).dtype == DType::kFloat ? L.ScalarConst(other) : std::nullopt;
      if (other == outs[1] || !k) continue;
      if (std::find(muls.begin(), muls.end(), c) != muls.end()) continue;
      muls.push_back(c);
      factors.push_back(*k);
    }
  }
  int in = L.PlainSlot(x);
  std::vector<int> slots(3, -1);
  for (int i = 0; i < 3; ++i) {
    if (outs[i] != nullptr && (slots[i] = NativeOutSlot(L, outs[i])) < 0) return false;
  }
  for (const Node* c : muls) {
    int s = NativeOutSlot(L, c->output(0));
    if (s < 0) return false;
    slots.push_back(s);
  }
  NativeStep* step = AddNativeStep(L, n, {in}, slots, [count, factors](const void* const* i, void* const* o) {
    float scale;
    uint8_t zero;
    kernels::DynamicQuantizeF32(static_cast<const float*>(i[0]), count, static_cast<uint8_t*>(o[0]), &scale, &zero);
    if (o[1] != nullptr) *static_cast<float*>(o[1]) = scale;
    if (o[2] != nullptr) *static_cast<uint8_t*>(o[2]) = zero;
    for (size_t j = 0; j < factors.size(); ++j) *static_cast<float*>(o[3 + j]) = scale * factors[j];
    return absl::OkStatus();
  });
  step->kind = "dynamic_quantize";
  if (!muls.empty()) absl::StrAppend(&step->label, " + [", muls.size(), " scale Mul]");
  for (const Node* c : muls) L.MarkFused(c);
  return true;
}

namespace {

// QLinearMatMul's (and QLinearMatMulBias') operands after A, all constants,
// with scalar f32 a/y scales, scalar zero points, y's of the output's type,
// a 2-D B matching A (of `a_dims`) and the output, b scales per tensor or
// column and an int32 bias per column (null when absent): what both int8
// lowerings take. k, cols: B's dims; rows: A's rows, leading dims folded.
struct QLinearMatMulConstants {
  const Tensor *as, *az, *b, *bs, *bz, *ys, *yz, *bias;
  int64_t k = 0, cols = 0, rows = 0;
};

std::optional<QLinearMatMulConstants> ConstantOperands(Lowerer& L, const Node& n, const std::vector<int64_t>& a_dims,
                                                       const ValueState& out) {
  const DType out_type = out.dtype;
  const bool has_bias = n.num_inputs() > 8 && n.has_input(8);  // QLinearMatMulBias
  QLinearMatMulConstants c{L.Const(n.input(1)), L.Const(n.input(2)), L.Const(n.input(3)),
                           L.Const(n.input(4)), L.Const(n.input(5)), L.Const(n.input(6)),
                           L.Const(n.input(7)), has_bias ? L.Const(n.input(8)) : nullptr};
  if (c.as == nullptr || c.az == nullptr || c.b == nullptr || c.bs == nullptr || c.bz == nullptr ||
      c.ys == nullptr || c.yz == nullptr || (has_bias && c.bias == nullptr)) {
    return std::nullopt;
  }
  if (c.as->dtype() != DType::kFloat || c.bs->dtype() != DType::kFloat || c.ys->dtype() != DType::kFloat ||
      c.as->num_elements() != 1 || c.az->num_elements() != 1 || c.ys->num_elements() != 1 ||
      c.yz->num_elements() != 1 || c.b->rank() != 2 || c.yz->dtype() != out_type) {
    return std::nullopt;
  }
  c.k = c.b->dim(0);
  c.cols = c.b->dim(1);
  if (a_dims.size() < 2 || a_dims.back() != c.k || c.k == 0 || c.cols == 0) return std::nullopt;
  std::vector<int64_t> od(a_dims.begin(), a_dims.end() - 1);
  od.push_back(c.cols);
  if (out.dims != od || NumElements(od) == 0) return std::nullopt;
  c.rows = NumElements(od) / c.cols;
  const int64_t nscale = c.bs->num_elements();
  if (nscale != 1 && nscale != c.cols) return std::nullopt;
  if (c.bias != nullptr && (c.bias->dtype() != DType::kInt32 || c.bias->num_elements() != c.cols)) {
    return std::nullopt;
  }
  return c;
}

// The zero points of a constant B: none, one value or one per column, as
// int32 (false when the tensor is none of those).
bool ColumnZeros(const Tensor* z, int64_t cols, std::vector<int32_t>* zeros) {
  if (z == nullptr) return true;
  if (!IsEightBitInteger(z->dtype()) || (z->num_elements() != 1 && z->num_elements() != cols)) return false;
  for (int64_t j = 0; j < z->num_elements(); ++j) zeros->push_back(static_cast<int32_t>(z->ElementAsDouble(j)));
  return true;
}

// The Add reading `v` alone (not a graph output) with a constant f32 vector
// of `cols` values broadcast along the last axis (the bias of a linear
// layer): its values in *bias.
const Node* ColumnBiasAddOf(Lowerer& L, const Value* v, int64_t cols, std::shared_ptr<std::vector<float>>* bias) {
  const ValueState& st = L.V(v);
  if (st.graph_output || st.consumers.size() != 1) return nullptr;
  const Node* add = st.consumers[0];
  if (add->op_type != "Add" || !add->domain.empty() || add->num_inputs() != 2 || add->output(0) == nullptr ||
      add->input(0) == add->input(1) || !L.IsF32(add->output(0)) || L.V(add->output(0)).dims != st.dims) {
    return nullptr;
  }
  const Tensor* t = L.Const(add->input(0) == v ? add->input(1) : add->input(0));
  if (t == nullptr || t->dtype() != DType::kFloat || t->num_elements() != cols || t->rank() > static_cast<int64_t>(st.dims.size())) {
    return nullptr;
  }
  for (int64_t d = 0; d + 1 < t->rank(); ++d) {
    if (t->dim(d) != 1) return nullptr;
  }
  *bias = std::make_shared<std::vector<float>>(t->data<float>(), t->data<float>() + cols);
  return add;
}

// B' = B - b_zero packed into the pair kernels' panels, once.
std::shared_ptr<const std::vector<int16_t>> PackedPairWeights(const Tensor& b, const std::vector<int32_t>& zeros) {
  const int64_t k = b.dim(0), cols = b.dim(1);
  auto panels = std::make_shared<std::vector<int16_t>>(static_cast<size_t>(kernels::PairPanelsSize(k, cols)));
  kernels::PackPairPanels(b.raw_data(), b.dtype() == DType::kInt8, k, cols, cols, zeros.empty() ? nullptr : zeros.data(),
                          zeros.size() > 1, panels->data());
  return panels;
}

// MatMulInteger with a constant B on CPUs without VNNI: A - a_zp widened
// each run, times the packed B' on the pair kernels (exact, wrapping modulo
// 2^32 as the reference's narrowing does). With the Cast -> Mul(scale)
// reader (quantize_dynamic's dequantization), and the linear layer's bias
// Add after it, the kernel writes the last op's f32 output directly, with
// the rounding of each op. a_zp: none, one value
// or one per row (read each run: DynamicQuantizeLinear computes it).
bool LowerPairMatMulInteger(Lowerer& L, const Node& n) {
  const Value* a = n.input(0);
  const Value* b = n.input(1);
  const Value* azp = n.num_inputs() > 2 && n.has_input(2) ? n.input(2) : nullptr;
  const Value* bzp = n.num_inputs() > 3 && n.has_input(3) ? n.input(3) : nullptr;
  const Value* out = n.output(0);
  const Tensor* bc = L.Const(b);
  if (!kernels::PairGemmAvailable() || out == nullptr || bc == nullptr || !NativeReady(L, a)) return false;
  const DType at = L.V(a).dtype;
  if (!IsEightBitInteger(at) || !IsEightBitInteger(bc->dtype()) || bc->rank() != 2 ||
      L.V(out).dtype != DType::kInt32 || !L.V(out).is_static) {
    return false;
  }
  const std::vector<int64_t>& ad = L.V(a).dims;
  const int64_t k = bc->dim(0), cols = bc->dim(1);
  if (ad.empty() || ad.back() != k || k == 0) return false;
  std::vector<int64_t> od(ad.begin(), ad.end() - 1);
  od.push_back(cols);
  if (L.V(out).dims != od || NumElements(od) == 0) return false;
  const int64_t rows = NumElements(od) / cols;
  // a_zp: one value, or one per row of each matrix (the reference's
  // indexing: row r takes entry r % m); read each run.
  const int64_t m = ad.size() >= 2 ? ad[ad.size() - 2] : 1;
  int64_t zero_count = 1;
  if (azp != nullptr) {
    if (!NativeReady(L, azp) || L.V(azp).dtype != at) return false;
    zero_count = NumElements(L.V(azp).dims);
    if (zero_count != 1 && zero_count != m) return false;
  }
  std::vector<int32_t> zeros;
  if (bzp != nullptr && !ColumnZeros(L.Const(bzp), cols, &zeros)) return false;
  auto panels = PackedPairWeights(*bc, zeros);

  const Value* scale = nullptr;
  const Node* mul = ScaledCastOf(L, out, &scale);
  std::shared_ptr<std::vector<float>> bias;
  const Node* add = mul != nullptr ? ColumnBiasAddOf(L, mul->output(0), cols, &bias) : nullptr;
  const Value* y = add != nullptr ? add->output(0) : mul != nullptr ? mul->output(0) : out;
  // Output slot first: nothing is emitted before the last way to decline.
  const int y_slot = NativeOutSlot(L, y);
  if (y_slot < 0) return false;
  const int a_slot = L.PlainSlot(a);
  const int azp_slot = azp != nullptr ? L.PlainSlot(azp) : -1;
  const int scale_slot = mul != nullptr ? L.PlainSlot(scale) : -1;
  const int64_t k_pairs = kernels::PairCount(k);
  const int widened = ScratchSlot(L, kernels::PairRowsSize(rows, k) * 2);
  const bool a_signed = at == DType::kInt8;
  NativeStep* step = AddNativeStep(
      L, n, {a_slot, azp_slot, scale_slot}, {y_slot, widened},
      [=](const void* const* i, void* const* o) {
        thread_local std::vector<int32_t> zeros;
        zeros.resize(static_cast<size_t>(zero_count));
        for (int64_t r = 0; r < zero_count && i[1] != nullptr; ++r) {
          zeros[r] = a_signed ? static_cast<const int8_t*>(i[1])[r] : static_cast<const uint8_t*>(i[1])[r];
        }
        auto* a16 = static_cast<int16_t*>(o[1]);
        kernels::WidenPairRows(i[0], a_signed, rows, k, k, i[1] != nullptr ? zeros.data() : nullptr, zero_count, a16);
        kernels::PairGemmOutput to;
        to.y = o[0];
        to.ldy = cols;
        if (i[2] != nullptr) {
          to.kind = kernels::PairGemmOutput::Kind::kScaled;
          to.scale = *static_cast<const float*>(i[2]);
          to.column_bias = bias != nullptr ? bias->data() : nullptr;
        }
        kernels::PairGemm(a16, rows, panels->data(), k_pairs, cols, to);
        return absl::OkStatus();
      });
  step->kind = "matmul_integer";
  step->label += " [int8 pairs]";
  if (mul != nullptr) FuseScaledCast(L, out, mul, add, step);
  return true;
}

// QLinearMatMul (and ai.aic's QLinearMatMulBias) with a constant B on CPUs
// without VNNI: A - a_zp widened each run, times the packed B - b_zp on the
// pair kernels, plus the bias, requantized in the kernel's registers as the
// reference does (double product with (as·bs[j]) / ys, half to even, zero
// point added, saturated): equal to the reference's bytes. Covered: constant
// scalar a/y scales and zero points, B of rank 2 with any zero points, sums
// that cannot pass 2^31.
bool LowerPairQLinearMatMul(Lowerer& L, const Node& n) {
  const Value* a = n.input(0);
  const Value* out = n.output(0);
  if (!kernels::PairGemmAvailable() || out == nullptr || !NativeReady(L, a) || n.num_inputs() < 8) return false;
  const ValueState& as_state = L.V(a);
  const ValueState& os = L.V(out);
  if (!IsEightBitInteger(as_state.dtype) || !IsEightBitInteger(os.dtype) || !os.is_static) return false;
  std::optional<QLinearMatMulConstants> c = ConstantOperands(L, n, as_state.dims, os);
  if (!c || !IsEightBitInteger(c->b->dtype())) return false;
  const Tensor *as = c->as, *az = c->az, *b = c->b, *bs = c->bs, *bz = c->bz, *ys = c->ys, *yz = c->yz;
  const Tensor* bias = c->bias;
  const int64_t k = c->k, cols = c->cols, rows = c->rows, nscale = bs->num_elements();
  std::vector<int32_t> zeros;
  if (!ColumnZeros(bz, cols, &zeros)) return false;

  // The reference's scale per column: the f32 product as·bs[j], over ys in double.
  auto scales = std::make_shared<std::vector<double>>();
  double scale_max = 0;
  for (int64_t j = 0; j < nscale; ++j) {
    const double s = static_cast<double>(as->data<float>()[0] * bs->data<float>()[j]) / ys->data<float>()[0];
    if (!std::isfinite(s)) return false;
    scales->push_back(s);
    scale_max = std::max(scale_max, std::abs(s));
  }
  auto bias_values = std::make_shared<std::vector<int32_t>>();
  int64_t bias_max = 0;
  if (bias != nullptr) {
    bias_values->assign(bias->data<int32_t>(), bias->data<int32_t>() + cols);
    for (int32_t v : *bias_values) bias_max = std::max<int64_t>(bias_max, std::abs(static_cast<int64_t>(v)));
  }
  // Every sum exact in int32: |a - a_zero|, |b - b_zero| <= 255.
  const int64_t sum_max = k * 255 * 255 + bias_max;
  if (sum_max >= (int64_t{1} << 31)) return false;
  auto panels = PackedPairWeights(*b, zeros);

  kernels::PairGemmOutput y;
  y.kind = kernels::PairGemmOutput::Kind::kQuantize;
  y.ldy = cols;
  y.bias = bias_values->empty() ? nullptr : bias_values->data();
  y.scales = nscale == 1 ? nullptr : scales->data();
  y.scale_one = (*scales)[0];
  y.zero = static_cast<int32_t>(yz->ElementAsDouble(0));
  y.out_signed = os.dtype == DType::kInt8;
  y.sums_fit = static_cast<double>(sum_max) * scale_max < 2147483647.0;
  const int32_t a_zero = static_cast<int32_t>(az->ElementAsDouble(0));
  const bool a_signed = as_state.dtype == DType::kInt8;

  // Output slot first: nothing is emitted before the last way to decline.
  const int y_slot = NativeOutSlot(L, out);
  if (y_slot < 0) return false;
  const int a_slot = L.PlainSlot(a);
  const int64_t k_pairs = kernels::PairCount(k);
  const int widened = ScratchSlot(L, kernels::PairRowsSize(rows, k) * 2);
  NativeStep* step = AddNativeStep(L, n, {a_slot}, {y_slot, widened},
                                   [=](const void* const* i, void* const* o) {
                                     auto* a16 = static_cast<int16_t*>(o[1]);
                                     kernels::WidenPairRows(i[0], a_signed, rows, k, k, &a_zero, 1, a16);
                                     kernels::PairGemmOutput to = y;
                                     to.y = o[0];
                                     (void)scales, (void)bias_values;  // kept alive by the closure
                                     kernels::PairGemm(a16, rows, panels->data(), k_pairs, cols, to);
                                     return absl::OkStatus();
                                   });
  step->kind = "matmul";
  step->label += " [int8 pairs]";
  return true;
}

}  // namespace

bool LowerMatMulInteger(Lowerer& L, const Node& n) {
  if (!ExactInt8Products()) return LowerPairMatMulInteger(L, n);
  const Value* a = n.input(0);
  const Value* b = n.input(1);
  const Value* azp = n.num_inputs() > 2 && n.has_input(2) ? n.input(2) : nullptr;
  const Value* bzp = n.num_inputs() > 3 && n.has_input(3) ? n.input(3) : nullptr;
  const Value* out = n.output(0);
  if (!NativeReady(L, a) || !NativeReady(L, b) || out == nullptr) return false;
  DType at = L.V(a).dtype, bt = L.V(b).dtype;
  if (!IsEightBitInteger(at) || !IsEightBitInteger(bt) || L.V(out).dtype != DType::kInt32 || !L.V(out).is_static) return false;
  const std::vector<int64_t>& ad = L.V(a).dims;
  const std::vector<int64_t>& bd = L.V(b).dims;
  if (ad.empty() || bd.size() != 2 || ad.back() != bd[0]) return false;
  const int64_t k = bd[0], cols = bd[1];
  std::vector<int64_t> od(ad.begin(), ad.end() - 1);
  od.push_back(cols);
  if (L.V(out).dims != od || NumElements(od) == 0 || k == 0) return false;
  const int64_t rows = NumElements(od) / cols;
  const int64_t m = ad.size() >= 2 ? ad[ad.size() - 2] : 1;

  // a_zp: a scalar or one per row of each matrix (the reference's indexing), read each run.
  bool a_per_row = false;
  if (azp != nullptr) {
    if (!NativeReady(L, azp) || L.V(azp).dtype != at) return false;
    int64_t c = NumElements(L.V(azp).dims);
    if (c != 1 && c != m) return false;
    a_per_row = c != 1;
  }
  // b_zp' per column, shifted with uint8 B.
  const int32_t shift = bt == DType::kUint8 ? 128 : 0;
  std::vector<int32_t> b_zero(static_cast<size_t>(cols), -shift);
  if (bzp != nullptr) {
    const Tensor* z = L.Const(bzp);
    if (z == nullptr || z->dtype() != bt || (z->num_elements() != 1 && z->num_elements() != cols)) return false;
    for (int64_t j = 0; j < cols; ++j) {
      b_zero[static_cast<size_t>(j)] = static_cast<int32_t>(z->ElementAsDouble(z->num_elements() == 1 ? 0 : j)) - shift;
    }
  }
  bool any_b_zero = false;
  for (int32_t z : b_zero) any_b_zero = any_b_zero || z != 0;

  Plan& plan = L.plan();
  using dt = memory::data_type;
  memory::desc a_md({rows, k}, at == DType::kInt8 ? dt::s8 : dt::u8, memory::format_tag::ab);
  memory::desc b_plain({k, cols}, dt::s8, memory::format_tag::ab);
  const Tensor* bc = L.Const(b);
  memory::desc b_md = bc != nullptr ? memory::desc({k, cols}, dt::s8, memory::format_tag::any) : b_plain;
  memory::desc c_md({rows, cols}, dt::s32, memory::format_tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), plan.engine);
  if (IsSlowImplementation("matmul", pd.impl_info_str())) return false;

  const Value* scale = nullptr;
  const Node* mul = ScaledCastOf(L, out, &scale);
  // B' and its column sums: once here for a constant B, else each run.
  auto col_sums = std::make_shared<std::vector<int32_t>>();
  const Tensor* shifted_b = nullptr;
  if (bc != nullptr) {
    Tensor shifted(DType::kInt8, {k, cols});
    if (bt == DType::kUint8) {
      kernels::ShiftToSigned(bc->data<uint8_t>(), k * cols, shifted.mutable_data<int8_t>());
    } else {
      std::memcpy(shifted.mutable_raw_data(), bc->raw_data(), static_cast<size_t>(k * cols));
    }
    col_sums->resize(static_cast<size_t>(cols));
    kernels::ColumnSums(shifted.data<int8_t>(), k, cols, col_sums->data());
    plan.constants.push_back(shifted);
    shifted_b = &plan.constants.back();
  }
  // |A - a_zp| <= 255 and |B'| <= 128: every partial sum below 2^24.
  constexpr int64_t kExactF32 = int64_t{1} << 24;
  if (mul != nullptr && shifted_b != nullptr && !any_b_zero && !a_per_row && ad.size() >= 2 &&
      k * 255 * 128 < kExactF32) {
    ScaledProduct p{L.V(out).consumers[0], mul, scale, a, azp, a_md.data_type(), ad, k, cols, shifted_b, col_sums};
    if (LowerScaledProduct(L, n, p)) {
      ReleaseModelB(L, *bc, *shifted_b);
      return true;
    }
  }

  // Output slots first: nothing is emitted before the last way to decline.
  int y_slot = NativeOutSlot(L, mul != nullptr ? mul->output(0) : out);
  if (y_slot < 0) return false;
  int a_slot = L.PlainSlot(a);
  int azp_slot = azp != nullptr ? L.PlainSlot(azp) : -1;
  int scale_slot = mul != nullptr ? L.PlainSlot(scale) : -1;

  int b_slot = -1, sums_slot = -1;
  if (shifted_b != nullptr) {
    b_slot = L.PackedConstSlot(*shifted_b, b_plain, pd.weights_desc());
    ReleaseModelB(L, *bc, *shifted_b);
  } else {
    int raw = L.PlainSlot(b);
    bool flip = bt == DType::kUint8;
    b_slot = flip ? ScratchSlot(L, k * cols) : raw;
    sums_slot = ScratchSlot(L, cols * 4);
    std::vector<int> prep_out = flip ? std::vector<int>{b_slot, sums_slot} : std::vector<int>{sums_slot};
    AddNativeStep(L, n, {raw}, prep_out, [=](const void* const* i, void* const* o) {
      const auto* bs = static_cast<const int8_t*>(i[0]);
      if (flip) {
        kernels::ShiftToSigned(static_cast<const uint8_t*>(i[0]), k * cols, static_cast<int8_t*>(o[0]));
        bs = static_cast<const int8_t*>(o[0]);
      }
      kernels::ColumnSums(bs, k, cols, static_cast<int32_t*>(o[flip ? 1 : 0]));
      return absl::OkStatus();
    })->kind = "integer_weights";
  }

  // The product: straight into out, or into a scratch the scaled pass reads.
  int s_slot = mul != nullptr ? ScratchSlot(L, rows * cols * 4) : y_slot;
  DnnlStep* step = L.AddDnnlStep(dnnl::matmul(pd), "matmul_integer", n);
  step->AddArg(DNNL_ARG_SRC, a_slot, a_md, false);
  step->AddArg(DNNL_ARG_WEIGHTS, b_slot, pd.weights_desc(), false);
  step->AddArg(DNNL_ARG_DST, s_slot, c_md, true);

  kernels::IntegerMatMulFixup f;
  f.rows = rows;
  f.m = m;
  f.k = k;
  f.n = cols;
  f.a_signed = at == DType::kInt8;
  f.a_per_row = a_per_row;
  auto b_zero_ptr = std::make_shared<std::vector<int32_t>>(std::move(b_zero));
  bool const_sums = bc != nullptr;
  auto fixup = [f, col_sums, b_zero_ptr, any_b_zero, const_sums](const void* const* i) {
    kernels::IntegerMatMulFixup g = f;
    g.a = i[1];
    g.a_zero = i[2];
    g.col_sums = const_sums ? col_sums->data() : static_cast<const int32_t*>(i[3]);
    g.b_zero = any_b_zero ? b_zero_ptr->data() : nullptr;
    return g;
  };
  if (mul == nullptr) {
    if (azp == nullptr && !any_b_zero) return true;  // S is C
    AddNativeStep(L, n, {s_slot, a_slot, azp_slot, sums_slot}, s_slot, [fixup](const void* const* i, void* y) {
      kernels::ApplyZeroPoints(fixup(i), static_cast<int32_t*>(y));
      return absl::OkStatus();
    })->kind = "zero_points";
    return true;
  }
  NativeStep* scaled = AddNativeStep(L, n, {s_slot, a_slot, azp_slot, sums_slot, scale_slot}, y_slot,
                                     [fixup](const void* const* i, void* y) {
                                       kernels::ApplyZeroPointsScaled(fixup(i), static_cast<const int32_t*>(i[0]),
                                                                      *static_cast<const float*>(i[4]),
                                                                      static_cast<float*>(y));
                                       return absl::OkStatus();
                                     });
  scaled->kind = "zero_points_scaled";
  FuseScaledCast(L, out, mul, nullptr, scaled);
  return true;
}

// QLinearMatMul, and ai.aic's QLinearMatMulBias, with a constant int8 B (what
// the session's rewriter makes of a QDQ MatMul or Gemm,
// rewrite/rules/quantized_rules.cc) as one oneDNN int8 matmul: A (u8/s8,
// leading dims folded into rows) times B packed once, an s32 bias of the
// given bias (QLinearMatMulBias) minus a_zp·colsum(B) per column (a_zp is a
// constant here), one output scale as·bs[j]/ys per column (or per tensor),
// and y's zero point as a runtime zero point of the destination. As
// QLinearConv's lowering: oneDNN scales in f32 and adds y_zero_point before
// rounding half to even, the reference scales in double and adds it after,
// so a product at a tie can come out one step apart. Covered: constant
// scalar a/y scales and zero points, B of rank 2 with zero points 0, CPUs
// with VNNI. Anything else runs the reference kernel.
bool LowerQLinearMatMul(Lowerer& L, const Node& n) {
  using dt = memory::data_type;
  const Value* a = n.input(0);
  const Value* out = n.output(0);
  if (!ExactInt8Products()) return LowerPairQLinearMatMul(L, n);
  if (out == nullptr || !NativeReady(L, a) || n.num_inputs() < 8) return false;
  const ValueState& as_state = L.V(a);
  const ValueState& os = L.V(out);
  if (!IsEightBitInteger(as_state.dtype) || !IsEightBitInteger(os.dtype) || !os.is_static) return false;
  std::optional<QLinearMatMulConstants> c = ConstantOperands(L, n, as_state.dims, os);
  if (!c || c->b->dtype() != DType::kInt8) return false;
  const Tensor *as = c->as, *az = c->az, *b = c->b, *bs = c->bs, *bz = c->bz, *ys = c->ys, *yz = c->yz;
  const Tensor* given_bias = c->bias;
  const int64_t k = c->k, cols = c->cols, rows = c->rows, nscale = bs->num_elements();
  for (int64_t i = 0; i < bz->num_elements(); ++i) {
    if (bz->ElementAsDouble(i) != 0) return false;  // oneDNN's weights have no zero point
  }

  // Each column's scale rounded as the reference rounds it (f32 products).
  std::vector<float> scales(static_cast<size_t>(nscale));
  for (int64_t j = 0; j < nscale; ++j) scales[j] = as->data<float>()[0] * bs->data<float>()[j] / ys->data<float>()[0];
  const int32_t a_zero = static_cast<int32_t>(az->ElementAsDouble(0));
  const int32_t y_zero = static_cast<int32_t>(yz->ElementAsDouble(0));
  const dt adt = as_state.dtype == DType::kUint8 ? dt::u8 : dt::s8;
  const dt ydt = os.dtype == DType::kUint8 ? dt::u8 : dt::s8;
  memory::desc a_md({rows, k}, adt, memory::format_tag::ab);
  memory::desc b_plain({k, cols}, dt::s8, memory::format_tag::ab);
  memory::desc b_any({k, cols}, dt::s8, memory::format_tag::any);
  const bool with_bias = a_zero != 0 || given_bias != nullptr;
  memory::desc bias_md = with_bias ? memory::desc({1, cols}, dt::s32, memory::format_tag::ab) : memory::desc();
  memory::desc y_md({rows, cols}, ydt, memory::format_tag::ab);
  dnnl::primitive_attr attr;
  attr.set_output_scales(nscale == 1 ? 0 : 1 << 1, scales);
  if (y_zero != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  Plan& plan = L.plan();
  std::optional<dnnl::matmul::primitive_desc> pd;
  try {
    pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_md, b_any, bias_md, y_md), attr, plan.engine);
  } catch (const dnnl::error&) {
    return false;
  }
  if (IsSlowImplementation("matmul", pd->impl_info_str())) return false;
  // Output slot first: nothing is emitted before the last way to decline.
  int y_slot = NativeOutSlot(L, out);
  if (y_slot < 0) return false;
  int a_slot = L.PlainSlot(a);
  int b_slot = L.PackedConstSlot(*b, b_plain, pd->weights_desc());
  int bias_slot = -1;
  if (with_bias) {
    std::vector<int32_t> sums(static_cast<size_t>(cols));
    kernels::ColumnSums(b->data<int8_t>(), k, cols, sums.data());
    Tensor bias(DType::kInt32, {1, cols});
    int32_t* total = bias.mutable_data<int32_t>();
    kernels::ZeroPointBias(az->raw_data(), adt == dt::s8, sums.data(), cols, total);
    if (given_bias != nullptr) {
      // Wrapping as the accumulator does (the reference sums in int64 and
      // narrows: equal wherever the product fits in int32).
      for (int64_t j = 0; j < cols; ++j) {
        total[j] = static_cast<int32_t>(static_cast<uint32_t>(total[j]) +
                                        static_cast<uint32_t>(given_bias->data<int32_t>()[j]));
      }
    }
    plan.constants.push_back(bias);
    bias_slot = L.ConstSlot(plan.constants.back(), bias_md);
  }
  DnnlStep* step = L.AddDnnlStep(dnnl::matmul(*pd), "matmul", n);
  step->AddArg(DNNL_ARG_SRC, a_slot, a_md, false);
  step->AddArg(DNNL_ARG_WEIGHTS, b_slot, pd->weights_desc(), false);
  if (bias_slot >= 0) step->AddArg(DNNL_ARG_BIAS, bias_slot, bias_md, false);
  if (y_zero != 0) {
    step->AddArg(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, L.ScalarS32Slot(y_zero), Lowerer::ScalarS32Md(), false);
  }
  step->AddArg(DNNL_ARG_DST, y_slot, y_md, true);
  step->label += " [int8]";
  return true;
}

}  // namespace aic::cpu
