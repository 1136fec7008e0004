#include "exec/common/lowering_frame.h"

#include "absl/strings/str_cat.h"
#include "graph/topo.h"
#include "ops/evaluate.h"
#include "ops/registry.h"

namespace aic::exec {

int64_t LoweringFrame::OpsetOf(const Node& n) const {
  if (IsAicAlias(n)) return *AicAliasVersion(n.op_type);
  return model_.OpsetFor(n.domain);
}

std::optional<float> LoweringFrame::ScalarConst(const Value* v) {
  const Tensor* t = Const(v);
  if (t == nullptr || t->num_elements() != 1) return std::nullopt;
  if (t->dtype() != DType::kFloat && t->dtype() != DType::kDouble) return std::nullopt;
  return static_cast<float>(t->ElementAsDouble(0));
}

std::optional<std::vector<int64_t>> LoweringFrame::IntsConst(const Value* v) {
  const Tensor* t = Const(v);
  if (t == nullptr || (t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32)) return std::nullopt;
  // Read as integers: INT64_MAX (Slice's "to the end") does not survive a trip through double.
  if (t->dtype() == DType::kInt64) return std::vector<int64_t>(t->data<int64_t>(), t->data<int64_t>() + t->num_elements());
  return std::vector<int64_t>(t->data<int32_t>(), t->data<int32_t>() + t->num_elements());
}

const Node* LoweringFrame::SoleConsumer(const Value* v) {
  const ValueFacts& f = V(v);
  if (f.graph_output || f.consumers.size() != 1) return nullptr;
  const Node* c = f.consumers[0];
  return done_.contains(c) ? nullptr : c;
}

void LoweringFrame::CollectFacts() {
  const Graph& graph = *model_.graph;
  for (const auto& v : graph.values()) {
    ValueFacts& f = V(v.get());
    f.dtype = v->dtype();
    f.is_static = v->type().is_tensor() && v->shape().has_rank() && v->shape().IsStatic();
    if (f.is_static) f.dims = v->shape().Values();
    if (v->initializer() != nullptr) {
      f.constant = v->initializer();
      f.dims = f.constant->dims();
      f.dtype = f.constant->dtype();
      f.is_static = true;
    }
  }
  for (const auto& n : graph.nodes()) {
    for (const Value* in : n->inputs()) {
      if (in != nullptr) V(in).consumers.push_back(n.get());
    }
    // A value a body reads must exist as computed (not fused into another step).
    for (const Value* in : n->ImplicitInputs()) V(in).consumers.push_back(n.get());
  }
  for (const Value* out : graph.outputs()) V(out).graph_output = true;
}

bool LoweringFrame::FoldConstant(const Node& n) {
  // Bodies may read values of this graph that are not constants.
  if (!n.Subgraphs().empty()) return false;
  std::vector<TypeInfo> types;
  std::vector<const Tensor*> constants;
  for (const Value* v : n.inputs()) {
    constants.push_back(Const(v));
    const ValueFacts* f = v != nullptr ? &V(v) : nullptr;
    types.push_back(f != nullptr && f->is_static ? TypeInfo::Tensor(f->dtype, Shape::FromValues(f->dims))
                    : v != nullptr           ? v->type()
                                             : TypeInfo());
  }
  Evaluation ev = EvaluateNode(n, OpsetOf(n), types, constants);
  if (ev.nondeterministic || !ev.AllValuesKnown()) return false;
  for (size_t i = 0; i < n.num_outputs(); ++i) {
    if (n.output(i) == nullptr) continue;
    constants_.push_back(std::move(*ev.values[i]));
    Folded(n.output(i), constants_.back());
    ValueFacts& f = V(n.output(i));
    f.constant = &constants_.back();
    f.dims = f.constant->dims();
    f.dtype = f.constant->dtype();
    f.is_static = true;
  }
  ++folded_nodes_;
  return true;
}

const Tensor* LoweringFrame::Const(const Value* v) {
  if (v == nullptr) return nullptr;
  if (const Node* n = V(v).deferred_fold) {
    V(v).deferred_fold = nullptr;
    FoldConstant(*n);  // DeferFold took only what the reference kernel computes
  }
  return V(v).constant;
}

std::optional<LoweringFrame::ConstantDequantize> LoweringFrame::DequantizeOfConstants(const Node& n) {
  const int64_t output_dtype = n.GetInt("output_dtype", 0);
  if (n.op_type != "DequantizeLinear" || !n.domain.empty() || n.num_outputs() != 1 || n.output(0) == nullptr ||
      n.num_inputs() < 2 || n.GetInt("block_size", 0) != 0 ||
      (output_dtype != 0 && output_dtype != static_cast<int64_t>(DType::kFloat))) {
    return std::nullopt;
  }
  ConstantDequantize d;
  d.x = Const(n.input(0));
  d.scale = Const(n.input(1));
  d.zero = n.num_inputs() > 2 ? Const(n.input(2)) : nullptr;
  if (d.x == nullptr || d.scale == nullptr || (n.num_inputs() > 2 && n.input(2) != nullptr && d.zero == nullptr) ||
      (d.x->dtype() != DType::kInt8 && d.x->dtype() != DType::kUint8 && d.x->dtype() != DType::kInt32) ||
      d.scale->dtype() != DType::kFloat || (d.zero != nullptr && d.zero->dtype() != d.x->dtype())) {
    return std::nullopt;
  }
  const int64_t rank = static_cast<int64_t>(d.x->dims().size());
  d.axis = n.GetInt("axis", 1);
  if (d.axis < 0) d.axis += rank;
  const int64_t count = d.scale->num_elements();
  const bool per_axis =
      count > 1 && d.scale->dims().size() == 1 && d.axis >= 0 && d.axis < rank && d.x->dim(d.axis) == count;
  if ((count != 1 && !per_axis) || (d.zero != nullptr && d.zero->num_elements() != count)) return std::nullopt;
  return d;
}

// A DequantizeLinear of large 8-bit (or int32) constants, in float, is
// folded when something first asks for its value, not in topological order:
// a QDQ model's weights that stay in float are then computed one at a time,
// each just before the step that packs it (and may release it), instead of
// all at once before the first step (mobilenet_v3_large_int8's two head
// weights, 10 MB); those a kernel reads as 8 bits may never be.
bool LoweringFrame::DeferFold(const Node& n) {
  constexpr int64_t kDeferredElements = int64_t{1} << 16;
  std::optional<ConstantDequantize> d = DequantizeOfConstants(n);
  if (!d || d->x->num_elements() < kDeferredElements) return false;
  ValueFacts& f = V(n.output(0));
  f.deferred_fold = &n;
  f.dims = d->x->dims();
  f.dtype = DType::kFloat;
  f.is_static = true;
  return true;
}

absl::Status LoweringFrame::LowerGraph() {
  CollectFacts();
  const Graph& graph = *model_.graph;
  for (const Value* in : graph.inputs()) {
    if (!in->is_initializer()) AIC_RETURN_IF_ERROR(BindInput(in));
  }
  AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  for (const Node* n : order) {
    if (done_.contains(n) || DeferFold(*n) || FoldConstant(*n)) continue;
    AIC_RETURN_IF_ERROR(LowerNode(*n));
  }
  for (const Value* out : graph.outputs()) {
    Const(out);  // a deferred fold that nothing else asked for
    const ValueFacts& f = V(out);
    if (f.constant == nullptr && f.slot < 0) {
      return absl::InternalError(absl::StrCat("graph output '", out->name(), "' was not computed"));
    }
    AIC_RETURN_IF_ERROR(BindOutput(out));
  }
  return absl::OkStatus();
}

absl::StatusOr<const OpDef*> LoweringFrame::FallbackDef(const Node& n) const {
  int64_t opset = OpsetOf(n);
  const OpDef* def = OpRegistry::Global().Find(n.domain, n.op_type, opset);
  if (def != nullptr && !def->kernel) def = nullptr;
  if (def == nullptr && model_.FindFunction(n.domain, n.op_type) == nullptr) {
    return absl::UnimplementedError(absl::StrCat("no kernel for op ", n.op_type, " (domain '",
                                                 n.domain.empty() ? "ai.onnx" : n.domain, "', opset ", opset,
                                                 ") at node ", n.Describe()));
  }
  return def;
}

absl::Status LoweringFrame::RequireComputed(const Node& n, const Value* v, const char* what) {
  if (Const(v) != nullptr || V(v).slot >= 0) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(n.Describe(), ": ", what, " '", v->name(), "' has no value"));
}

absl::Status LoweringFrame::FallbackSlots(const Node& n, const SlotFn& input_slot, const SlotFn& output_slot,
                                          std::vector<int>& ins, std::vector<int>& outs) {
  for (const Value* v : n.inputs()) {
    if (v == nullptr) {
      ins.push_back(-1);
      continue;
    }
    AIC_RETURN_IF_ERROR(RequireComputed(n, v, "input"));
    AIC_ASSIGN_OR_RETURN(int slot, input_slot(v));
    ins.push_back(slot);
  }
  for (const Value* v : n.outputs()) {
    if (v == nullptr) {
      outs.push_back(-1);
      continue;
    }
    AIC_ASSIGN_OR_RETURN(int slot, output_slot(v));
    outs.push_back(slot);
  }
  return absl::OkStatus();
}

}  // namespace aic::exec
