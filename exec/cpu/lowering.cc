#include "exec/cpu/lowering.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "exec/common/specialize.h"
#include "absl/strings/str_join.h"
#include "exec/cpu/fallback_step.h"
#include "exec/cpu/native_step.h"
#include "graph/topo.h"
#include "ops/fused/standard_aliases.h"
#include "ops/registry.h"

namespace aic::cpu {

namespace {

using LowerFn = bool (*)(Lowerer&, const Node&);

const absl::flat_hash_map<std::string, LowerFn>& LowerTable() {
  static const auto* table = new absl::flat_hash_map<std::string, LowerFn>{
      {"Reshape", LowerView},         {"Flatten", LowerView},
      {"Squeeze", LowerView},         {"Unsqueeze", LowerView},
      {"Identity", LowerView},        {"Dropout", LowerView},
      {"Relu", LowerUnary},           {"LeakyRelu", LowerUnary},
      {"Sigmoid", LowerUnary},        {"Tanh", LowerUnary},
      {"Exp", LowerUnary},
      {"Sqrt", LowerUnary},           {"Abs", LowerUnary},
      {"Elu", LowerUnary},            {"HardSigmoid", LowerUnary},
      {"HardSwish", LowerUnary},      {"Clip", LowerUnary},
      {"Neg", LowerUnary},            {"Pow", LowerUnaryOrNative},
      {"Add", LowerBinaryOrNative},   {"Sub", LowerBinaryOrNative},
      {"Mul", LowerBinaryOrNative},   {"Div", LowerBinaryOrNative},
      {"Max", LowerBinaryOrNative},   {"Min", LowerBinaryOrNative},
      {"Conv", LowerConv},            {"ConvTranspose", LowerConvTranspose},
      {"MaxPool", LowerPool},         {"AveragePool", LowerPool},
      {"GlobalAveragePool", LowerPool}, {"GlobalMaxPool", LowerPool},
      {"MatMul", LowerMatMul},        {"Gemm", LowerGemm},
      {"BatchNormalization", LowerBatchNorm},
      {"Softmax", LowerSoftmax},      {"LogSoftmax", LowerSoftmax},
      {"Concat", LowerConcat},        {"ReduceMean", LowerReduce},
      {"ReduceSum", LowerReduce},     {"ReduceMax", LowerReduce},
      {"ReduceMin", LowerReduce},     {"Transpose", LowerTranspose},
      {"Slice", LowerSlice},         {"Resize", LowerResizeOrNative},
      {"Upsample", LowerResizeOrNative},
      // Our own kernels (ops_native*.cc).
      {"Gelu", LowerUnaryOrNative},   {"Erf", LowerNativeUnary},
      {"Reciprocal", LowerNativeUnary}, {"Floor", LowerNativeUnary},
      {"Ceil", LowerNativeUnary},     {"Round", LowerNativeUnary},
      {"Sin", LowerNativeUnary},      {"Cos", LowerNativeUnary},
      {"Log", LowerNativeUnary},      {"Softplus", LowerNativeUnary},
      {"Softsign", LowerNativeUnary}, {"Sign", LowerNativeUnary},
      {"PRelu", LowerNativeElementwise}, {"Where", LowerNativeElementwise},
      {"Equal", LowerNativeElementwise}, {"Less", LowerNativeElementwise},
      {"Greater", LowerNativeElementwise}, {"LessOrEqual", LowerNativeElementwise},
      {"GreaterOrEqual", LowerNativeElementwise}, {"And", LowerNativeElementwise},
      {"Or", LowerNativeElementwise}, {"Xor", LowerNativeElementwise},
      {"LayerNormalization", LowerLayerNorm}, {"Gather", LowerGather},
      {"Pad", LowerPad},              {"Cast", LowerCast},
  };
  return *table;
}

// aic-onnx's own fused ops (domain "ai.aic", emitted by `opt --target aic`).
const absl::flat_hash_map<std::string, LowerFn>& AicLowerTable() {
  static const auto* table = new absl::flat_hash_map<std::string, LowerFn>{
      {"FusedLinearReLU", LowerFusedLinearReLU},
  };
  return *table;
}

std::vector<int64_t> StaticDims(const Value* v, bool* is_static) {
  *is_static = v->type().is_tensor() && v->shape().has_rank() && v->shape().IsStatic();
  return *is_static ? v->shape().Values() : std::vector<int64_t>{};
}

}  // namespace

int64_t Lowerer::OpsetOf(const Node& n) const {
  if (IsAicAlias(n)) return *AicAliasVersion(n.op_type);  // the standard version it carries
  return plan_.model->OpsetFor(n.domain);
}

bool Lowerer::IsF32(const Value* v) {
  if (v == nullptr) return false;
  const ValueState& st = V(v);
  return st.dtype == DType::kFloat && st.is_static;
}

const Tensor* Lowerer::Const(const Value* v) { return v == nullptr ? nullptr : V(v).constant; }

std::optional<float> Lowerer::ScalarConst(const Value* v) {
  const Tensor* t = Const(v);
  if (t == nullptr || t->num_elements() != 1) return std::nullopt;
  if (t->dtype() != DType::kFloat && t->dtype() != DType::kDouble) return std::nullopt;
  return static_cast<float>(t->ElementAsDouble(0));
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

int Lowerer::PackedConstSlot(const Tensor& t, const memory::desc& from, const memory::desc& to) {
  if (from == to) return ConstSlot(t, to);
  Tensor packed(DType::kFloat, {static_cast<int64_t>((to.get_size() + 3) / 4)});
  memory src(from, plan_.engine, const_cast<void*>(t.raw_data()));
  memory dst(to, plan_.engine, packed.mutable_raw_data());
  dnnl::reorder(src, dst).execute(plan_.stream, src, dst);
  plan_.stream.wait();
  plan_.constants.push_back(packed);
  plan_.stats.weight_bytes += to.get_size();
  int id = ConstSlot(plan_.constants.back(), to);
  plan_.slots[id].plain = false;
  return id;
}

int Lowerer::PlainSlot(const Value* v) {
  ValueState& st = V(v);
  if (st.constant != nullptr) {
    return ConstSlot(*st.constant, st.dtype == DType::kFloat ? PlainMd(st.constant->dims()) : memory::desc());
  }
  AIC_CHECK(st.slot >= 0, "value without a slot");
  if (plan_.slots[st.slot].plain) return st.slot;
  return SlotIn(v, PlainMd(st.dims));
}

int Lowerer::SlotIn(const Value* v, const memory::desc& md) {
  ValueState& st = V(v);
  if (st.constant != nullptr) return PackedConstSlot(*st.constant, PlainMd(st.constant->dims()), md);
  AIC_CHECK(st.slot >= 0, "value without a slot");
  if (plan_.slots[st.slot].md == md) return st.slot;
  for (const auto& [m, s] : st.layouts) {
    if (m == md) return s;
  }
  int src = st.slot;
  int saved = st.slot;
  int dst = NewArenaSlot(v, md, md == PlainMd(st.dims));
  st.slot = saved;  // the produced slot stays the value's primary one
  st.layouts.emplace_back(md, dst);
  auto step = std::make_unique<DnnlStep>();
  step->primitive = dnnl::reorder(dnnl::reorder::primitive_desc(plan_.engine, plan_.slots[src].md,
                                                                 plan_.engine, md));
  step->AddArg(DNNL_ARG_SRC, src, plan_.slots[src].md, false);
  step->AddArg(DNNL_ARG_DST, dst, md, true);
  step->kind = "reorder";
  step->label = v->name();
  plan_.steps.push_back(std::move(step));
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
    if (chain[i].binary) {
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
    for (const Node* n : chain[i].nodes) done_.insert(n);
    plan_.stats.fused_nodes += static_cast<int>(chain[i].nodes.size());
    if (chain[i].binary) {
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

absl::Status Lowerer::LowerAll() {
  Graph& graph = *plan_.model->graph;
  for (const auto& v : graph.values()) {
    ValueState& st = V(v.get());
    st.dtype = v->dtype();
    st.dims = StaticDims(v.get(), &st.is_static);
    if (v->initializer() != nullptr) {
      st.constant = v->initializer();
      st.dims = st.constant->dims();
      st.is_static = true;
    }
  }
  for (const auto& n : graph.nodes()) {
    for (const Value* in : n->inputs()) {
      if (in != nullptr) V(in).consumers.push_back(n.get());
    }
    // A value a body reads must exist as computed (not fused into a post-op).
    for (const Value* in : n->ImplicitInputs()) V(in).consumers.push_back(n.get());
  }
  for (const Value* out : graph.outputs()) V(out).graph_output = true;
  for (const Value* in : graph.inputs()) {
    if (in->is_initializer()) continue;
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
      return absl::InvalidArgumentError(absl::StrCat("graph input '", in->name(),
                                                     "' has no concrete shape (give --shape)"));
    }
    if (s.dtype == DType::kFloat) s.md = PlainMd(s.dims);
    s.storage = Slot::Storage::kFeed;
    plan_.slots.push_back(std::move(s));
    st.slot = static_cast<int>(plan_.slots.size()) - 1;
    plan_.feeds.emplace_back(in->name(), st.slot);
  }
  AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  for (const Node* n : order) {
    if (done_.contains(n)) continue;
    AIC_RETURN_IF_ERROR(LowerNode(*n));
  }
  for (const Value* out : graph.outputs()) {
    plan_.output_names.push_back(out->name());
    ValueState& st = V(out);
    if (st.constant == nullptr && st.slot < 0) {
      return absl::InternalError(absl::StrCat("graph output '", out->name(), "' was not computed"));
    }
    plan_.outputs.push_back(PlainSlot(out));
  }
  PlanStats& stats = plan_.stats;
  stats.steps = static_cast<int>(plan_.steps.size());
  for (const auto& s : plan_.steps) {
    if (s->kind == "reorder") {
      ++stats.reorder_steps;
    } else if (s->kind == "fallback") {
      ++stats.fallback_steps;
    } else if (s->kind == "view") {
      ++stats.view_steps;
    } else if (dynamic_cast<const NativeStep*>(s.get()) != nullptr) {
      ++stats.native_steps;
    } else {
      ++stats.dnnl_steps;
    }
  }
  return absl::OkStatus();
}

bool Lowerer::FoldConstant(const Node& n) {
  std::vector<const Tensor*> constants;
  for (const Value* v : n.inputs()) constants.push_back(Const(v));
  const std::vector<int64_t>* dims0 = n.has_input(0) && V(n.input(0)).is_static ? &V(n.input(0)).dims : nullptr;
  std::optional<std::vector<Tensor>> outputs = exec::FoldNode(n, OpsetOf(n), constants, dims0);
  if (!outputs) return false;
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    if (n.output(i) == nullptr) continue;
    plan_.constants.push_back((*outputs)[i]);
    ValueState& st = V(n.output(i));
    st.constant = &plan_.constants.back();
    st.dims = st.constant->dims();
    st.dtype = st.constant->dtype();
    st.is_static = true;
  }
  ++plan_.stats.folded_nodes;
  return true;
}

absl::Status Lowerer::Fallback(const Node& n) {
  int64_t opset = OpsetOf(n);
  const OpDef* def = OpRegistry::Global().Find(n.domain, n.op_type, opset);
  if (def != nullptr && !def->kernel) def = nullptr;
  // A call of a model-local function runs on the reference interpreter (def null).
  if (def == nullptr && plan_.model->FindFunction(n.domain, n.op_type) == nullptr) {
    return absl::UnimplementedError(absl::StrCat("no kernel for op ", n.op_type, " (domain '",
                                                 n.domain.empty() ? "ai.onnx" : n.domain, "', opset ",
                                                 opset, ") at node ", n.Describe()));
  }
  std::vector<int> ins, outs;
  for (const Value* v : n.inputs()) {
    if (v == nullptr) {
      ins.push_back(-1);
      continue;
    }
    if (Const(v) == nullptr && V(v).slot < 0) {
      return absl::InternalError(absl::StrCat(n.Describe(), ": input '", v->name(), "' has no value"));
    }
    ins.push_back(PlainSlot(v));
  }
  // Values the bodies of a control-flow node read from this graph, in plain layout.
  std::vector<std::pair<const Value*, int>> outer;
  for (const Value* v : n.ImplicitInputs()) {
    if (Const(v) == nullptr && V(v).slot < 0) {
      return absl::InternalError(absl::StrCat(n.Describe(), ": outer value '", v->name(), "' has no value"));
    }
    outer.emplace_back(v, PlainSlot(v));
  }
  for (const Value* v : n.outputs()) {
    if (v == nullptr) {
      outs.push_back(-1);
      continue;
    }
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
    outs.push_back(st.slot);
  }
  plan_.steps.push_back(std::make_unique<FallbackStep>(&n, opset, def, std::move(ins), std::move(outs),
                                                          std::move(outer)));
  plan_.stats.fallback_ops.push_back(n.op_type);
  return absl::OkStatus();
}

absl::Status Lowerer::LowerNode(const Node& n) {
  if (FoldConstant(n)) return absl::OkStatus();
  // ai.aic's aliases of standard ops lower exactly as the standard ops do.
  const auto* table = HasStandardSemantics(n) ? &LowerTable() : n.domain == kAicDomain ? &AicLowerTable() : nullptr;
  if (table != nullptr) {
    auto it = table->find(n.op_type);
    if (it != table->end()) {
      bool lowered = false;
      try {
        lowered = it->second(*this, n);
      } catch (const dnnl::error&) {
        lowered = false;  // oneDNN declined this shape/attribute combination
      }
      if (lowered) return absl::OkStatus();
    }
  }
  return Fallback(n);
}

}  // namespace aic::cpu
