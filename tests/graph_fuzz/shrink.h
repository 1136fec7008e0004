// Reduces a failing model to a small one that still fails the same way:
// keep one graph output, cut a node (its outputs become graph inputs fed with
// the values they had), bypass a node (its output replaced by an input of
// the same type), halve a graph input's dim (where the model still infers),
// turn a graph input into a constant of its feed; after each
// step what nobody reads is removed. Greedy, restarted after every success
// (delta debugging over nodes, as C-Reduce and Polygraphy's `debug reduce`
// do it).
#pragma once

#include <functional>
#include <memory>

#include "exec/common/executor.h"
#include "graph/model.h"

namespace aic::graph_fuzz {

// Whether the candidate still shows the finding (the driver runs the oracle
// in a child process, so a candidate that crashes is judged too).
using StillFails = std::function<bool(const Model& model, const exec::Feeds& feeds)>;

struct ShrinkResult {
  std::unique_ptr<Model> model;
  exec::Feeds feeds;
  int attempts = 0;  // candidates tried
};

ShrinkResult Shrink(const Model& model, const exec::Feeds& feeds, const StillFails& still_fails,
                    int max_attempts = 300);

// Removes nodes nobody reads, then unread initializers and graph inputs (and
// their feeds).
void RemoveUnread(Model& model, exec::Feeds& feeds);

}  // namespace aic::graph_fuzz
