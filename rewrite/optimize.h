// `Optimize`: the equality-saturation-lite rewriter behind `aic-onnx opt`.
// Graph -> e-graph, rules applied for a bounded number of iterations (with a
// node budget, a time budget and backoff for rules that match too often),
// then the cheapest equivalent graph is extracted and emitted as standard ONNX.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "rewrite/provenance.h"

namespace aic::rewrite {

struct Rule;  // rewrite/rules/rule.h

struct OptimizeOptions {
  // 0: nothing; 1: exact rules only; 2 (default): + reassociating rules
  // (Conv+BN, hard-swish, ...); 3: + rules that trade more rounding for speed
  // (merging consecutive linear ops). Approximate rules never run by default.
  int level = 2;
  bool allow_approximate = false;
  // The ops of our own domain "ai.aic" the target runs: fused ops
  // (FusedLinearReLU) and aliases of standard ops newer than the model's
  // opset (ops/fused/standard_aliases.h). Empty for `--target onnx`: standard
  // ONNX at the model's opset only. `opt --target aic` allows all of them
  // (AllAicOps()); a session allows what its backend declares.
  std::set<std::string> aic_ops;
  bool AllowsAic(const std::string& op_type) const { return aic_ops.count(op_type) > 0; }
  // Constant folding may grow the initializers by at most this many bytes
  // (per folded value, compared to the constants it reads).
  int64_t fold_limit = 0;
  // Whether constant folding may turn a DequantizeLinear of constant integers
  // (a QDQ model's weights and biases), or what reads one directly, into
  // float constants. Off for files (`opt`, unless --fold-dequantize): it
  // would undo the quantization ONNX Runtime and others run as int8 (its
  // QDQ Conv wants the int32 bias DQ too). Sessions turn it on: their
  // backends compute in float.
  bool fold_dequantize = false;
  // With fold_dequantize: whether the rewriter itself computes the float
  // value of a large dequantized weight (over 4096 values). A session turns it
  // off: the rewriter never needs those values (the int8 rules read the
  // integers) and its backend folds the DequantizeLinears left in the graph
  // at compile time, one at a time (LoweringFrame::FoldConstant), where the
  // rewriter held every weight in float at once (resnet50_int8: 100 MB).
  // `opt --fold-dequantize` keeps it on: the file it writes holds them folded.
  bool fold_large_dequantized_in_rewriter = true;
  // Standard QOperator ops (QLinearConv) the target runs as int8. Rules that
  // turn a QDQ pattern into one run only when it is listed: empty for files,
  // which keep QDQ form (`opt` never undoes the model's representation), and
  // for backends that compute in float. A session takes its backend's list.
  std::set<std::string> qoperator_ops;
  // Graph input name -> dims (--fix-shape); -1 keeps that dim as the model
  // has it. Checked against the input's rank and fixed dims (FixedShapes).
  std::map<std::string, std::vector<int64_t>> fix_shapes;
  // Symbolic dim name -> value, wherever a graph input has it (--fix-dim).
  std::map<std::string, int64_t> fix_dims;
  bool FixesShapes() const { return !fix_shapes.empty() || !fix_dims.empty(); }
  int max_iterations = 12;
  int64_t node_budget = 500000;  // e-nodes
  double time_budget_s = 60;
  // Rules matching more often than this in one iteration sit out the next ones.
  int64_t backoff_threshold = 20000;
  // Only these rules (empty: all eligible) / never these.
  std::set<std::string> only_rules;
  std::set<std::string> disabled_rules;
  // --explain RULE: why that rule fired or declined, one line each.
  std::string explain_rule;
  // Rules tried after the built-in ones, under the same eligibility checks.
  // For tests only: the graph fuzzer plants a rule with a broken guard here
  // to show that it finds the bug (tests/graph_fuzz/planted_bugs.cc).
  std::vector<const Rule*> extra_rules;
  // Record where each node of the optimized main graph came from
  // (OptimizeStats::provenance; `opt --html`). Off by default: it keeps the
  // original graph alive and tags every e-node with the rule that added it.
  bool record_provenance = false;
};

struct OptimizeStats {
  int64_t nodes_before = 0;
  int64_t nodes_after = 0;
  int64_t initializer_bytes_before = 0;
  int64_t initializer_bytes_after = 0;
  int iterations = 0;
  int64_t enodes = 0;
  int64_t eclasses = 0;
  int64_t opaque_nodes = 0;
  double seconds = 0;
  std::string stop_reason;  // "saturated", "iteration limit", "node budget", "time budget"
  std::map<std::string, int64_t> rule_counts;  // rules that changed something
  // Where the time went: "infer", "import", "rewrite" (matching, unions,
  // rebuilds), "extract" (extraction and emission), summed over every graph.
  std::map<std::string, double> phase_seconds;
  std::map<std::string, double> rule_seconds;  // in each rule's matcher, fired or not
  std::vector<std::string> explain;            // lines for --explain
  // Fresh dim symbols ("unk__rwN") named so far: each graph's e-graph goes on
  // from here, so that one Optimize never gives one name two meanings (a body,
  // or a second pass, reads types the first e-graph named).
  int64_t fresh_symbols = 0;
  // With OptimizeOptions::record_provenance (null otherwise, and when the
  // rewriter did not run: -O0).
  std::shared_ptr<const OptimizeProvenance> provenance;
  bool changed() const { return !rule_counts.empty() || nodes_after != nodes_before; }
};

// Every op type of domain ai.aic that has an OpDef.
std::set<std::string> AllAicOps();

// The graph inputs' types once --fix-shape and --fix-dim are applied, by
// input name (only the inputs they change). InvalidArgument, naming the input
// and dim, for an unknown input or dim name, a rank that differs from the
// input's, or a value that contradicts a dim the model fixes.
absl::StatusOr<std::map<std::string, TypeInfo>> FixedShapes(const Model& model, const OptimizeOptions& options);

// Rewrites model.graph in place (on success only).
absl::StatusOr<OptimizeStats> Optimize(Model& model, const OptimizeOptions& options = {});

}  // namespace aic::rewrite
