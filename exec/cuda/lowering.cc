#include "exec/cuda/lowering.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "exec/common/specialize.h"
#include "exec/common/memory_planner.h"
#include "ops/fused/standard_aliases.h"

namespace aic::cuda {

namespace {

using LowerFn = bool (*)(Lowerer&, const Node&);

// What this backend lowers, by (domain, op, opset range); elementwise ops
// go to LowerElementwise, everything else runs its reference kernel on the
// host. ai.aic's aliases of standard ops find the standard op's entry.
const exec::LoweringTable<LowerFn>& LowerTable() {
  static const auto* table = new exec::LoweringTable<LowerFn>{
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
      {"FusedLinearReLU", LowerFusedLinearRelu, kAicDomain},
  };
  return *table;
}

bool StorableDType(DType t) {
  size_t e = ElementSize(t);
  return e > 0 && t != DType::kString && ByteSizeOf(t, 2) == 2 * e;  // not string, not packed 4-bit
}

}  // namespace

std::set<std::string> LoweredAicOps() {
  std::set<std::string> ops = LowerTable().AicOps();
  // Aliases LowerElementwise runs (lower_eltwise.cc) have no entry in the table.
  for (std::string_view op : AicAliasOpTypes()) {
    if (IsElementwiseOp(op)) ops.emplace(op);
  }
  return ops;
}

bool Lowerer::IsStorable(const Value* v) {
  if (v == nullptr) return false;
  const ValueInfo& vi = V(v);
  return vi.is_static && StorableDType(vi.dtype);
}

bool Lowerer::IsF32(const Value* v) { return IsStorable(v) && V(v).dtype == DType::kFloat; }

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
  if (V(v).slot >= 0) return V(v).slot;
  const Tensor* c = Const(v);
  AIC_CHECK(c != nullptr, "value without a slot");
  ValueInfo& vi = V(v);
  vi.slot = WeightSlot(*c, v->name());
  return vi.slot;
}

Step* Lowerer::AddStep(std::unique_ptr<Step> step, const std::string& label) {
  step->label = label;
  plan_.steps.push_back(std::move(step));
  return plan_.steps.back().get();
}

absl::Status Lowerer::BindInput(const Value* in) {
  if (!IsStorable(in)) {
    return absl::InvalidArgumentError(absl::StrCat("graph input '", in->name(), "' has no concrete shape",
                                                   " or a dtype the device cannot hold (give --shape)"));
  }
  plan_.feeds.emplace_back(in->name(), OutputSlot(in));
  return absl::OkStatus();
}

absl::Status Lowerer::BindOutput(const Value* out) {
  plan_.output_names.push_back(out->name());
  if (!StorableDType(V(out).dtype)) {
    return absl::UnimplementedError(absl::StrCat("graph output '", out->name(), "' is ", DTypeName(V(out).dtype),
                                                 ", which --device cuda does not hold"));
  }
  plan_.outputs.push_back(SlotOf(out));
  return absl::OkStatus();
}

absl::Status Lowerer::LowerAll() {
  for (const auto& n : plan_.model->graph->nodes()) {
    if (!n->Subgraphs().empty()) {
      return absl::UnimplementedError(absl::StrCat(n->Describe(), ": control flow is not supported by --device cuda"));
    }
  }
  AIC_RETURN_IF_ERROR(LowerGraph());
  PlanStats& stats = plan_.stats;
  stats.folded_nodes = folded_nodes();
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

absl::Status Lowerer::Fallback(const Node& n) {
  int64_t opset = OpsetOf(n);
  AIC_ASSIGN_OR_RETURN(const OpDef* def, FallbackDef(n));
  if (def == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(n.Describe(), ": calls of model-local functions are not supported by --device cuda"));
  }
  std::vector<int> ins, outs;
  auto input_slot = [&](const Value* v) -> absl::StatusOr<int> {
    if (IsStorable(v)) return SlotOf(v);
    return absl::UnimplementedError(absl::StrCat(n.Describe(), ": input '", v->name(), "' is ", DTypeName(V(v).dtype),
                                                 ", which --device cuda does not hold"));
  };
  auto output_slot = [&](const Value* v) -> absl::StatusOr<int> {
    if (IsStorable(v)) return OutputSlot(v);
    return absl::UnimplementedError(absl::StrCat(n.Describe(), ": output '", v->name(),
                                                 "' has no static shape or a dtype --device cuda cannot hold"));
  };
  AIC_RETURN_IF_ERROR(FallbackSlots(n, input_slot, output_slot, ins, outs));
  plan_.steps.push_back(std::make_unique<FallbackStep>(&n, opset, def, std::move(ins), std::move(outs)));
  plan_.stats.fallback_ops.push_back(n.op_type);
  return absl::OkStatus();
}

absl::Status Lowerer::LowerNode(const Node& n) {
  if (LowerFn lower = LowerTable().Find(n, OpsetOf(n)); lower != nullptr && lower(*this, n)) return absl::OkStatus();
  // ai.aic's aliases of standard ops lower exactly as the standard ops do.
  if (HasStandardSemantics(n) && LowerElementwise(*this, n)) return absl::OkStatus();
  return Fallback(n);
}

}  // namespace aic::cuda
