// Nested plans for control-flow bodies (see body_plans.h): building a body as
// a standalone model, the per-signature plan cache, and the runner the
// control-flow kernels call.
#include "exec/cpu/body_plans.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "exec/reference/executor.h"
#include "graph/clone.h"

namespace aic::cpu {

namespace {

// Bodies whose inputs change shape at every iteration (a growing carried
// value) would compile without end: past this many signatures a body runs on
// the reference interpreter.
constexpr int kMaxSignaturesPerBody = 4;

bool Inside(const Graph* g, const Graph* root) {
  for (; g != nullptr; g = g->parent()) {
    if (g == root) return true;
  }
  return false;
}

void AppendSignature(std::string* key, const RuntimeValue& v) {
  absl::StrAppend(key, DTypeName(v.tensor.dtype()), DimsToString(v.tensor.dims()), ";");
}

// Points every read of a value outside `root` (in `g` and the graphs nested
// in it, graph outputs included) at its replacement in `remap`; false when a
// read has none.
bool Rewire(Graph& g, const Graph* root, const absl::flat_hash_map<const Value*, Value*>& remap) {
  auto replace = [&](Value* v) -> Value* {
    if (v == nullptr || Inside(v->owner(), root)) return v;
    auto it = remap.find(v);
    return it == remap.end() ? nullptr : it->second;
  };
  for (const auto& n : g.nodes()) {
    for (size_t i = 0; i < n->num_inputs(); ++i) {
      Value* v = n->input(i);
      if (v == nullptr) continue;
      Value* r = replace(v);
      if (r == nullptr) return false;
      if (r != v) n->set_input(i, r);
    }
    for (Graph* sub : n->Subgraphs()) {
      if (!Rewire(*sub, root, remap)) return false;
    }
  }
  std::vector<Value*> outs = g.outputs();
  for (Value*& v : outs) {
    v = replace(v);
    if (v == nullptr) return false;
  }
  g.set_outputs(std::move(outs));
  return true;
}

// `body` as a model of its own for these inputs: formal inputs typed by the
// values given, outer reads turned into inputs (or initializers for constants).
std::unique_ptr<Model> StandaloneBody(const Model& enclosing, const Graph& body, const std::vector<RuntimeValue>& inputs,
                                      const std::vector<BodyPlans::Outer>& outer) {
  auto m = std::make_unique<Model>();
  m->ir_version = enclosing.ir_version;
  m->opset_imports = enclosing.opset_imports;
  m->functions = enclosing.functions;
  m->graph = CloneGraph(body, nullptr);
  Graph& g = *m->graph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i].tensor;
    g.inputs()[i]->set_type(TypeInfo::Tensor(t.dtype(), Shape::FromValues(t.dims())));
  }
  absl::flat_hash_map<const Value*, Value*> remap;
  for (const BodyPlans::Outer& o : outer) {
    const Tensor& t = o.current.tensor;
    Value* v = g.AddValue(o.value->name(), TypeInfo::Tensor(t.dtype(), Shape::FromValues(t.dims())));
    if (o.constant) {
      g.SetInitializer(v, t);
    } else {
      g.AddInput(v);
    }
    remap[o.value] = v;
  }
  if (!Rewire(g, &g, remap)) return nullptr;
  return m;
}

}  // namespace

class CompiledBodyRunner : public SubgraphRunner {
 public:
  CompiledBodyRunner(BodyPlans& plans, const Plan& enclosing, std::vector<BodyPlans::Outer> outer)
      : plans_(plans), enclosing_(enclosing), outer_(std::move(outer)) {}

  absl::StatusOr<std::vector<RuntimeValue>> RunSubgraph(const Graph& body,
                                                        const std::vector<RuntimeValue>& inputs) override {
    if (Plan* plan = plans_.PlanFor(enclosing_, body, inputs, outer_)) {
      std::map<std::string, RuntimeValue> feeds;
      for (size_t i = 0; i < inputs.size(); ++i) feeds[body.inputs()[i]->name()] = inputs[i];
      for (const BodyPlans::Outer& o : outer_) {
        if (!o.constant) feeds[o.value->name()] = o.current;
      }
      auto outs = Run(*plan, feeds);
      if (outs.ok()) {
        ++plans_.compiled_runs_;
        return outs;
      }
      // The reference interpreter decides: it runs the body or reports the error as the reference executor would.
      plans_.Drop(body, *plan);
    }
    ++plans_.reference_runs_;
    if (reference_ == nullptr) {
      std::vector<std::pair<const Value*, RuntimeValue>> scope;
      for (const BodyPlans::Outer& o : outer_) scope.emplace_back(o.value, o.current);
      reference_ = MakeReferenceSubgraphRunner(*enclosing_.model, std::move(scope));
    }
    return reference_->RunSubgraph(body, inputs);
  }

 private:
  BodyPlans& plans_;
  const Plan& enclosing_;
  std::vector<BodyPlans::Outer> outer_;
  std::unique_ptr<SubgraphRunner> reference_;
};

void BodyPlans::Drop(const Graph& body, const Plan& plan) {
  for (auto& [key, p] : plans_) {
    if (key.first == &body && p.get() == &plan) p.reset();
  }
}

std::unique_ptr<SubgraphRunner> BodyPlans::Runner(const Plan& plan, std::vector<Outer> outer) {
  return std::make_unique<CompiledBodyRunner>(*this, plan, std::move(outer));
}

Plan* BodyPlans::PlanFor(const Plan& enclosing, const Graph& body, const std::vector<RuntimeValue>& inputs,
                         const std::vector<Outer>& outer) {
  if (inputs.size() != body.inputs().size()) return nullptr;
  std::string key;
  for (const RuntimeValue& v : inputs) {
    if (!v.is_tensor()) return nullptr;
    AppendSignature(&key, v);
  }
  for (const Outer& o : outer) {
    if (!o.current.is_tensor()) return nullptr;
    if (!o.constant) AppendSignature(&key, o.current);
  }
  auto it = plans_.find({&body, key});
  if (it != plans_.end()) return it->second.get();
  std::unique_ptr<Plan>& slot = plans_[{&body, key}];
  if (++signatures_[&body] > kMaxSignaturesPerBody) return nullptr;
  std::unique_ptr<Model> model = StandaloneBody(*enclosing.model, body, inputs, outer);
  if (model == nullptr) return nullptr;
  CpuOptions options;
  options.threads = enclosing.threads;
  auto plan = Compile(*model, {}, options);
  if (plan.ok()) slot = *std::move(plan);
  return slot.get();
}

}  // namespace aic::cpu
