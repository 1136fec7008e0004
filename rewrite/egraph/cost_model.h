// The cost model extraction minimizes: what one e-node costs on its own, in
// element-equivalents (a per-kernel overhead, plus MACs and bytes moved from
// the op's OpDef cost function when it has one). Leaves and projections are
// free, and a class computed from weights only costs (almost) nothing, so
// foldable subgraphs fold. Extraction (extract.cc) adds these up over what a
// choice reads.
#pragma once

#include "rewrite/egraph/egraph.h"

namespace aic::rewrite {

// Reshape, Flatten, Squeeze and Unsqueeze of the default domain: views in
// every runtime (they move no bytes), and what reshape rules compose.
bool IsReshapeLike(const Node& op);

// The cost of e-node `n` of class `cls`, not counting its children.
double NodeCost(const EGraph& eg, const ENode& n, ClassId cls);

}  // namespace aic::rewrite
