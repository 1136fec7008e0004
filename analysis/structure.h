// Where information goes through the graph: collapse points, chains of
// layers that widen or narrow the features, expand-then-collapse patterns,
// pairs of layers with no nonlinearity between them (merge candidates), and
// the peak of live activation memory over the execution order.
#pragma once

#include "analysis/logical_graph.h"
#include "analysis/report.h"

namespace aic::analysis {

// The nearest Linear/Conv layer upstream of node `i`, following single data
// inputs back (a join, e.g. a residual Add, stops the walk); -1 when none.
int UpstreamLayer(const LogicalGraph& lg, int i);

// The axis along which node `i`'s output holds units (features/channels):
// channels (1) below a Conv, the last axis below a Linear or otherwise.
int64_t UnitAxis(const LogicalGraph& lg, int i, int64_t rank);

// Fills report.collapse_points, chains, expand_collapse and merges.
void FindStructure(const LogicalGraph& lg, Report& report);

// Peak bytes of activations alive at once when the logical nodes run in
// order (graph inputs included, weights not; a group's largest inner value
// counts while it runs); nullopt when a shape is not
// static. `at_node` receives the node at which the peak is first reached.
std::optional<int64_t> PeakActivationBytes(const Model& model, const LogicalGraph& lg,
                                           int* at_node);

}  // namespace aic::analysis
