#include "ops/tensor/pad_params.h"

#include "absl/strings/str_cat.h"
#include "ops/tensor/tensor_util.h"

namespace aic {

absl::StatusOr<std::optional<std::vector<std::pair<int64_t, int64_t>>>> PadsOf(const Node& pad, int64_t opset,
                                                                                int64_t rank, const IntsInputFn& input) {
  using Result = std::optional<std::vector<std::pair<int64_t, int64_t>>>;
  std::vector<int64_t> pads;
  if (opset < 11) {
    pads = pad.GetInts(opset < 2 ? "paddings" : "pads");
  } else {
    std::optional<std::vector<int64_t>> p = pad.has_input(1) ? input(1) : std::optional<std::vector<int64_t>>();
    if (!p) return Result();
    pads = *p;
  }
  std::vector<int64_t> axes;
  if (opset >= 18 && pad.has_input(3)) {
    std::optional<std::vector<int64_t>> a = input(3);
    if (!a) return Result();
    if (rank < 0) return Result();  // axes need the rank
    AIC_ASSIGN_OR_RETURN(axes, NormalizeAxes(*a, rank));
  } else {
    if (rank < 0) rank = static_cast<int64_t>(pads.size()) / 2;
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  size_t n = axes.size();
  if (pads.size() != 2 * n) {
    return absl::InvalidArgumentError(absl::StrCat("pads has ", pads.size(), " entries, expected ", 2 * n));
  }
  std::vector<std::pair<int64_t, int64_t>> out(static_cast<size_t>(rank), {0, 0});
  for (size_t i = 0; i < n; ++i) out[axes[i]] = {pads[i], pads[i + n]};
  return Result(std::move(out));
}

std::optional<double> PadConstantOf(const Node& pad, int64_t opset,
                                    const std::function<const Tensor*(size_t)>& input_value) {
  if (opset < 11) return pad.GetFloat("value", 0.0f);
  if (!pad.has_input(2)) return 0.0;
  const Tensor* t = input_value(2);
  if (t == nullptr) return std::nullopt;
  return t->num_elements() == 0 ? 0.0 : t->ElementAsDouble(0);
}

}  // namespace aic
