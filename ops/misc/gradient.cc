// Gradient ("ai.onnx.preview.training"): dy/dx for the tensors named by the
// `xs` attribute, of the tensor named `y` in the same graph, at the values fed
// as the node's inputs. The reference kernel re-evaluates the forward path
// from xs (and graph initializers) to y with the registered kernels, then
// runs reverse-mode differentiation over it. Only the elementwise arithmetic
// ops below have derivative rules; anything else on the path is Unimplemented.
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "graph/topo.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/broadcast.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

constexpr char kTrainingDomain[] = "ai.onnx.preview.training";

const std::set<std::string>& DifferentiableOps() {
  static const std::set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Neg", "Identity"};
  return kOps;
}

using Grads = std::map<const Value*, std::vector<double>>;

// Accumulates the input gradients of one elementwise node from its output's
// gradient `g`; broadcast inputs sum the gradient over the axes they span.
void Backprop(const Node& node, const std::vector<Tensor>& in, const Tensor& out,
              const std::vector<double>& g, Grads& grads) {
  const std::string& op = node.op_type;
  std::vector<std::vector<int64_t>> in_dims;
  std::vector<std::vector<double>> vals;
  for (const Tensor& t : in) {
    in_dims.push_back(t.dims());
    vals.push_back(ToDoubles(t));
  }
  std::vector<std::vector<double>*> targets;
  for (size_t k = 0; k < in.size(); ++k) {
    std::vector<double>& tg = grads[node.input(k)];
    if (tg.empty()) tg.assign(vals[k].size(), 0.0);
    targets.push_back(&tg);
  }
  BroadcastIterator it(out.dims(), in_dims);
  for (int64_t o = 0; o < it.size(); ++o, it.Next()) {
    const double go = g[static_cast<size_t>(o)];
    const size_t ia = static_cast<size_t>(it.offset(0));
    if (op == "Neg") {
      (*targets[0])[ia] -= go;
    } else if (op == "Identity") {
      (*targets[0])[ia] += go;
    } else {
      const size_t ib = static_cast<size_t>(it.offset(1));
      const double a = vals[0][ia], b = vals[1][ib];
      if (op == "Add") {
        (*targets[0])[ia] += go;
        (*targets[1])[ib] += go;
      } else if (op == "Sub") {
        (*targets[0])[ia] += go;
        (*targets[1])[ib] -= go;
      } else if (op == "Mul") {
        (*targets[0])[ia] += go * b;
        (*targets[1])[ib] += go * a;
      } else if (op == "Div") {
        (*targets[0])[ia] += go / b;
        (*targets[1])[ib] -= go * a / (b * b);
      }
    }
  }
}

absl::Status GradientKernel(KernelContext& ctx) {
  const Node& self = ctx.node();
  const Graph* graph = self.owner();
  const std::vector<std::string> xs = self.FindAttr("xs") ? self.FindAttr("xs")->strings
                                                          : std::vector<std::string>{};
  const std::string y_name = self.GetString("y", "");
  if (xs.empty() || y_name.empty()) return ctx.Error("attributes xs and y are required");
  // Known values: the fed xs/zs (the node's inputs) and the initializers.
  std::map<const Value*, Tensor> env;
  for (const Value* v : graph->initializers()) env[v] = *v->initializer();
  for (size_t i = 0; i < self.num_inputs(); ++i) {
    if (self.input(i) != nullptr && ctx.has_input(i) && ctx.input_value(i).is_tensor()) {
      env[self.input(i)] = ctx.input(i);
    }
  }
  AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(*graph));
  std::vector<const Node*> path;  // evaluated nodes, in forward order
  for (const Node* n : order) {
    if (n == &self || !DifferentiableOps().count(n->op_type) || !n->domain.empty()) continue;
    std::vector<RuntimeValue> vals;
    bool ready = n->num_inputs() > 0;
    for (const Value* v : n->inputs()) {
      auto it = v ? env.find(v) : env.end();
      if (it == env.end()) {
        ready = false;
        break;
      }
      vals.emplace_back(it->second);
    }
    if (!ready) continue;
    const OpDef* def = OpRegistry::Global().FindAnyVersion("", n->op_type);
    if (def == nullptr || !def->kernel) return ctx.Unimplemented("no kernel for ", n->op_type);
    std::vector<const RuntimeValue*> ptrs;
    for (const RuntimeValue& v : vals) ptrs.push_back(&v);
    KernelContext kc(*n, def->since_version, ptrs);
    AIC_RETURN_IF_ERROR(def->kernel(kc));
    if (n->output(0) != nullptr && kc.outputs()[0].is_tensor()) env[n->output(0)] = kc.outputs()[0].tensor;
    path.push_back(n);
  }
  const Value* y = graph->LookupValue(y_name);
  if (y == nullptr || !env.count(y)) {
    return ctx.Unimplemented("y '", y_name, "' is not computable from xs with Add/Sub/Mul/Div/Neg/Identity");
  }
  Grads grads;
  grads[y] = std::vector<double>(static_cast<size_t>(env[y].num_elements()), 1.0);
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const Node& n = **it;
    auto g = grads.find(n.output(0));
    if (g == grads.end()) continue;
    std::vector<Tensor> in;
    for (const Value* v : n.inputs()) in.push_back(env[v]);
    const std::vector<double> go = g->second;  // copy: Backprop may rehash grads
    Backprop(n, in, env[n.output(0)], go, grads);
  }
  for (size_t i = 0; i < xs.size() && i < ctx.num_outputs(); ++i) {
    const Value* x = graph->LookupValue(xs[i]);
    if (x == nullptr || !env.count(x)) return ctx.Error("xs '", xs[i], "' has no value");
    const Tensor& xt = env[x];
    auto g = grads.find(x);
    std::vector<double> gv = g != grads.end() ? g->second
                                              : std::vector<double>(static_cast<size_t>(xt.num_elements()), 0.0);
    ctx.set_output(i, FromDoubles(gv, xt.dims(), xt.dtype()));
  }
  return absl::OkStatus();
}

// dy/dx_i has x_i's type; the xs are the node's first inputs.
absl::Status InferGradient(OpContext& ctx) {
  for (size_t i = 0; i < ctx.num_outputs(); ++i) {
    if (i < ctx.num_inputs()) ctx.set_output_type(i, ctx.input_type(i));
  }
  return absl::OkStatus();
}

Traits GradientTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "Gradient";
  t.meaning = absl::StrCat("∂", ctx.node().GetString("y", "y"), "/∂xs");
  t.linearity = Linearity::kNonlinear;
  t.removable_when = "inference graphs (training-only op)";
  return t;
}

}  // namespace

void RegisterGradientOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = kTrainingDomain,
      .op_type = "Gradient",
      .since_version = 1,
      .infer = InferGradient,
      .traits = GradientTraits,
      .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
      .kernel = GradientKernel,
      .nondeterministic = true,
  });
}

}  // namespace aic
