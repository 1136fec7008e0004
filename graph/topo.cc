#include "graph/topo.h"

#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"

namespace aic {

namespace {

// The node of `graph` that `v` depends on: its producer if that lives in this
// graph. A value produced inside a nested graph cannot be referenced here.
Node* LocalProducer(const Graph& graph, const Value* v) {
  if (v == nullptr || v->producer() == nullptr) return nullptr;
  return v->producer()->owner() == &graph ? v->producer() : nullptr;
}

}  // namespace

absl::StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph) {
  const auto& nodes = graph.nodes();
  absl::flat_hash_map<const Node*, size_t> index;
  index.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) index[nodes[i].get()] = i;

  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<size_t>> dependents(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = *nodes[i];
    auto add_dep = [&](const Value* v) {
      Node* p = LocalProducer(graph, v);
      if (p == nullptr) return;
      auto it = index.find(p);
      if (it == index.end()) return;
      ++pending[i];
      dependents[it->second].push_back(i);
    };
    for (const Value* v : n.inputs()) add_dep(v);
    for (const Value* v : n.ImplicitInputs()) add_dep(v);
  }

  // Min-heap on original index keeps the order stable.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<Node*> order;
  order.reserve(nodes.size());
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(nodes[i].get());
    for (size_t d : dependents[i]) {
      if (--pending[d] == 0) ready.push(d);
    }
  }
  if (order.size() != nodes.size()) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (pending[i] > 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph has a cycle through node ", nodes[i]->Describe()));
      }
    }
  }
  return order;
}

absl::Status SortTopologically(Graph& graph) {
  AIC_ASSIGN_OR_RETURN(std::vector<Node*> order, TopologicalOrder(graph));
  graph.SetNodeOrder(order);
  return absl::OkStatus();
}

}  // namespace aic
