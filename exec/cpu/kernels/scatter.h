// ScatterND and ScatterElements: out = a copy of the data (none when the
// output took the data's bytes in place), then each update written or
// reduced into its place in index order, so duplicate indices end as the
// reference's do (the last write wins, or every update accumulates). The
// index maps are GatherND's and GatherElements' (gather.h,
// gather_elements.h); threads split the work only where no two of them can
// meet on one element: ScatterND by columns of the slices, ScatterElements
// by outer rows and inner pieces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "exec/cpu/kernels/gather.h"
#include "exec/cpu/kernels/gather_elements.h"
#include "graph/dtype.h"

namespace aic::cpu::kernels {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// The reduction attribute's value ("none", "add", "mul", "max", "min");
// nullopt for others (the reference kernel reports them).
inline std::optional<ScatterReduction> ScatterReductionOf(const std::string& r) {
  if (r == "none") return ScatterReduction::kNone;
  if (r == "add") return ScatterReduction::kAdd;
  if (r == "mul") return ScatterReduction::kMul;
  if (r == "max") return ScatterReduction::kMax;
  if (r == "min") return ScatterReduction::kMin;
  return std::nullopt;
}

// Whether the kernels scatter `dtype` with `r`: none moves elements of 1, 2,
// 4, 8 or 16 bytes; the reductions compute in float, double, int32 and int64
// (integers wrapping on overflow).
bool ScatterSupports(ScatterReduction r, DType dtype);

// out = data (`data_elements` of `dtype`), then out[slice of tuple t] (r)=
// updates[t, :] for t in order; the map has no batch dims. Returns the flat
// position in the indices of the first out-of-range index (checked before
// anything is written), or -1.
int64_t ScatterND(const TupleIndexMap& m, const void* data, int64_t data_elements, const void* indices,
                  size_t index_bytes, const void* updates, void* out, DType dtype, ScatterReduction r);

// out = data, then out[element (o, j, i) names] (r)= updates[o, j, i] in
// index order. Returns the flat position in the indices of the first
// out-of-range index, or -1 (out is then complete).
int64_t ScatterElements(const AxisIndexMap& m, const void* data, int64_t data_elements, const void* indices,
                        size_t index_bytes, const void* updates, void* out, DType dtype, ScatterReduction r);

}  // namespace aic::cpu::kernels
