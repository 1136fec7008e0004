// Numpy-style multidirectional broadcasting, for shape inference (symbolic
// dims) and for reference kernels (concrete dims and index mapping).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/shape.h"
#include "graph/tensor.h"

namespace aic {

// The dim min(d, c): a symbol named "min(D,c)" (D d's name), so that one
// name always stands for one value. A slice x[0:d] of an axis of length c has
// it. Broadcast against d it gives d wherever the model runs: d <= c makes
// them equal, d > c = 1 gives d, and d > c >= 2 cannot broadcast. Unknown
// when d has no name.
Dim MinDimSymbol(const Dim& d, int64_t c);

// Broadcast result of symbolic shapes. A dim of 1 yields to the other; equal
// dims (values or same symbol) stay; a symbol against a known value > 1 takes
// the value; d against min(d, c) is d; other different symbols give `fresh`
// (unknowable). Unknown rank in any input gives unknown rank. Fails on two
// known, unequal dims neither 1.
absl::StatusOr<Shape> BroadcastShapes(const std::vector<Shape>& shapes,
                                      const std::function<Dim()>& fresh);

// Broadcast result of concrete dims; fails when incompatible.
absl::StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<std::vector<int64_t>>& dims);

// Strides (in elements) to read an input of `in_dims` while walking `out_dims`:
// 0 along broadcast axes. `in_dims` is right-aligned against `out_dims`.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& in_dims,
                                      const std::vector<int64_t>& out_dims);

// Calls f(out_index, in_offsets...) for every element of the broadcast output.
// Offsets are element indices into each input.
class BroadcastIterator {
 public:
  BroadcastIterator(const std::vector<int64_t>& out_dims,
                    const std::vector<std::vector<int64_t>>& in_dims);
  int64_t size() const { return size_; }
  // Offsets of input k for the current position.
  int64_t offset(size_t k) const { return offsets_[k]; }
  void Next();

 private:
  std::vector<int64_t> out_dims_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> counter_;
  std::vector<int64_t> offsets_;
  int64_t size_;
};

// Row-major strides of dims.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& dims);

// Normalizes a possibly negative axis against rank; error when out of range.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank);

}  // namespace aic
