#include "analysis/linear_sites.h"

#include <algorithm>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/topo.h"
#include "rewrite/rules/rule_util.h"

namespace aic::analysis {

namespace {

bool IsFloatWeight(const Tensor* t) {
  return t != nullptr && (t->dtype() == DType::kFloat || t->dtype() == DType::kDouble);
}

// How many node inputs (implicit subgraph reads included) read `v`.
int64_t ReadCount(const Graph& g, const Value* v) {
  return static_cast<int64_t>(UsesOf(g, v).size());
}

// A Gemm's C as one value per output: absent, or a constant of `out`
// elements laid along the last axis ([out] or [1, out]), or one value.
bool GemmBiasPerOutput(const Node& n, int64_t out) {
  if (!n.has_input(2)) return true;
  const Tensor* c = n.input(2)->initializer();
  if (!IsFloatWeight(c)) return false;
  if (c->num_elements() == 1) return true;
  if (c->num_elements() != out) return false;
  return c->rank() == 1 || (c->rank() == 2 && c->dim(0) == 1);
}

void CollectGraphs(Graph& g, const std::string& key, std::vector<ModelGraph>& out) {
  out.push_back({key, &g});
  for (const auto& n : g.nodes()) {
    std::vector<Graph*> bodies = n->Subgraphs();
    if (bodies.empty()) continue;
    std::string owner;
    for (const Value* v : n->outputs()) {
      if (v != nullptr) {
        owner = v->name();
        break;
      }
    }
    for (size_t i = 0; i < bodies.size(); ++i) CollectGraphs(*bodies[i], absl::StrCat(owner, "#", i), out);
  }
}

bool NameTaken(const Graph& g, const std::string& name) {
  if (g.FindValue(name) != nullptr) return true;
  for (const auto& n : g.nodes()) {
    for (const Graph* body : n->Subgraphs()) {
      if (NameTaken(*body, name)) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<ModelGraph> GraphsOf(const Model& model) {
  std::vector<ModelGraph> out;
  CollectGraphs(*model.graph, "", out);
  return out;
}

Graph* GraphWithKey(const Model& model, const std::string& key) {
  for (const ModelGraph& mg : GraphsOf(model)) {
    if (mg.key == key) return mg.graph;
  }
  return nullptr;
}

std::string GraphLabel(const Graph& g) {
  const Graph* parent = g.parent();
  if (parent == nullptr) return "";
  for (const auto& n : parent->nodes()) {
    for (const Attribute& a : n->attributes) {
      bool holds = a.type == AttrType::kGraph && a.g.get() == &g;
      for (size_t i = 0; i < a.graphs.size() && !holds; ++i) holds = a.graphs[i].get() == &g;
      if (!holds) continue;
      std::string outer = GraphLabel(*parent);
      std::string name = n->name.empty() ? absl::StrCat("#", &n - parent->nodes().data()) : absl::StrCat("'", n->name, "'");
      return absl::StrCat(outer, outer.empty() ? "" : " / ", n->op_type, " ", name, " ", a.name);
    }
  }
  return "a subgraph";
}

std::string WherePrefix(const Graph& g) {
  std::string label = GraphLabel(g);
  return label.empty() ? "" : absl::StrCat("in ", label, ": ");
}

std::string DescribeSite(const Graph& g, const LinearSite& s) {
  const Node& n = *g.nodes()[static_cast<size_t>(s.node)];
  std::string name = n.name.empty() ? absl::StrCat("#", s.node) : absl::StrCat("'", n.name, "'");
  std::string kernel;
  if (s.kind == LinearKind::kConv && !s.pointwise) {
    std::vector<std::string> d;
    for (int64_t k : s.kernel) d.push_back(std::to_string(k));
    kernel = absl::StrCat(" ", absl::StrJoin(d, "×"));
  }
  return absl::StrCat(n.op_type, " ", name, " (", s.in_channels, " → ", s.out, kernel, ")");
}

std::vector<Use> UsesOf(const Graph& g, const Value* v) {
  std::vector<Use> uses;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = *g.nodes()[i];
    for (size_t k = 0; k < n.num_inputs(); ++k) {
      if (n.input(k) == v) uses.push_back({static_cast<int>(i), k});
    }
    if (!n.Subgraphs().empty()) {
      for (const Value* r : n.ImplicitInputs()) {
        if (r == v) uses.push_back({static_cast<int>(i), std::numeric_limits<size_t>::max()});
      }
    }
  }
  return uses;
}

bool IsGraphOutput(const Graph& g, const Value* v) {
  return std::find(g.outputs().begin(), g.outputs().end(), v) != g.outputs().end();
}

std::optional<LinearSite> SiteAt(const Graph& g, int index) {
  const Node& n = *g.nodes()[static_cast<size_t>(index)];
  if (!n.domain.empty() || n.num_outputs() < 1 || n.output(0) == nullptr) return std::nullopt;
  if (!n.has_input(0) || !n.has_input(1)) return std::nullopt;
  const Tensor* w = n.input(1)->initializer();
  // A graph input with an initializer is a default the caller may override, not a weight.
  if (!IsFloatWeight(w) || n.input(1)->is_graph_input() || n.input(1)->owner() != &g ||
      ReadCount(g, n.input(1)) != 1) {
    return std::nullopt;
  }
  if (n.input(0)->dtype() != DType::kUndefined && n.input(0)->dtype() != w->dtype()) return std::nullopt;
  LinearSite s;
  s.node = index;
  s.weight = n.input(1);
  if (n.op_type == "MatMul") {
    if (w->rank() != 2 || (n.input(0)->shape().has_rank() && n.input(0)->shape().rank() < 2)) return std::nullopt;
    s.kind = LinearKind::kMatMul;
    s.in = s.in_channels = w->dim(0);
    s.out = w->dim(1);
    s.pointwise = true;
  } else if (n.op_type == "Gemm") {
    if (w->rank() != 2) return std::nullopt;
    bool trans_b = n.GetInt("transB", 0) != 0;
    s.kind = LinearKind::kGemm;
    s.in = s.in_channels = trans_b ? w->dim(1) : w->dim(0);
    s.out = trans_b ? w->dim(0) : w->dim(1);
    s.pointwise = true;
    if (!GemmBiasPerOutput(n, s.out)) return std::nullopt;
  } else if (n.op_type == "Conv") {
    if (w->rank() < 3 || n.GetInt("group", 1) != 1) return std::nullopt;
    if (n.has_input(2) && !IsFloatWeight(n.input(2)->initializer())) return std::nullopt;
    s.kind = LinearKind::kConv;
    s.out = w->dim(0);
    s.in_channels = w->dim(1);
    s.in = w->num_elements() / std::max<int64_t>(1, s.out);
    s.kernel.assign(w->dims().begin() + 2, w->dims().end());
    bool ones = std::all_of(s.kernel.begin(), s.kernel.end(), [](int64_t k) { return k == 1; });
    std::vector<int64_t> strides = n.GetInts("strides"), pads = n.GetInts("pads");
    bool unit_strides = std::all_of(strides.begin(), strides.end(), [](int64_t k) { return k == 1; });
    bool no_pads = std::all_of(pads.begin(), pads.end(), [](int64_t k) { return k == 0; });
    std::string auto_pad = n.GetString("auto_pad", "NOTSET");
    s.pointwise = ones && unit_strides && no_pads && (auto_pad == "NOTSET" || auto_pad == "VALID");
  } else {
    return std::nullopt;
  }
  if (s.out <= 0 || s.in <= 0) return std::nullopt;
  return s;
}

std::vector<LinearSite> FindLinearSites(const Graph& g) {
  std::vector<LinearSite> sites;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    if (auto s = SiteAt(g, static_cast<int>(i))) sites.push_back(*s);
  }
  return sites;
}

std::optional<LinearSite> SiteReading(const Graph& g, const std::string& weight) {
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const Node& n = *g.nodes()[i];
    if (n.num_inputs() > 1 && n.input(1) != nullptr && n.input(1)->name() == weight) return SiteAt(g, static_cast<int>(i));
  }
  return std::nullopt;
}

std::vector<double> SiteMatrix(const Graph& g, const LinearSite& s) {
  const Node& n = *g.nodes()[static_cast<size_t>(s.node)];
  std::vector<double> w = rewrite::ToDoubles(*s.weight->initializer());
  if (s.kind == LinearKind::kConv) return w;  // [out, Cin, kh, kw] is [out, in] row-major
  bool transposed = s.kind == LinearKind::kMatMul || n.GetInt("transB", 0) == 0;  // stored [in, out]
  double alpha = s.kind == LinearKind::kGemm ? n.GetFloat("alpha", 1.0f) : 1.0;
  std::vector<double> m(static_cast<size_t>(s.out * s.in));
  for (int64_t o = 0; o < s.out; ++o) {
    for (int64_t i = 0; i < s.in; ++i) {
      m[o * s.in + i] = alpha * (transposed ? w[i * s.out + o] : w[o * s.in + i]);
    }
  }
  return m;
}

std::vector<double> SiteBias(const Graph& g, const LinearSite& s) {
  const Node& n = *g.nodes()[static_cast<size_t>(s.node)];
  if (s.kind == LinearKind::kMatMul || !n.has_input(2)) return {};
  std::vector<double> b = rewrite::ToDoubles(*n.input(2)->initializer());
  double beta = s.kind == LinearKind::kGemm ? n.GetFloat("beta", 1.0f) : 1.0;
  if (b.size() == 1) b.assign(static_cast<size_t>(s.out), b[0]);
  for (double& v : b) v *= beta;
  return b;
}

Value* AddInitializer(Graph& g, const std::string& base, Tensor t) {
  Value* v = AddIntermediate(g, base, t.dtype());
  v->set_type(TypeInfo::Tensor(t.dtype(), Shape::FromValues(t.dims())));
  g.SetInitializer(v, std::move(t));
  return v;
}

Value* AddWeight(Graph& g, const std::string& base, const std::vector<double>& values, DType dtype,
                 std::vector<int64_t> dims) {
  return AddInitializer(g, base, rewrite::FromDoubles(values, dtype, std::move(dims)));
}

Value* AddIntermediate(Graph& g, const std::string& base, DType dtype) {
  const Graph* root = &g;
  while (root->parent() != nullptr) root = root->parent();
  std::string name = base;
  for (int k = 1; NameTaken(*root, name); ++k) name = absl::StrCat(base, "_", k);
  Value* v = g.AddValue(name, TypeInfo::Tensor(dtype, Shape::UnknownRank()));
  return v;
}

absl::Status FinishEdit(Graph& g, const std::vector<int>& removed, const std::vector<Value*>& reshaped) {
  std::set<const Node*> gone;
  std::vector<Value*> read;  // by the removed nodes: weights that may now be unread
  for (int i : removed) {
    const Node* n = g.nodes()[static_cast<size_t>(i)].get();
    gone.insert(n);
    for (Value* in : n->inputs()) {
      if (in != nullptr && in->is_initializer()) read.push_back(in);
    }
  }
  // Why keep the output values: the replacement nodes were given them, and
  // RemoveNodesIf clears a value's producer only when it is still the node removed.
  g.RemoveNodesIf([&](const Node& n) { return gone.count(&n) > 0; });
  // A value produced by a removed node and given to its replacement is
  // producerless now (a node claims an output only when it has no producer):
  // the replacement claims it.
  for (const auto& n : g.nodes()) {
    for (size_t i = 0; i < n->num_outputs(); ++i) {
      Value* v = n->output(i);
      if (v != nullptr && v->producer() == nullptr) n->set_output(i, v);
    }
  }
  for (Value* w : read) {
    if (w->is_initializer() && !w->is_graph_input() && !IsGraphOutput(g, w) && UsesOf(g, w).empty()) {
      g.ClearInitializer(w);
    }
  }
  for (Value* v : reshaped) v->set_type(TypeInfo::Tensor(v->dtype(), Shape::UnknownRank()));
  if (absl::Status s = SortTopologically(g); !s.ok()) {
    return absl::InternalError(absl::StrCat("the edit left the graph without a topological order: ", s.message()));
  }
  for (const auto& n : g.nodes()) {
    for (const Value* in : n->inputs()) {
      if (in != nullptr && in->producer() == nullptr && !in->is_initializer() && !in->is_graph_input() &&
          g.LookupValue(in->name()) == in && in->owner() == &g) {
        return absl::InternalError(absl::StrCat("the edit left ", in->name(), " without a producer"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace aic::analysis
