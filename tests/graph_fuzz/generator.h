// Random valid ONNX models for differential testing (NNSmith's idea, on our
// own OpDefs): a generator proposes one op (or one planted rule pattern, or
// an If/Loop) at a time over the values built so far, and the OpDef
// registry's shape and dtype inference is the judge: a proposal whose
// inference fails is taken back. Inputs are then drawn so that no
// intermediate value of the reference executor is NaN, infinite or huge.
//
// What the models contain: every op the CPU backend lowers (and a few it
// runs by their reference kernel), broadcasting, symbolic batch/sequence dims,
// multi-output ops, constants that fold, repeated subexpressions,
// Shape→Gather→Concat→Reshape chains, If/Loop bodies reading outer values,
// float16 islands and int64 arithmetic, and the patterns the rewriter's rules
// look for, planted on purpose so that the rules fire.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "exec/common/executor.h"
#include "graph/model.h"

namespace aic::graph_fuzz {

struct GenOptions {
  int max_steps = 24;          // recipe applications; a pattern adds several nodes
  bool control_flow = true;    // If and Loop
  bool low_precision = true;   // float16 islands
};

struct GeneratedModel {
  std::unique_ptr<Model> model;
  exec::Feeds feeds;
  std::vector<std::string> recipes;  // what was built, in order
};

// Deterministic in (seed, options). NotFound when no feeds keeping every
// intermediate finite were found for the graph drawn (the caller draws again).
absl::StatusOr<GeneratedModel> GenerateModel(uint64_t seed, const GenOptions& options = {});

// Graph outputs whose values went through float16 (or other lossy casts): the
// oracles compare them with a looser tolerance. Stored in the model's
// metadata so that a saved finding keeps it.
inline constexpr char kLooseOutputsKey[] = "aic.graph_fuzz.loose_outputs";

// Every recipe the generator draws from, for coverage reports.
std::vector<std::string> RecipeNames();

}  // namespace aic::graph_fuzz
