// A model whose graph inputs have symbolic dims (batch, sequence, an image's
// sides) has costs that depend on them. The report analyses it at one size
// per symbol (given by --shape, else a stated default) and also states each
// cost as a polynomial in the symbols, found by re-measuring the model at
// other sizes (analysis/polynomial.h) with the same inference, folding and
// grouping as the main analysis: the expression and the printed number come
// from one set of cost formulas.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analysis/polynomial.h"
#include "graph/model.h"

namespace aic::analysis {

// The graph inputs' symbolic dims and the size each is analysed at.
struct InputSymbols {
  std::vector<std::string> names;  // in order of first appearance; an unnamed dim is "INPUT[axis]"
  std::vector<int64_t> values;     // analysed at
  std::vector<bool> given;         // by --shape (else the default)
  // Per graph input (not initializers): per axis the symbol index, or -1 for a fixed dim.
  std::vector<std::pair<Value*, std::vector<int>>> axes;
  bool empty() const { return names.empty(); }
};

// Reads the symbols off the graph inputs and binds them: from `shapes`
// (input name -> dims, as --shape gives them: every symbol of that input
// takes the given size, fixed dims must match), else the default size of
// graph/realistic_size.h's RealisticDimSize. InvalidArgument naming the input and dim
// for an unknown input, a wrong rank, a fixed dim contradicted, or one
// symbol given two sizes.
absl::StatusOr<InputSymbols> BindInputSymbols(const Model& model,
                                              const std::map<std::string, std::vector<int64_t>>& shapes);

// Sets every graph input with symbols to the concrete sizes `values`.
void SetInputSizes(const InputSymbols& symbols, const std::vector<int64_t>& values);

// The types of every value of the model (subgraphs included), to be put back
// after inference at another size.
class TypeSnapshot {
 public:
  explicit TypeSnapshot(const Model& model);
  void Restore() const;

 private:
  std::vector<std::pair<Value*, TypeInfo>> types_;
};

}  // namespace aic::analysis
