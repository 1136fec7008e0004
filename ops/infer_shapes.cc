#include "ops/infer_shapes.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/topo.h"
#include "ops/registry.h"

namespace aic {

namespace {

class Inferrer {
 public:
  Inferrer(const Model& model, const InferOptions& options, InferStats& stats)
      : model_(model), options_(options), stats_(stats) {}

  absl::Status InferGraph(Graph& graph) {
    std::vector<Node*> computed;
    const std::vector<Node*>* order = &computed;
    if (graph.parent() == nullptr && options_.main_order != nullptr) {
      order = options_.main_order;
    } else {
      AIC_ASSIGN_OR_RETURN(computed, TopologicalOrder(graph));
    }
    for (Node* node : *order) {
      absl::Status s = InferNode(*node);
      if (!s.ok()) {
        ++stats_.failed_nodes;
        if (stats_.first_error.ok()) stats_.first_error = s;
        if (!options_.best_effort) return s;
      }
    }
    return absl::OkStatus();
  }

 private:
  const Tensor* ConstantOf(const Value* v) const {
    if (v == nullptr) return nullptr;
    if (const Tensor* t = v->initializer()) {
      // An initializer that is also a graph input may be overridden at run time.
      return v->is_graph_input() ? nullptr : t;
    }
    auto it = constants_.find(v);
    return it == constants_.end() ? nullptr : &it->second;
  }

  // Loop bodies often leave their formal inputs untyped; they are the
  // iteration number, the condition, then the loop-carried values.
  static void TypeLoopBodyInputs(const Node& node) {
    if (node.op_type != "Loop" || !node.domain.empty()) return;
    for (Graph* body : node.Subgraphs()) {
      const auto& ins = body->inputs();
      for (size_t i = 0; i < ins.size(); ++i) {
        if (ins[i]->type().known()) continue;
        if (i == 0) {
          ins[i]->set_type(TypeInfo::Tensor(DType::kInt64, Shape::Scalar()));
        } else if (i == 1) {
          ins[i]->set_type(TypeInfo::Tensor(DType::kBool, Shape::Scalar()));
        } else if (const Value* carried = node.input(i); carried != nullptr) {
          // A carried value may change shape from one iteration to the next:
          // only its kind and element type are certain.
          TypeInfo t = carried->type();
          if (t.is_tensor()) t.shape = Shape::UnknownRank();
          ins[i]->set_type(std::move(t));
        }
      }
    }
  }

  // A Scan body's inputs as the outer values make them (exporters declare
  // them with unknown dims: skl2onnx's k-NN distances left every node after
  // the Scan without shapes, so none could be compiled). A scan input's
  // slice is the outer input without its scan axis, every iteration. A state
  // is the outer initial value at the first iteration; it is kept only where
  // the body, so typed, returns the same type for it (then every iteration
  // does); else the body is inferred again from its declared state types.
  absl::Status InferScanBody(const Node& node, Graph& body) {
    const int64_t scans = node.GetInt("num_scan_inputs", 0);
    const auto& ins = body.inputs();
    const int64_t states = static_cast<int64_t>(ins.size()) - scans;
    if (scans <= 0 || states < 0 || static_cast<int64_t>(node.num_inputs()) != states + scans ||
        body.outputs().size() < static_cast<size_t>(states)) {
      return InferGraph(body);
    }
    std::vector<int64_t> axes = node.GetInts("scan_input_axes");
    auto refined = [](const TypeInfo& declared, TypeInfo outer) -> std::optional<TypeInfo> {
      if (!outer.is_tensor() || !outer.shape.has_rank() || !declared.is_tensor()) return std::nullopt;
      if (declared.dtype != DType::kUndefined && declared.dtype != outer.dtype) return std::nullopt;
      if (declared.shape.has_rank()) {
        if (declared.shape.rank() != outer.shape.rank()) return std::nullopt;
        for (int64_t k = 0; k < outer.shape.rank(); ++k) {
          const Dim& d = declared.shape.dims()[static_cast<size_t>(k)];
          if (d.is_value() && !(outer.shape.dims()[static_cast<size_t>(k)] == d)) return std::nullopt;
        }
      }
      return outer;
    };
    for (int64_t j = 0; j < scans; ++j) {
      const Value* outer = node.input(static_cast<size_t>(states + j));
      if (outer == nullptr || !outer->type().is_tensor() || !outer->type().shape.has_rank()) continue;
      TypeInfo slice = outer->type();
      int64_t axis = j < static_cast<int64_t>(axes.size()) ? axes[static_cast<size_t>(j)] : 0;
      if (axis < 0) axis += slice.shape.rank();
      if (axis < 0 || axis >= slice.shape.rank()) continue;
      std::vector<Dim> dims = slice.shape.dims();
      dims.erase(dims.begin() + axis);
      slice.shape = Shape(std::move(dims));
      Value* in = ins[static_cast<size_t>(states + j)];
      if (auto t = refined(in->type(), slice)) in->set_type(*t);
    }
    // Every type of the body, to undo a state assumption that does not hold.
    std::vector<std::pair<Value*, TypeInfo>> before;
    for (Value* v : ins) before.emplace_back(v, v->type());
    for (const auto& n : body.nodes()) {
      for (Value* v : n->outputs()) {
        if (v != nullptr) before.emplace_back(v, v->type());
      }
    }
    bool assumed = false;
    for (int64_t i = 0; i < states; ++i) {
      const Value* outer = node.input(static_cast<size_t>(i));
      if (outer == nullptr) continue;
      if (auto t = refined(ins[static_cast<size_t>(i)]->type(), outer->type())) {
        ins[static_cast<size_t>(i)]->set_type(*t);
        assumed = true;
      }
    }
    AIC_RETURN_IF_ERROR(InferGraph(body));
    if (!assumed) return absl::OkStatus();
    bool holds = true;
    for (int64_t i = 0; i < states; ++i) {
      const TypeInfo& in = ins[static_cast<size_t>(i)]->type();
      const TypeInfo& out = body.outputs()[static_cast<size_t>(i)]->type();
      holds = holds && in.is_tensor() && out.is_tensor() && in.dtype == out.dtype && in.shape.has_rank() &&
              out.shape.has_rank() && in.shape.dims() == out.shape.dims();
    }
    if (holds) return absl::OkStatus();
    for (auto& [v, t] : before) {
      bool is_state = false;
      for (int64_t i = 0; i < states; ++i) is_state = is_state || v == ins[static_cast<size_t>(i)];
      if (is_state || std::find(ins.begin(), ins.end(), v) == ins.end()) v->set_type(t);
    }
    return InferGraph(body);
  }

  absl::Status InferNode(Node& node) {
    ++stats_.nodes;
    TypeLoopBodyInputs(node);
    const bool scan = node.op_type == "Scan" && node.domain.empty() && model_.OpsetFor(node.domain) >= 9;
    for (Graph* sub : node.Subgraphs()) AIC_RETURN_IF_ERROR(scan ? InferScanBody(node, *sub) : InferGraph(*sub));

    int64_t opset = model_.OpsetFor(node.domain);
    const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type, opset);
    if (def == nullptr || !def->infer) {
      ++stats_.opaque_nodes;
      return absl::OkStatus();
    }
    std::vector<TypeInfo> in_types;
    std::vector<const Tensor*> in_consts;
    for (Value* v : node.inputs()) {
      in_types.push_back(v ? v->type() : TypeInfo());
      in_consts.push_back(ConstantOf(v));
    }
    OpContext ctx(node, opset, std::move(in_types), in_consts,
                  [this] { return absl::StrCat(kInferredSymbolPrefix, symbol_counter_++); });
    AIC_RETURN_IF_ERROR(def->infer(ctx));
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      Value* out = node.output(i);
      if (out == nullptr) continue;
      Merge(*out, ctx.output_type(i));
      if (ctx.output_constants()[i].has_value()) constants_[out] = *ctx.output_constants()[i];
    }
    MaybeFold(node, *def, opset, in_consts);
    return absl::OkStatus();
  }

  // Prefers inferred facts, but keeps a declared dim where inference only
  // produced a fresh symbol (the file's name, e.g. "batch", is better).
  static void Merge(Value& v, const TypeInfo& inferred) {
    if (!inferred.known()) return;
    const TypeInfo& declared = v.type();
    if (declared.is_tensor() && inferred.is_tensor() && declared.shape.has_rank() &&
        inferred.shape.has_rank() && declared.shape.rank() == inferred.shape.rank()) {
      TypeInfo merged = inferred;
      auto& dims = merged.shape.mutable_dims();
      for (size_t k = 0; k < dims.size(); ++k) {
        const Dim& d = declared.shape.dims()[k];
        bool inferred_weak = dims[k].is_unknown() ||
                             (dims[k].is_symbol() && dims[k].symbol().rfind("unk__", 0) == 0);
        // Why: an "unk__N" the file declares is another inference's fresh name
        // (ours or onnx's); this run's counter may give N to a different dim.
        bool declared_fresh = d.is_symbol() && d.symbol().rfind("unk__", 0) == 0;
        if (inferred_weak && !d.is_unknown() && !declared_fresh) dims[k] = d;
      }
      if (merged.dtype == DType::kUndefined) merged.dtype = declared.dtype;
      v.set_type(std::move(merged));
      return;
    }
    if (declared.is_tensor() && inferred.is_tensor() && !inferred.shape.has_rank() &&
        declared.shape.has_rank()) {
      TypeInfo merged = declared;
      if (inferred.dtype != DType::kUndefined) merged.dtype = inferred.dtype;
      v.set_type(std::move(merged));
      return;
    }
    v.set_type(inferred);
  }

  void MaybeFold(const Node& node, const OpDef& def, int64_t opset,
                 const std::vector<const Tensor*>& in_consts) {
    if (!def.kernel || def.nondeterministic || !node.Subgraphs().empty()) return;
    std::vector<RuntimeValue> inputs(node.num_inputs());
    std::vector<const RuntimeValue*> ptrs(node.num_inputs(), nullptr);
    for (size_t i = 0; i < node.num_inputs(); ++i) {
      if (node.input(i) == nullptr) continue;
      if (in_consts[i] == nullptr) return;
      if (in_consts[i]->num_elements() > options_.max_fold_elements) return;
      inputs[i] = RuntimeValue(*in_consts[i]);
      ptrs[i] = &inputs[i];
    }
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      if (node.output(i) != nullptr && constants_.count(node.output(i))) return;  // done by infer
    }
    KernelContext kctx(node, opset, ptrs);
    if (!def.kernel(kctx).ok()) return;  // the executor will report it if it matters
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      Value* out = node.output(i);
      RuntimeValue& rv = kctx.outputs()[i];
      if (out == nullptr || !rv.is_tensor()) continue;
      if (rv.tensor.num_elements() > options_.max_fold_elements) continue;
      constants_[out] = rv.tensor;
      if (!out->type().known() || !out->shape().IsStatic()) {
        out->set_type(TypeInfo::Tensor(rv.tensor.dtype(), Shape::FromValues(rv.tensor.dims())));
      }
    }
  }

  const Model& model_;
  const InferOptions& options_;
  InferStats& stats_;
  // Node-based: OpContexts hold pointers to these tensors while new ones are added.
  absl::node_hash_map<const Value*, Tensor> constants_;
  int64_t symbol_counter_ = 0;
};

}  // namespace

absl::Status InferShapes(Model& model, const InferOptions& options, InferStats* stats) {
  InferStats local;
  InferStats& s = stats ? *stats : local;
  Inferrer inferrer(model, options, s);
  return inferrer.InferGraph(*model.graph);
}

}  // namespace aic
