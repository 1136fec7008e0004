#include "exec/cuda/lowering.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "exec/common/specialize.h"
#include "exec/common/memory_planner.h"
#include "graph/topo.h"
#include "ops/fused/standard_aliases.h"
#include "ops/registry.h"

namespace aic::cuda {

namespace {

using LowerFn = bool (*)(Lowerer&, const Node&);

const absl::flat_hash_map<std::string, LowerFn>& LowerTable() {
  static const auto* table = new absl::flat_hash_map<std::string, LowerFn>{
      {"Reshape", LowerView},
      {"Flatten", LowerView},
      {"Squeeze", LowerView},
      {"Unsqueeze", LowerView},
      {"Identity", LowerView},
      {"Dropout", LowerView},
      {"MatMul", LowerMatMul},
      {"Gemm", LowerGemm},
      {"Conv", LowerConv},
      {"MaxPool", LowerPool},
      {"AveragePool", LowerPool},
      {"GlobalAveragePool", LowerReduce},
      {"GlobalMaxPool", LowerReduce},
      {"BatchNormalization", LowerBatchNorm},
      {"Softmax", LowerSoftmax},
      {"LogSoftmax", LowerSoftmax},
      {"LayerNormalization", LowerLayerNorm},
      {"ReduceMean", LowerReduce},
      {"ReduceSum", LowerReduce},
      {"ReduceMax", LowerReduce},
      {"ReduceMin", LowerReduce},
      {"Transpose", LowerTranspose},
      {"Slice", LowerSlice},
      {"Concat", LowerConcat},
      {"Gather", LowerGather},
      {"Expand", LowerExpand},
  };
  return *table;
}

bool StorableDType(DType t) {
  size_t e = ElementSize(t);
  return e > 0 && t != DType::kString && ByteSizeOf(t, 2) == 2 * e;  // not string, not packed 4-bit
}

}  // namespace

int64_t Lowerer::OpsetOf(const Node& n) const {
  if (IsAicAlias(n)) return *AicAliasVersion(n.op_type);  // the standard version it carries
  return plan_.model->OpsetFor(n.domain);
}

bool Lowerer::IsStorable(const Value* v) {
  if (v == nullptr) return false;
  const ValueInfo& vi = V(v);
  return vi.is_static && StorableDType(vi.dtype);
}

bool Lowerer::IsF32(const Value* v) { return IsStorable(v) && V(v).dtype == DType::kFloat; }

const Tensor* Lowerer::Const(const Value* v) { return v == nullptr ? nullptr : V(v).constant; }

std::optional<float> Lowerer::ScalarConst(const Value* v) {
  const Tensor* t = Const(v);
  if (t == nullptr || t->num_elements() != 1) return std::nullopt;
  if (t->dtype() != DType::kFloat && t->dtype() != DType::kDouble) return std::nullopt;
  return static_cast<float>(t->ElementAsDouble(0));
}

std::optional<std::vector<int64_t>> Lowerer::IntsConst(const Value* v) {
  const Tensor* t = Const(v);
  if (t == nullptr || (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t->num_elements(); ++i) out.push_back(static_cast<int64_t>(t->ElementAsDouble(i)));
  return out;
}

int Lowerer::ScratchSlot(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
  Slot s;
  s.name = name;
  s.dtype = dtype;
  s.dims = dims;
  s.storage = Slot::Storage::kArena;
  s.buffer = static_cast<int>(plan_.buffers.size());
  plan_.buffers.push_back({s.bytes(), -1, -1, 0});
  plan_.slots.push_back(std::move(s));
  return static_cast<int>(plan_.slots.size()) - 1;
}

int Lowerer::OutputSlot(const Value* v) {
  ValueInfo& vi = V(v);
  vi.slot = ScratchSlot(v->name(), vi.dtype, vi.dims);
  return vi.slot;
}

int Lowerer::WeightSlot(const Tensor& t, const std::string& name) {
  Slot s;
  s.name = name;
  s.dtype = t.dtype();
  s.dims = t.dims();
  s.storage = Slot::Storage::kWeight;
  size_t offset = (plan_.weights.size() + exec::kArenaAlignment - 1) / exec::kArenaAlignment * exec::kArenaAlignment;
  plan_.weights.resize(offset + t.byte_size());
  if (t.byte_size() > 0) std::memcpy(plan_.weights.data() + offset, t.raw_data(), t.byte_size());
  s.offset = offset;
  plan_.stats.weight_bytes += t.byte_size();
  plan_.slots.push_back(std::move(s));
  return static_cast<int>(plan_.slots.size()) - 1;
}

int Lowerer::SlotOf(const Value* v) {
  ValueInfo& vi = V(v);
  if (vi.slot >= 0) return vi.slot;
  AIC_CHECK(vi.constant != nullptr, "value without a slot");
  vi.slot = WeightSlot(*vi.constant, v->name());
  return vi.slot;
}

const Node* Lowerer::SoleConsumer(const Value* v) {
  const ValueInfo& vi = V(v);
  if (vi.graph_output || vi.consumers.size() != 1) return nullptr;
  const Node* c = vi.consumers[0];
  return done_.contains(c) ? nullptr : c;
}

Step* Lowerer::AddStep(std::unique_ptr<Step> step, const std::string& label) {
  step->label = label;
  plan_.steps.push_back(std::move(step));
  return plan_.steps.back().get();
}

absl::Status Lowerer::LowerAll() {
  Graph& graph = *plan_.model->graph;
  for (const auto& n : graph.nodes()) {
    if (!n->Subgraphs().empty()) {
      return absl::UnimplementedError(absl::StrCat(n->Describe(), ": control flow is not supported by --device cuda"));
    }
  }
  for (const auto& v : graph.values()) {
    ValueInfo& vi = V(v.get());
    vi.dtype = v->dtype();
    vi.is_static = v->type().is_tensor() && v->shape().has_rank() && v->shape().IsStatic();
    if (vi.is_static) vi.dims = v->shape().Values();
    if (v->initializer() != nullptr) {
      vi.constant = v->initializer();
      vi.dims = vi.constant->dims();
      vi.dtype = vi.constant->dtype();
      vi.is_static = true;
    }
  }
  for (const auto& n : graph.nodes()) {
    for (const Value* in : n->inputs()) {
      if (in != nullptr) V(in).consumers.push_back(n.get());
    }
  }
  for (const Value* out : graph.outputs()) V(out).graph_output = true;
  for (const Value* in : graph.inputs()) {
    if (in->is_initializer()) continue;
    if (!IsStorable(in)) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", in->name(), "' has no concrete shape",
                                                     " or a dtype the device cannot hold (give --shape)"));
    }
    plan_.feeds.emplace_back(in->name(), OutputSlot(in));
  }
  AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  for (const Node* n : order) {
    if (done_.contains(n)) continue;
    AIC_RETURN_IF_ERROR(LowerNode(*n));
  }
  for (const Value* out : graph.outputs()) {
    plan_.output_names.push_back(out->name());
    ValueInfo& vi = V(out);
    if (vi.constant == nullptr && vi.slot < 0) {
      return absl::InternalError(absl::StrCat("graph output '", out->name(), "' was not computed"));
    }
    if (!StorableDType(vi.dtype)) {
      return absl::UnimplementedError(absl::StrCat("graph output '", out->name(), "' is ", DTypeName(vi.dtype),
                                                   ", which --device cuda does not hold"));
    }
    plan_.outputs.push_back(SlotOf(out));
  }
  PlanStats& stats = plan_.stats;
  stats.steps = static_cast<int>(plan_.steps.size());
  for (const auto& s : plan_.steps) {
    if (s->kind == "gemm") {
      ++stats.gemm_steps;
    } else if (s->kind == "conv") {
      ++stats.conv_steps;
    } else if (s->kind == "fallback") {
      ++stats.fallback_steps;
    } else {
      ++stats.kernel_steps;
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
    ValueInfo& vi = V(n.output(i));
    vi.constant = &plan_.constants.back();
    vi.dims = vi.constant->dims();
    vi.dtype = vi.constant->dtype();
    vi.is_static = true;
  }
  ++plan_.stats.folded_nodes;
  return true;
}

absl::Status Lowerer::Fallback(const Node& n) {
  int64_t opset = OpsetOf(n);
  const OpDef* def = OpRegistry::Global().Find(n.domain, n.op_type, opset);
  if (def == nullptr || !def->kernel) {
    return absl::UnimplementedError(absl::StrCat("no kernel for op ", n.op_type, " (domain '",
                                                 n.domain.empty() ? "ai.onnx" : n.domain, "', opset ", opset,
                                                 ") at node ", n.Describe()));
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
    if (!IsStorable(v)) {
      return absl::UnimplementedError(absl::StrCat(n.Describe(), ": input '", v->name(), "' is ", DTypeName(V(v).dtype),
                                                   ", which --device cuda does not hold"));
    }
    ins.push_back(SlotOf(v));
  }
  for (const Value* v : n.outputs()) {
    if (v == nullptr) {
      outs.push_back(-1);
      continue;
    }
    if (!IsStorable(v)) {
      return absl::UnimplementedError(absl::StrCat(n.Describe(), ": output '", v->name(),
                                                   "' has no static shape or a dtype --device cuda cannot hold"));
    }
    outs.push_back(OutputSlot(v));
  }
  plan_.steps.push_back(std::make_unique<FallbackStep>(&n, opset, def, std::move(ins), std::move(outs)));
  plan_.stats.fallback_ops.push_back(n.op_type);
  return absl::OkStatus();
}

absl::Status Lowerer::LowerNode(const Node& n) {
  if (FoldConstant(n)) return absl::OkStatus();
  // ai.aic's aliases of standard ops lower exactly as the standard ops do.
  if (HasStandardSemantics(n)) {
    auto it = LowerTable().find(n.op_type);
    if (it != LowerTable().end() && it->second(*this, n)) return absl::OkStatus();
    if (LowerElementwise(*this, n)) return absl::OkStatus();
  } else if (n.domain == kAicDomain && n.op_type == "FusedLinearReLU" && LowerFusedLinearRelu(*this, n)) {
    return absl::OkStatus();
  }
  return Fallback(n);
}

}  // namespace aic::cuda
