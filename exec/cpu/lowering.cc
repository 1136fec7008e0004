#include "exec/cpu/lowering.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "absl/algorithm/container.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "exec/cpu/dynamic_gemm.h"
#include "exec/cpu/fallback_step.h"
#include "exec/cpu/fast_fallback.h"
#include "exec/cpu/half_storage.h"
#include "exec/cpu/layout_copy.h"
#include "exec/cpu/native_step.h"
#include "ops/fused/standard_aliases.h"
#include "ops/ml/ml_ops.h"
#include "support/half.h"

namespace aic::cpu {

namespace {

using LowerFn = bool (*)(Lowerer&, const Node&);

// What this backend lowers, by (domain, op, opset range); everything else
// runs its reference kernel. ai.aic's aliases of standard ops find the
// standard op's entry (exec/common/lowering_frame.h).
const exec::LoweringTable<LowerFn>& LowerTable() {
  static const auto* table = new exec::LoweringTable<LowerFn>{
      {"Reshape", LowerView},          {"Flatten", LowerView},
      {"Squeeze", LowerView},          {"Unsqueeze", LowerView},
      {"Identity", LowerView},         {"Dropout", LowerView},
      {"Relu", LowerUnary},            {"LeakyRelu", LowerUnary},
      {"Sigmoid", LowerUnary},         {"Tanh", LowerUnary},
      {"Exp", LowerUnary},             {"Sqrt", LowerUnary},
      {"Abs", LowerUnary},             {"Elu", LowerUnary},
      {"HardSigmoid", LowerUnary},     {"HardSwish", LowerUnary},
      {"Swish", LowerUnary},
      {"Clip", LowerUnary},            {"Neg", LowerUnary},
      {"Pow", LowerUnaryOrNative},     {"Add", LowerBinaryOrNative},
      {"Sub", LowerBinaryOrNative},    {"Mul", LowerBinaryOrNative},
      {"Div", LowerBinaryOrNative},    {"Max", LowerBinaryOrNative},
      {"Min", LowerBinaryOrNative},    {"Conv", LowerConv},
      {"QLinearConv", LowerQLinearConv},
      {"ConvInteger", LowerConvInteger},
      {"ConvTranspose", LowerConvTranspose}, {"MaxPool", LowerPool},
      {"AveragePool", LowerPool},      {"GlobalAveragePool", LowerGlobalPoolOrNative},
      {"GlobalMaxPool", LowerGlobalPoolOrNative},    {"MatMul", LowerMatMul},
      {"Gemm", LowerGemm},             {"BatchNormalization", LowerBatchNorm},
      {"Softmax", LowerSoftmaxOrNative}, {"LogSoftmax", LowerSoftmaxOrNative},
      {"Concat", LowerConcatOrNative},         {"ReduceMean", LowerReduceOrNative},
      {"ReduceSum", LowerReduceOrNative},      {"ReduceMax", LowerReduceOrNative},
      {"ReduceMin", LowerReduceOrNative},      {"ReduceSumSquare", LowerReduceOrNative},
      {"ReduceL1", LowerReduceOrNative},       {"ReduceL2", LowerReduceOrNative},
      {"ReduceLogSumExp", LowerReduceOrNative},      {"ReduceProd", LowerReduceOrNative},
      {"ReduceLogSum", LowerReduceOrNative},      {"Transpose", LowerTransposeOrNative},
      {"DepthToSpace", LowerDepthSpace},       {"SpaceToDepth", LowerDepthSpace},
      {"Slice", LowerSliceOrNative},           {"Resize", LowerResizeOrNative},
      {"Upsample", LowerResizeOrNative},       {"GridSample", LowerGridSample},
      // Our own kernels (ops_native*.cc).
      {"Gelu", LowerUnaryOrNative},    {"Erf", LowerNativeUnary},
      {"Reciprocal", LowerNativeUnary}, {"Floor", LowerNativeUnary},
      {"Ceil", LowerNativeUnary},      {"Round", LowerNativeUnary},
      {"Sin", LowerNativeUnary},       {"Cos", LowerNativeUnary},
      {"Log", LowerNativeUnary},       {"Softplus", LowerNativeUnary},
      {"Softsign", LowerNativeUnary},  {"Sign", LowerNativeUnary},
      {"Mish", LowerNativeUnary},      {"CumSum", LowerCumSum},
      {"PRelu", LowerNativeElementwise}, {"Where", LowerNativeElementwise},
      {"Equal", LowerNativeElementwise}, {"Less", LowerNativeElementwise},
      {"Greater", LowerNativeElementwise}, {"LessOrEqual", LowerNativeElementwise},
      {"GreaterOrEqual", LowerNativeElementwise}, {"And", LowerNativeElementwise},
      {"Or", LowerNativeElementwise},  {"Xor", LowerNativeElementwise},
      {"LayerNormalization", LowerLayerNorm}, {"RMSNormalization", LowerRmsNorm},
      {"Attention", LowerAttention},
      {"SwiGLU", LowerSwiGlu},
      {"RotaryEmbedding", LowerRotaryEmbedding},
      {"Gather", LowerGather},
      {"GatherElements", LowerGatherElements}, {"GatherND", LowerGatherND},
      {"ScatterND", LowerScatterND},   {"ScatterElements", LowerScatterElements},
      {"Scatter", LowerScatterElements},
      {"Pad", LowerPad},               {"Cast", LowerCast},
      {"Expand", LowerExpand},         {"Split", LowerSplit},
      {"Tile", LowerTile},             {"IsNaN", LowerNativePredicate},
      {"IsInf", LowerNativePredicate}, {"Not", LowerNativeNot},
      {"QuantizeLinear", LowerQuantizeLinear}, {"DequantizeLinear", LowerDequantizeLinear},
      {"DynamicQuantizeLinear", LowerDynamicQuantizeLinear}, {"MatMulInteger", LowerMatMulInteger},
      {"QLinearMatMul", LowerQLinearMatMul},
      {"InstanceNormalization", LowerGroupNorm}, {"GroupNormalization", LowerGroupNorm},
      {"TopK", LowerTopK},             {"ArgMax", LowerArgExtreme},
      {"ArgMin", LowerArgExtreme},
      {"LSTM", LowerRecurrence},       {"GRU", LowerRecurrence},
      {"RNN", LowerRecurrence},
      // ai.onnx.ml: what scikit-learn pipelines export (ops_native_ml.cc).
      {"TreeEnsembleClassifier", LowerTreeEnsemble, kMlDomain}, {"TreeEnsembleRegressor", LowerTreeEnsemble, kMlDomain},
      {"TreeEnsemble", LowerTreeEnsemble, kMlDomain},          {"Scaler", LowerScaler, kMlDomain},
      {"Normalizer", LowerNormalizer, kMlDomain},              {"LinearClassifier", LowerLinearModel, kMlDomain},
      {"LinearRegressor", LowerLinearModel, kMlDomain},        {"SVMClassifier", LowerSvm, kMlDomain},
      {"SVMRegressor", LowerSvm, kMlDomain},
      {"ArrayFeatureExtractor", LowerArrayFeatureExtractor, kMlDomain},
      // aic-onnx's own fused ops (domain ai.aic: sessions and `opt --target aic` emit them).
      {"FusedLinearReLU", LowerFusedLinearReLU, kAicDomain},
      {"QLinearMatMulBias", LowerQLinearMatMul, kAicDomain},
      {"QLinearLookup", LowerQLinearLookup, kAicDomain},
      {"QLinearAdd", LowerQLinearBinary, kAicDomain},
      {"QLinearMul", LowerQLinearBinary, kAicDomain},
  };
  return *table;
}

}  // namespace

std::set<std::string> LoweredAicOps() { return LowerTable().AicOps(); }

bool Lowerer::ReadsAsBf16(const Value* v) const {
  if (!options_.bf16_kernels || v == nullptr) return false;
  auto it = plan_.declared_half.find(v);
  return it != plan_.declared_half.end() && it->second == DType::kBFloat16;
}

bool Lowerer::IsF32(const Value* v) {
  if (v == nullptr) return false;
  const ValueState& st = V(v);
  return st.dtype == DType::kFloat && st.is_static;
}

int Lowerer::NewArenaSlot(const Value* v, const memory::desc& md, bool plain) {
  Slot s;
  s.dtype = DType::kFloat;
  if (v != nullptr) {
    s.name = v->name();
    s.dims = V(v).dims;
  } else {
    memory::dims d = md.dims();  // dims() returns a fresh vector each call
    s.dims.assign(d.begin(), d.end());
  }
  s.md = md;
  s.plain = plain;
  s.storage = Slot::Storage::kArena;
  s.buffer = static_cast<int>(plan_.buffers.size());
  plan_.buffers.push_back({md.get_size(), -1, -1, 0});
  plan_.slots.push_back(std::move(s));
  int id = static_cast<int>(plan_.slots.size()) - 1;
  if (v != nullptr) V(v).slot = id;
  return id;
}

int Lowerer::ConstSlot(const Tensor& t, const memory::desc& md) {
  Slot s;
  s.dtype = t.dtype();
  s.dims = t.dims();
  s.md = md;
  s.plain = true;
  s.storage = Slot::Storage::kConstant;
  s.tensor = t;
  s.ptr = const_cast<void*>(t.raw_data());
  plan_.slots.push_back(std::move(s));
  return static_cast<int>(plan_.slots.size()) - 1;
}

int Lowerer::ScalarS32Slot(int32_t v) {
  Tensor t(DType::kInt32, {1});
  t.mutable_data<int32_t>()[0] = v;
  plan_.constants.push_back(t);
  return ConstSlot(plan_.constants.back(), ScalarS32Md());
}

int Lowerer::PackedConstSlot(const Tensor& t, const memory::desc& from, const memory::desc& to) {
  if (from == to) return ConstSlot(t, to);
  Tensor packed(DType::kFloat, {static_cast<int64_t>((to.get_size() + 3) / 4)});
  memory src(from, plan_.engine, const_cast<void*>(t.raw_data()));
  memory dst(to, plan_.engine, packed.mutable_raw_data());
  dnnl::reorder(src, dst).execute(plan_.stream, src, dst);
  plan_.stream.wait();
  plan_.constants.push_back(packed);
  plan_.stats.weight_bytes += to.get_size();
  ReleasePlainCopy(t, from, to, packed);
  int id = ConstSlot(plan_.constants.back(), to);
  plan_.slots[id].plain = false;
  return id;
}

// A packed weight's plain bytes serve nobody while the plan runs, and
// holding both doubled a model's weight memory (the BERT-style encoder of
// bench/RESULTS.md peaked at 52 MiB against ONNX Runtime's 50, which drops
// its prepacked initializers likewise). So the model's buffer gives them up
// here, one weight at a time (the peak while compiling stays one weight over
// the packed set), and gets them back by the reverse reorder if anything
// reads it later (another shape's compile, writing the model out). Only
// where that reorder is exact: f32 to f32; within one 8-bit type (int8
// models held their weights twice, resnet50_int8 25 MB) unless the packed
// form carries extra data (oneDNN's s8 compensation, its scale adjustment
// for CPUs without VNNI); f32 packed as bf16 (a bf16 model's AVX512-BF16
// convs and matmuls, which read its weights widened to float) where every
// value is a bf16 one. And only a buffer held by no more than the model
// compiled and this plan's specialized clone of it: another holder (a plain
// use of the same weight in this or another plan, whose slot points at the
// bytes; a caller's model that a session was copied from, which the caller
// may read) keeps its bytes. Small weights are not worth the bookkeeping.
void Lowerer::ReleasePlainCopy(const Tensor& t, const memory::desc& from, const memory::desc& to,
                               const Tensor& packed) {
  const memory::data_type type = from.data_type();
  if (from.get_size() != t.byte_size()) return;
  bool exact_both_ways = false;
  if (to.data_type() == type) {
    exact_both_ways = type == memory::data_type::f32 ||
                      ((type == memory::data_type::s8 || type == memory::data_type::u8) && to.data.extra.flags == 0);
  } else if (type == memory::data_type::f32 && to.data_type() == memory::data_type::bf16 && to.data.extra.flags == 0 &&
             t.dtype() == DType::kFloat) {
    const uint32_t* bits = static_cast<const uint32_t*>(t.raw_data());
    exact_both_ways = true;
    for (int64_t i = 0; i < t.num_elements() && exact_both_ways; ++i) exact_both_ways = (bits[i] & 0xFFFFu) == 0;
  }
  if (!exact_both_ways) return;
  ReleaseWeight(t, [packed, from, to](uint8_t* dst) {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    dnnl::stream stream(engine);
    memory src(to, engine, const_cast<void*>(packed.raw_data()));
    memory out(from, engine, dst);
    dnnl::reorder(src, out).execute(stream, src, out);
    stream.wait();
  });
}

void Lowerer::ReleaseWeight(const Tensor& t, std::function<void(uint8_t* dst)> restore) {
  constexpr size_t kMinReleaseBytes = 64 * 1024;
  constexpr long kModelAndClone = 2;
  // A value folded while lowering (a dequantized weight) is the plan's
  // alone: a slot holding it too reads its bytes.
  bool folded = false;
  for (const Tensor& c : plan_.constants) folded = folded || &c == &t;
  const std::shared_ptr<Buffer>& buffer = t.buffer();
  if (buffer == nullptr || buffer.use_count() > (folded ? 1 : kModelAndClone) || buffer->released() ||
      t.device() != Device::kCpu ||
      (t.dtype() != DType::kFloat && t.dtype() != DType::kInt8 && t.dtype() != DType::kUint8) || t.byte_offset() != 0 ||
      buffer->size() != t.byte_size() || t.byte_size() < kMinReleaseBytes) {
    return;
  }
  buffer->Release(restore);
  plan_.stats.released_weight_bytes += t.byte_size();
  ReleaseHalfOriginal(t, restore);
}

// A half model's weights were held twice while it ran: the packed float form
// and the model's half original, which nothing reads (ONNX Runtime folds the
// Casts it inserts and drops the half initializers). The original is held
// by the model compiled and the plan's map; it gives its bytes up when every
// value survives widening and narrowing unchanged (NaN payloads may not),
// and gets them back by narrowing what `restore` writes.
void Lowerer::ReleaseHalfOriginal(const Tensor& widened, const std::function<void(uint8_t* dst)>& restore) {
  constexpr long kModelAndPlan = 2;
  auto it = plan_.half_originals.find(widened.buffer().get());
  if (it == plan_.half_originals.end()) return;
  const Tensor& half = it->second;
  const std::shared_ptr<Buffer>& buffer = half.buffer();
  const DType type = half.dtype();
  const int64_t count = half.num_elements();
  if (buffer == nullptr || buffer.use_count() > kModelAndPlan || buffer->released() || half.byte_offset() != 0 ||
      buffer->size() != half.byte_size() || count != widened.num_elements() ||
      (type != DType::kFloat16 && type != DType::kBFloat16)) {
    return;
  }
  auto widen = [type](uint16_t h) { return type == DType::kBFloat16 ? BFloat16ToFloat(h) : HalfToFloat(h); };
  auto narrow = [type](float f) { return type == DType::kBFloat16 ? FloatToBFloat16(f) : FloatToHalf(f); };
  const uint16_t* bits = static_cast<const uint16_t*>(half.raw_data());
  for (int64_t i = 0; i < count; ++i) {
    if (narrow(widen(bits[i])) != bits[i]) return;
  }
  buffer->Release([restore, count, narrow](uint8_t* dst) {
    std::vector<float> wide(static_cast<size_t>(count));
    restore(reinterpret_cast<uint8_t*>(wide.data()));
    uint16_t* out = reinterpret_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < count; ++i) out[i] = narrow(wide[static_cast<size_t>(i)]);
  });
  plan_.stats.released_weight_bytes += half.byte_size();
}

namespace {

// Dense row-major desc of dims in `type` (PlainMd for f32).
memory::desc PlainMdOfType(const std::vector<int64_t>& dims, memory::data_type type) {
  memory::desc f32 = PlainMd(dims);
  if (type == memory::data_type::f32) return f32;
  memory::dims d = f32.dims();
  memory::dims strides(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * d[i + 1];
  return memory::desc(d, type, strides);
}

}  // namespace

int Lowerer::PlainSlot(const Value* v) {
  if (const Tensor* c = Const(v))
    return ConstSlot(*c, V(v).dtype == DType::kFloat ? PlainMd(c->dims()) : memory::desc());
  ValueState& st = V(v);
  AIC_CHECK(st.slot >= 0, "value without a slot");
  if (plan_.slots[st.slot].plain) return st.slot;
  // In the slot's own data type: QLinearConv leaves u8/s8 activations blocked.
  return SlotIn(v, PlainMdOfType(st.dims, plan_.slots[st.slot].md.data_type()));
}

int Lowerer::SlotIn(const Value* v, const memory::desc& md) {
  if (const Tensor* c = Const(v)) return PackedConstSlot(*c, PlainMd(c->dims()), md);
  ValueState& st = V(v);
  AIC_CHECK(st.slot >= 0, "value without a slot");
  if (plan_.slots[st.slot].md == md) return st.slot;
  std::vector<std::pair<memory::desc, int>>& copies = layouts_[v];
  for (const auto& [m, s] : copies) {
    if (m == md) return s;
  }
  int src = st.slot;
  int saved = st.slot;
  memory::data_type type = md.data_type();
  bool eight_bit = type == memory::data_type::u8 || type == memory::data_type::s8;
  DType dtype = type == memory::data_type::u8 ? DType::kUint8 : DType::kInt8;
  // A plain 8-bit slot of our own kernels describes its bytes only (1-D):
  // read it as the dense tensor it holds.
  memory::desc src_md = plan_.slots[src].md;
  if (eight_bit && plan_.slots[src].plain && plan_.slots[src].dtype == dtype) src_md = PlainMdOfType(st.dims, type);
  int dst = NewArenaSlot(v, md, md == PlainMdOfType(st.dims, type));
  if (eight_bit) plan_.slots[dst].dtype = dtype;
  if (type == memory::data_type::bf16) plan_.slots[dst].dtype = DType::kBFloat16;  // a bf16 kernel's input copy
  st.slot = saved;  // the produced slot stays the value's primary one
  copies.emplace_back(md, dst);
  AddReorderStep(plan_, src, src_md, dst, md, v->name());
  return dst;
}

memory::desc Lowerer::SrcMdOrAny(const Value* v) {
  ValueState& st = V(v);
  if (st.slot >= 0 && !plan_.slots[st.slot].plain) return plan_.slots[st.slot].md;
  if (options_.blocked_layouts) {
    return memory::desc(ToDnnlDims(st.dims), memory::data_type::f32, memory::format_tag::any);
  }
  return PlainMd(st.dims);
}

DnnlStep* Lowerer::AddDnnlStep(dnnl::primitive p, const char* kind, const Node& n) {
  auto step = std::make_unique<DnnlStep>();
  step->primitive = std::move(p);
  step->kind = kind;
  step->label = n.Describe();
  DnnlStep* raw = step.get();
  plan_.steps.push_back(std::move(step));
  return raw;
}

dnnl::primitive_attr Lowerer::MakeAttr(const std::vector<PostOp>& chain, size_t k) {
  dnnl::post_ops po;
  for (size_t i = 0; i < k; ++i) {
    if (chain[i].sum) {
      po.append_sum(1.0f);
    } else if (chain[i].binary) {
      po.append_binary(chain[i].alg, chain[i].src1_md);
    } else {
      po.append_eltwise(1.0f, chain[i].alg, chain[i].alpha, chain[i].beta);
    }
  }
  dnnl::primitive_attr attr;
  attr.set_post_ops(po);
  return attr;
}

int Lowerer::FinishPostOps(DnnlStep* step, const Value* v, const std::vector<PostOp>& chain, size_t k,
                           const memory::desc& dst_md, bool dst_plain, const memory::desc* arg_md) {
  const Value* final_value = v;
  std::vector<std::string> names;
  for (size_t i = 0; i < k; ++i) {
    for (const Node* n : chain[i].nodes) MarkDone(n);
    plan_.stats.fused_nodes += static_cast<int>(chain[i].nodes.size());
    if (chain[i].sum) {
      step->accumulate = chain[i].src1_slot;
      step->reads.push_back(chain[i].src1_slot);
    } else if (chain[i].binary) {
      step->AddArg(DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1,
                   chain[i].src1_slot, chain[i].src1_md, false);
    }
    names.push_back(chain[i].name);
    if (chain[i].out != nullptr) final_value = chain[i].out;
  }
  if (!names.empty()) absl::StrAppend(&step->label, " + [", absl::StrJoin(names, ","), "]");
  int slot = NewArenaSlot(final_value, dst_md, dst_plain);
  step->AddArg(DNNL_ARG_DST, slot, arg_md != nullptr ? *arg_md : dst_md, true);
  return slot;
}

absl::Status Lowerer::BindInput(const Value* in) {
  ValueState& st = V(in);
  Slot s;
  s.name = in->name();
  s.dtype = in->dtype();
  s.dims = st.dims;
  s.static_shape = st.is_static;
  if (!in->type().is_tensor()) {
    // A sequence or optional: passed through to reference kernels as fed.
    s.static_shape = false;
  } else if (!st.is_static) {
    return absl::InvalidArgumentError(absl::StrCat("graph input '", in->name(), "' has no concrete shape (give --shape)"));
  }
  if (s.dtype == DType::kFloat) s.md = PlainMd(s.dims);
  s.storage = Slot::Storage::kFeed;
  plan_.slots.push_back(std::move(s));
  st.slot = static_cast<int>(plan_.slots.size()) - 1;
  plan_.feeds.emplace_back(in->name(), st.slot);
  return absl::OkStatus();
}

absl::Status Lowerer::BindOutput(const Value* out) {
  plan_.output_names.push_back(out->name());
  plan_.outputs.push_back(PlainSlot(out));
  return absl::OkStatus();
}

namespace {

std::string ImplementationName(const dnnl::primitive& p) {
  const_dnnl_primitive_desc_t pd = p.get_primitive_desc();
  const char* name = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) != dnnl_success || name == nullptr) {
    return "unknown";
  }
  return name;
}

}  // namespace

bool IsSlowImplementation(const std::string& kind, const std::string& impl) {
  for (absl::string_view part : absl::StrSplit(impl, ':')) {
    if (absl::StartsWith(part, "ref")) return true;
  }
  // Pooling's simple_nchw/simple_nhwc are scalar loops over plain layouts.
  return kind == "pool" && absl::StartsWith(impl, "simple");
}

absl::Status Lowerer::LowerAll() {
  AIC_RETURN_IF_ERROR(LowerGraph());
  // The values to store as half are rounded where a step writes them: in
  // their primary slot (views and reordered twins read those bytes or copy them).
  absl::flat_hash_map<int, DType> half_slots;
  for (const auto& [v, half] : plan_.stored_half) {
    int id = V(v).slot;
    if (id < 0) continue;  // folded (rounded when folded) or fused into another step
    const Slot& s = plan_.slots[id];
    if (s.alias_of >= 0 || s.dtype != DType::kFloat || s.storage == Slot::Storage::kFeed ||
        s.storage == Slot::Storage::kConstant) {
      continue;
    }
    half_slots[id] = half;
  }
  RoundStoredHalfSlots(plan_, half_slots);
  PlanStats& stats = plan_.stats;
  stats.folded_nodes = folded_nodes();
  stats.steps = static_cast<int>(plan_.steps.size());
  for (const auto& s : plan_.steps) {
    if (s->kind == "reorder") {
      ++stats.reorder_steps;
    } else if (s->kind == "fallback") {
      ++stats.fallback_steps;
    } else if (s->kind == "view") {
      ++stats.view_steps;
    } else if (dynamic_cast<const NativeStep*>(s.get()) != nullptr || s->kind == "round") {
      ++stats.native_steps;
    } else {
      ++stats.dnnl_steps;
    }
    if (const auto* dnnl_step = dynamic_cast<const DnnlStep*>(s.get())) {
      s->impl = ImplementationName(dnnl_step->primitive);
      if (IsSlowImplementation(s->kind, s->impl)) {
        ++stats.slow_impl_steps;
        stats.slow_impls.push_back(absl::StrCat(s->kind, " ", s->impl));
      }
    }
  }
  return absl::OkStatus();
}

void Lowerer::Folded(const Value* v, Tensor& t) {
  auto it = plan_.stored_half.find(v);
  if (it != plan_.stored_half.end() && t.dtype() == DType::kFloat) t = RoundedToHalf(t, it->second);
}

absl::Status Lowerer::Fallback(const Node& n) {
  int64_t opset = OpsetOf(n);
  // Null for a call of a model-local function: the reference interpreter runs it.
  AIC_ASSIGN_OR_RETURN(const OpDef* def, FallbackDef(n));
  std::vector<int> ins, outs;
  // Reference kernels read plain layouts; each output is whatever the kernel makes.
  auto dynamic_slot = [this](const Value* v) -> absl::StatusOr<int> {
    ValueState& st = V(v);
    Slot s;
    s.name = v->name();
    s.dtype = st.dtype;
    s.dims = st.dims;
    s.static_shape = st.is_static && st.dtype != DType::kUndefined;
    if (st.dtype == DType::kFloat && st.is_static) s.md = PlainMd(st.dims);
    s.storage = Slot::Storage::kDynamic;
    plan_.slots.push_back(std::move(s));
    st.slot = static_cast<int>(plan_.slots.size()) - 1;
    return st.slot;
  };
  AIC_RETURN_IF_ERROR(FallbackSlots(
      n, [this](const Value* v) -> absl::StatusOr<int> { return PlainSlot(v); }, dynamic_slot, ins, outs));
  // Values the bodies of a control-flow node read from this graph, in plain layout.
  std::vector<std::pair<const Value*, int>> outer;
  for (const Value* v : n.ImplicitInputs()) {
    AIC_RETURN_IF_ERROR(RequireComputed(n, v, "outer value"));
    outer.emplace_back(v, PlainSlot(v));
  }
  auto step = std::make_unique<FallbackStep>(&n, opset, def, std::move(ins), std::move(outs), std::move(outer));
  // In a widened half model the reference kernel runs in the half types the
  // model declares, so its result is the reference executor's (FlexAttention
  // rounds its scaled Q and K to half before multiplying them): inputs
  // narrowed (exactly: they hold half values), half results widened, and
  // nothing left to round.
  std::vector<DType> narrow(n.num_inputs(), DType::kUndefined);
  for (size_t i = 0; i < n.num_inputs(); ++i) {
    if (auto it = plan_.declared_half.find(n.input(i)); n.input(i) != nullptr && it != plan_.declared_half.end()) {
      narrow[i] = it->second;
    }
  }
  const bool runs_in_half = absl::c_any_of(narrow, [](DType t) { return t != DType::kUndefined; });
  if (runs_in_half) {
    step->RunInHalf(std::move(narrow));
    for (const Value* out : n.outputs()) plan_.stored_half.erase(out);
  }
  // A faster kernel for this op on these inputs (fast_fallback.h): the f32
  // GEMM family whose shapes are known only at run time (after NonZero: a
  // detector's box head), RoiAlign.
  const FastFallback* fast = FindFastFallback(n);
  bool fast_applies = fast != nullptr && step->bodies() == nullptr && !runs_in_half && n.output(0) != nullptr;
  if (fast_applies && IsDynamicGemmOp(n)) {
    fast_applies = V(n.output(0)).dtype == DType::kFloat;
    if (n.op_type == "MatMul") {
      const ValueState& b = V(n.input(1));
      fast_applies = fast_applies && b.is_static && b.dims.size() == 2;  // a batched MatMul stays on the reference
    }
  }
  if (fast_applies) step->RunFast(fast);
  else plan_.stats.fallback_ops.push_back(n.op_type);
  plan_.steps.push_back(std::move(step));
  return absl::OkStatus();
}

absl::Status Lowerer::LowerNode(const Node& n) {
  if (LowerFn lower = LowerTable().Find(n, OpsetOf(n))) {
    bool lowered = false;
    try {
      lowered = lower(*this, n);
    } catch (const dnnl::error&) {
      lowered = false;  // oneDNN declined this shape/attribute combination
    }
    if (lowered) return absl::OkStatus();
  }
  return Fallback(n);
}

}  // namespace aic::cpu
