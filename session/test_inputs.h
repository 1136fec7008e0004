// Inputs to test a model on, for opt's verification, `verify`, `run --random`,
// report's random calibration and the Python API: random tensors at given or
// realistic shapes, or the tensors of a folder (the ONNX test-data layout or
// one .npy per input). One place, so every caller feeds a model alike.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "graph/runtime_value.h"

namespace aic::session {

using InputShapes = std::map<std::string, std::vector<int64_t>>;

// A random tensor for a graph input of the given type (normal floats, small
// non-negative integers, random bools); symbolic dims come from `fixed` or 1.
absl::StatusOr<Tensor> RandomTensorFor(const TypeInfo& type, const std::vector<int64_t>* fixed,
                                       uint64_t seed);

// One random value per graph input that is not an initializer default, at
// `shapes` where given (input k draws from seed + k); an integer input that
// indexes an embedding table takes ids within it (session/input_kinds.h).
// Errors name the input.
absl::StatusOr<std::map<std::string, RuntimeValue>> RandomFeeds(const Model& model, const InputShapes& shapes,
                                                                uint64_t seed);

// Feeds from a folder: <name>.npy (names as SanitizeFileName writes them) or
// input_<i>.pb in graph input order (the ONNX test-data layout). An input
// with an initializer default may be left out; any other missing one is
// NotFound naming the folder and the input.
absl::StatusOr<std::map<std::string, RuntimeValue>> FeedsFromDir(const Model& m, const std::string& dir);

// `given` plus test shapes for every other graph input with a symbolic dim:
// its fixed dims as they are and a realistic size for each symbolic one
// rather than 1 (graph/realistic_size.h's RealisticDimSize).
InputShapes TestShapes(const Model& model, InputShapes given);

// Other test shapes to try when the model cannot run at `shapes`, the
// TestShapes of `given`: the dims a model ties together by arithmetic (a KV
// cache's total_length = past_length + 1) cannot all take one size. For each
// symbol of the graph inputs not in `given` (by name; an unnamed dim on its
// own), in input order, that symbol at size+1, size-1 and 2·size with the
// others kept, and at 1 (a batch two inputs share); at most `limit` of them.
std::vector<InputShapes> NearbyTestShapes(const Model& model, const InputShapes& shapes, const InputShapes& given,
                                          size_t limit = 8);

// "x=1,3,224,224 mask=1,16", in graph input order: shapes as the CLI takes
// and prints them.
std::string ShapesText(const Model& model, const InputShapes& shapes);

// `runs` random input sets at `shapes`, set k drawn from seed + 7919·k: opt's
// verification, `verify` and the Python API draw the same inputs.
absl::StatusOr<std::vector<std::map<std::string, RuntimeValue>>> RandomFeedSets(const Model& model,
                                                                              const InputShapes& shapes, int runs,
                                                                              uint64_t seed = 1000);

// Output names as file names: characters other than A-Za-z0-9._- become '_'.
std::string SanitizeFileName(const std::string& name);

}  // namespace aic::session
