// Deep copy of a graph (nodes, values, initializers, nested subgraphs).
#pragma once

#include <memory>

#include "absl/container/flat_hash_map.h"
#include "graph/graph.h"
#include "graph/model.h"

namespace aic {

// Copies `src` as a graph whose parent is `parent`. Reads of values outside
// `src` (outer scope) are remapped through `outer`, when given and found,
// else kept pointing at the original value.
std::unique_ptr<Graph> CloneGraph(const Graph& src, Graph* parent,
                                  const absl::flat_hash_map<const Value*, Value*>* outer = nullptr);

// A model with the same metadata and a deep copy of its main graph (local
// functions' bodies are shared: nothing rewrites them in place).
std::unique_ptr<Model> CloneModel(const Model& src);

}  // namespace aic
