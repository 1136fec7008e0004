#include "graph/verify.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "graph/topo.h"

namespace aic {

namespace {

bool IsDefined(const Value* v) {
  return v->producer() != nullptr || v->is_graph_input() || v->is_initializer();
}

// True when `v` belongs to `graph` or to a graph enclosing it.
bool InScope(const Graph& graph, const Value* v) {
  for (const Graph* g = &graph; g != nullptr; g = g->parent()) {
    if (v->owner() == g) return true;
  }
  return false;
}

absl::Status VerifyGraph(const Graph& graph) {
  absl::flat_hash_set<const Value*> produced;
  for (const auto& node : graph.nodes()) {
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      const Value* v = node->output(i);
      if (v == nullptr) continue;
      if (v->producer() != node.get() || v->producer_output() != static_cast<int>(i) ||
          !produced.insert(v).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "value '", v->name(), "' has two producers: node ", node->Describe(), " and ",
            v->producer() ? v->producer()->Describe() : std::string("a graph input")));
      }
      if (v->is_graph_input() || v->is_initializer()) {
        return absl::InvalidArgumentError(
            absl::StrCat("value '", v->name(), "' is produced by node ", node->Describe(),
                         " but is also a graph ", v->is_graph_input() ? "input" : "initializer"));
      }
    }
  }
  for (const auto& node : graph.nodes()) {
    for (size_t i = 0; i < node->num_inputs(); ++i) {
      const Value* v = node->input(i);
      if (v == nullptr) continue;
      if (!IsDefined(v) || !InScope(graph, v)) {
        return absl::InvalidArgumentError(absl::StrCat("node ", node->Describe(), " input ", i,
                                                       " '", v->name(), "' is not defined"));
      }
    }
    for (Graph* sub : node->Subgraphs()) {
      absl::Status s = VerifyGraph(*sub);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("in subgraph of node ", node->Describe(), ": ", s.message()));
      }
    }
  }
  for (const Value* v : graph.outputs()) {
    if (v == nullptr || !IsDefined(v) || !InScope(graph, v)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "graph output '", v ? v->name() : std::string(), "' is not produced by any node"));
    }
  }
  return TopologicalOrder(graph).status();
}

}  // namespace

absl::Status Verify(const Graph& graph) { return VerifyGraph(graph); }

}  // namespace aic
