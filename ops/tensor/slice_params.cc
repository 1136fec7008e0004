#include "ops/tensor/slice_params.h"

#include <algorithm>

#include "ops/tensor/tensor_util.h"

namespace aic {

AxisRange ClampSlice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  AxisRange r;
  r.step = step;
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    r.count = end > start ? (end - start + step - 1) / step : 0;
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    r.count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
  }
  r.start = start;
  return r;
}

absl::StatusOr<std::optional<SliceParams>> SliceParamsOf(
    const Node& node, int64_t opset, int64_t rank,
    const std::function<std::optional<std::vector<int64_t>>(size_t)>& input) {
  SliceParams p;
  if (opset < 10) {
    p.starts = node.GetInts("starts");
    p.ends = node.GetInts("ends");
    p.axes = node.GetInts("axes");
  } else {
    auto s = input(1), e = input(2);
    if (!s || !e) return std::optional<SliceParams>();
    p.starts = *s;
    p.ends = *e;
    if (node.has_input(3)) {
      auto a = input(3);
      if (!a) return std::optional<SliceParams>();
      p.axes = *a;
    }
    if (node.has_input(4)) {
      auto st = input(4);
      if (!st) return std::optional<SliceParams>();
      p.steps = *st;
    }
  }
  if (p.starts.size() != p.ends.size()) return absl::InvalidArgumentError("starts and ends differ in length");
  if (p.axes.empty() && !(opset >= 10 && node.has_input(3))) {
    for (size_t i = 0; i < p.starts.size(); ++i) p.axes.push_back(static_cast<int64_t>(i));
  }
  if (p.steps.empty()) p.steps.assign(p.starts.size(), 1);
  if (p.axes.size() != p.starts.size() || p.steps.size() != p.starts.size()) {
    return absl::InvalidArgumentError("starts, ends, axes and steps differ in length");
  }
  for (int64_t s : p.steps) {
    if (s == 0) return absl::InvalidArgumentError("step 0");
  }
  if (rank >= 0) {
    AIC_ASSIGN_OR_RETURN(p.axes, NormalizeAxes(p.axes, rank));
  }
  return std::optional<SliceParams>(p);
}

}  // namespace aic
