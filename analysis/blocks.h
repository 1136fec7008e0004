// Repeated blocks of the logical graph (transformer layers, ResNet
// bottlenecks, Swin blocks): runs of consecutive, structurally identical
// pieces of the report's node order, which the HTML report draws collapsed
// (render_html.cc). Two pieces are identical when node by node they have the
// same logical op, the same number of ONNX nodes, the same weight shape and
// the same data edges: an edge inside a piece must join the same positions
// in the other, an edge from outside must come from as far back (layer k
// reads layer k-1), or from the same node (a mask all layers read), or from
// before the run in the first repeat (layer 0 reads the stem).
// The structure decides what repeats; the ONNX nodes' names (exporters'
// "/encoder/layer.3/attention/...", "layers.0.blocks.1...") only choose
// among equally good runs (one starting where a name prefix starts) and
// label the run, so names that say nothing (PaddleOCR's p2o.*) still work.
#pragma once

#include <string>
#include <vector>

#include "analysis/report.h"

namespace aic::analysis {

struct RepeatedBlock {
  int start = 0;  // the first node of the first repeat
  int size = 0;   // nodes per repeat
  int count = 0;  // repeats, >= 2
  std::string label;  // "encoder/layer.*", or its first and last ops without names
  int end() const { return start + size * count; }
};

struct BlockOptions {
  int min_size = 3;    // nodes per repeat: smaller repeats are plumbing (Split, Concat) not layers
  int min_hidden = 6;  // nodes a collapse must hide, (count - 1) · size, to be worth a box
  int max_blocks = 12;  // the largest runs only: the page lays out one drawing per block
};

// The outermost runs, disjoint, ordered by start. Nested repetition (a stage
// of blocks that are themselves repeats) gives the run hiding the most nodes.
std::vector<RepeatedBlock> FindRepeatedBlocks(const Report& report, const BlockOptions& options = {});

}  // namespace aic::analysis
