#include "exec/reference/executor.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "graph/clone.h"
#include "graph/topo.h"
#include "ops/registry.h"

namespace aic {

namespace {

// The values computed so far, one frame per graph being run; subgraph frames
// see their enclosing frames (outer-scope reads).
class Frame {
 public:
  explicit Frame(const Frame* parent) : parent_(parent) {}
  const RuntimeValue* Find(const Value* v) const {
    for (const Frame* f = this; f != nullptr; f = f->parent_) {
      auto it = f->values_.find(v);
      if (it != f->values_.end()) return &it->second;
    }
    return nullptr;
  }
  void Set(const Value* v, RuntimeValue rv) { values_[v] = std::move(rv); }

 private:
  const Frame* parent_;
  absl::flat_hash_map<const Value*, RuntimeValue> values_;
};

std::string OpName(const Node& n) {
  return n.domain.empty() ? n.op_type : absl::StrCat(n.domain, "::", n.op_type);
}

class Interpreter : public SubgraphRunner {
 public:
  Interpreter(const Model& model, const ReferenceRunOptions* options)
      : model_(model), options_(options) {}

  absl::Status RunGraph(const Graph& graph, Frame& frame, bool top_level) {
    for (const Value* v : graph.initializers()) {
      if (frame.Find(v) == nullptr) frame.Set(v, RuntimeValue(*v->initializer()));
    }
    AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
    for (const Node* node : order) {
      AIC_RETURN_IF_ERROR(RunNode(*node, frame, top_level));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<RuntimeValue>> RunSubgraph(
      const Graph& body, const std::vector<RuntimeValue>& inputs) override {
    Frame frame(current_frame_);
    if (inputs.size() > body.inputs().size()) {
      return absl::InvalidArgumentError(absl::StrCat("subgraph '", body.name, "' takes ",
                                                     body.inputs().size(), " inputs, given ",
                                                     inputs.size()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) frame.Set(body.inputs()[i], inputs[i]);
    const Frame* saved = current_frame_;
    current_frame_ = &frame;
    absl::Status s = RunGraph(body, frame, /*top_level=*/false);
    current_frame_ = saved;
    AIC_RETURN_IF_ERROR(s);
    std::vector<RuntimeValue> outs;
    for (const Value* v : body.outputs()) {
      const RuntimeValue* rv = frame.Find(v);
      if (rv == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("subgraph '", body.name, "' output '", v->name(), "' was not computed"));
      }
      outs.push_back(*rv);
    }
    return outs;
  }

  const Frame* current_frame_ = nullptr;

  // A function call whose inputs are in `frame`; its outputs go there too.
  absl::Status RunCall(const Node& call, Frame& frame) {
    const Function* fn = model_.FindFunction(call.domain, call.op_type);
    if (fn == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(call.Describe(), ": not a model-local function"));
    }
    return RunFunction(call, *fn, frame);
  }

 private:
  absl::Status RunNode(const Node& node, Frame& frame, bool top_level) {
    int64_t opset = model_.OpsetFor(node.domain);
    const OpDef* def = OpRegistry::Global().Find(node.domain, node.op_type, opset);
    if (def == nullptr || !def->kernel) {
      if (const Function* fn = model_.FindFunction(node.domain, node.op_type)) {
        return RunFunction(node, *fn, frame);
      }
      return absl::UnimplementedError(absl::StrCat(
          "no reference kernel for op ", OpName(node), " (domain '",
          node.domain.empty() ? "ai.onnx" : node.domain, "', opset ", opset, ") at node ",
          node.Describe()));
    }
    std::vector<const RuntimeValue*> inputs;
    inputs.reserve(node.num_inputs());
    for (size_t i = 0; i < node.num_inputs(); ++i) {
      const Value* v = node.input(i);
      if (v == nullptr) {
        inputs.push_back(nullptr);
        continue;
      }
      const RuntimeValue* rv = frame.Find(v);
      if (rv == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            node.Describe(), ": input '", v->name(), "' has no value (a graph input not fed?)"));
      }
      inputs.push_back(rv);
    }
    const Frame* saved = current_frame_;
    current_frame_ = &frame;
    KernelContext ctx(node, opset, std::move(inputs), this);
    absl::Status s = def->kernel(ctx);
    current_frame_ = saved;
    if (!s.ok()) {
      // Kernels name the node themselves through ctx.Error(); add it if not.
      if (s.message().find(node.Describe()) == std::string_view::npos) {
        return absl::Status(s.code(), absl::StrCat(node.Describe(), ": ", s.message()));
      }
      return s;
    }
    for (size_t i = 0; i < node.num_outputs(); ++i) {
      if (const Value* out = node.output(i)) frame.Set(out, ctx.outputs()[i]);
    }
    if (options_ != nullptr && options_->on_node_done && (top_level || options_->observe_subgraphs)) {
      options_->on_node_done(node, ctx.outputs());
    }
    return absl::OkStatus();
  }

  // A call of a model-local function: runs a copy of its body in which every
  // attribute bound by reference (ref_attr_name) takes the call's value, or
  // the function's default.
  absl::Status RunFunction(const Node& call, const Function& fn, Frame& frame) {
    std::unique_ptr<Graph> body = CloneGraph(*fn.body, nullptr);
    AIC_RETURN_IF_ERROR(BindAttributes(*body, call, fn));
    Frame inner(nullptr);
    for (size_t i = 0; i < body->inputs().size() && i < call.num_inputs(); ++i) {
      const Value* actual = call.input(i);
      if (actual == nullptr) continue;
      const RuntimeValue* rv = frame.Find(actual);
      if (rv == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(call.Describe(), ": input '", actual->name(), "' has no value"));
      }
      inner.Set(body->inputs()[i], *rv);
    }
    Model scope;  // the function's own opset imports decide kernel versions
    scope.opset_imports = fn.opset_imports.empty() ? model_.opset_imports : fn.opset_imports;
    scope.functions = model_.functions;
    Interpreter sub(scope, nullptr);
    sub.current_frame_ = &inner;
    AIC_RETURN_IF_ERROR(sub.RunGraph(*body, inner, /*top_level=*/false));
    for (size_t i = 0; i < call.num_outputs() && i < body->outputs().size(); ++i) {
      const Value* out = call.output(i);
      if (out == nullptr) continue;
      const RuntimeValue* rv = inner.Find(body->outputs()[i]);
      if (rv == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(call.Describe(), ": function output ", i, " was not computed"));
      }
      frame.Set(out, *rv);
    }
    return absl::OkStatus();
  }

  static absl::Status BindAttributes(Graph& body, const Node& call, const Function& fn) {
    for (const auto& n : body.nodes()) {
      std::vector<Attribute> bound;
      for (Attribute& a : n->attributes) {
        if (a.ref_attr_name.empty()) {
          bound.push_back(a);
          continue;
        }
        const Attribute* src = call.FindAttr(a.ref_attr_name);
        if (src == nullptr) {
          for (const Attribute& d : fn.attribute_defaults) {
            if (d.name == a.ref_attr_name) src = &d;
          }
        }
        if (src == nullptr) continue;  // unbound optional attribute: the op's default applies
        Attribute b = *src;
        b.name = a.name;
        b.ref_attr_name.clear();
        bound.push_back(std::move(b));
      }
      n->attributes = std::move(bound);
      for (Graph* g : n->Subgraphs()) AIC_RETURN_IF_ERROR(BindAttributes(*g, call, fn));
    }
    return absl::OkStatus();
  }

  const Model& model_;
  const ReferenceRunOptions* options_;
};

// The bodies of one node run outside the reference executor: the given outer
// values form the root frame the bodies' frames chain to.
class ScopedSubgraphRunner : public SubgraphRunner {
 public:
  ScopedSubgraphRunner(const Model& model, std::vector<std::pair<const Value*, RuntimeValue>> outer)
      : root_(nullptr), interp_(model, nullptr) {
    for (auto& [v, rv] : outer) root_.Set(v, std::move(rv));
    interp_.current_frame_ = &root_;
  }
  absl::StatusOr<std::vector<RuntimeValue>> RunSubgraph(
      const Graph& body, const std::vector<RuntimeValue>& inputs) override {
    return interp_.RunSubgraph(body, inputs);
  }

 private:
  Frame root_;
  Interpreter interp_;
};

}  // namespace

std::unique_ptr<SubgraphRunner> MakeReferenceSubgraphRunner(
    const Model& model, std::vector<std::pair<const Value*, RuntimeValue>> outer_scope) {
  return std::make_unique<ScopedSubgraphRunner>(model, std::move(outer_scope));
}

absl::StatusOr<std::vector<RuntimeValue>> RunReferenceFunctionCall(const Model& model, const Node& call,
                                                                   const std::vector<const RuntimeValue*>& inputs) {
  Frame frame(nullptr);
  for (size_t i = 0; i < inputs.size() && i < call.num_inputs(); ++i) {
    if (inputs[i] != nullptr && call.input(i) != nullptr) frame.Set(call.input(i), *inputs[i]);
  }
  Interpreter interp(model, nullptr);
  interp.current_frame_ = &frame;
  AIC_RETURN_IF_ERROR(interp.RunCall(call, frame));
  std::vector<RuntimeValue> outs(call.num_outputs());
  for (size_t i = 0; i < call.num_outputs(); ++i) {
    if (const Value* v = call.output(i)) {
      if (const RuntimeValue* rv = frame.Find(v)) outs[i] = *rv;
    }
  }
  return outs;
}

ReferenceExecutor::ReferenceExecutor(const Model& model) : model_(model) {}

absl::Status ReferenceExecutor::CheckSupported() const {
  for (const auto& n : model_.graph->nodes()) {
    int64_t opset = model_.OpsetFor(n->domain);
    const OpDef* def = OpRegistry::Global().Find(n->domain, n->op_type, opset);
    if ((def == nullptr || !def->kernel) && model_.FindFunction(n->domain, n->op_type) == nullptr) {
      return absl::UnimplementedError(absl::StrCat(
          "no reference kernel for op ", OpName(*n), " (domain '",
          n->domain.empty() ? "ai.onnx" : n->domain, "', opset ", opset, ") at node ",
          n->Describe()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RuntimeValue>> ReferenceExecutor::Run(
    const std::map<std::string, RuntimeValue>& feeds, const ReferenceRunOptions& options) const {
  const Graph& graph = *model_.graph;
  Frame frame(nullptr);
  for (const Value* in : graph.inputs()) {
    auto it = feeds.find(in->name());
    if (it != feeds.end()) {
      frame.Set(in, it->second);
    } else if (!in->is_initializer()) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", in->name(), "' not fed"));
    }
  }
  for (const auto& [name, value] : feeds) {
    bool known = false;
    for (const Value* in : graph.inputs()) known |= in->name() == name;
    if (!known) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a graph input"));
  }
  Interpreter interp(model_, &options);
  interp.current_frame_ = &frame;
  AIC_RETURN_IF_ERROR(interp.RunGraph(graph, frame, /*top_level=*/true));
  std::vector<RuntimeValue> outs;
  for (const Value* v : graph.outputs()) {
    const RuntimeValue* rv = frame.Find(v);
    if (rv == nullptr) {
      return absl::InternalError(absl::StrCat("graph output '", v->name(), "' was not computed"));
    }
    outs.push_back(*rv);
  }
  return outs;
}

}  // namespace aic
