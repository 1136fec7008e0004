// The oracles a generated model goes through, in one process: the reference
// executor on the model as given is the expected answer; `opt` at every -O
// level and target (written to bytes and loaded back, as `aic-onnx opt`
// would) must give the same on the reference executor (bit for bit at -O1,
// whose rules are all exact), and the CPU backend at -O0, -O2 and -O3 on the
// original and at its default level on opt's output must agree within
// tolerance. ONNX Runtime is the last oracle, run from Python over what
// `save_dir` receives (tests/graph_fuzz/check_onnxruntime.py).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "exec/common/executor.h"
#include "graph/model.h"
#include "rewrite/optimize.h"

namespace aic::graph_fuzz {

struct OracleOptions {
  bool cpu = true;  // also the CPU backend (the reference oracle alone with false)
  // Planted rules (tests only): see planted_bugs.h.
  std::vector<const rewrite::Rule*> extra_rules;
  // When set, the model, its opt outputs for --target onnx, the feeds and
  // the expected outputs are written here for the ONNX Runtime check.
  std::string save_dir;
};

struct Finding {
  std::string kind;    // "mismatch", "not bitwise equal", "opt error", "error", "reference error", ...
  std::string config;  // "opt -O2 --target aic, reference", "cpu -O0", ...
  std::string detail;  // which output, how far off
  // Two findings are the same bug for the shrinker when kind and config match.
  std::string Key() const { return kind + " | " + config; }
};

struct OracleReport {
  std::vector<Finding> findings;
  std::map<std::string, int64_t> rule_counts;  // summed over the opt configurations
  std::set<std::string> ops;                   // op types of the model (bodies included)
  int configs = 0;                             // configurations that ran
};

OracleReport CheckModel(const Model& model, const exec::Feeds& feeds, const OracleOptions& options = {});

}  // namespace aic::graph_fuzz
