// What an integer graph input holds, read off the graph, so that random
// calibration data is data the model can take: token ids and positions index
// an embedding table (uniform over its rows: an id past the table is an
// error, not a sample); 8- and 16-bit integers are samples themselves
// (pixels, PCM audio: uniform over the type's range); any other integer or
// boolean input (an attention mask, a length) is all ones.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "graph/model.h"
#include "graph/tensor.h"

namespace aic::session {

struct IntegerInputKind {
  bool indexes_table = false;
  int64_t rows = 0;       // indexes_table: ids are in [0, rows)
  bool samples = false;   // 8/16-bit data: uniform over the type's range
};

// 8- and 16-bit integers: pixels, PCM samples, quantized values, data the
// model computes on (not ids, positions or masks).
bool HoldsSamples(DType d);

// Integer and boolean graph inputs (initializer defaults excluded), by name.
// An input indexes a table when, through Cast/Reshape/Squeeze/Unsqueeze/
// Flatten/Identity/Expand, it is the indices of a Gather of a constant
// (initializer) table, or of a computed one whose rows inference knows (a
// dequantized table); read by several, the smallest table counts.
std::map<std::string, IntegerInputKind> IntegerInputKinds(const Model& model);

// Overwrites an integer or boolean tensor with values of that kind, drawn
// from `seed`.
void FillIntegerInput(const IntegerInputKind& kind, uint64_t seed, Tensor& t);

}  // namespace aic::session
