#include "ops/math/reduce_axes.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/util/broadcast.h"

namespace aic {

bool ReduceAxesIsInput(const std::string& op_type, int64_t opset) {
  return opset >= 18 || (op_type == "ReduceSum" && opset >= 13);
}

absl::StatusOr<std::optional<ReduceAxes>> ResolveReduceAxes(const Node& node, int64_t opset,
                                                            bool axes_input_present,
                                                            const Tensor* axes_input,
                                                            int64_t rank) {
  ReduceAxes out;
  out.keepdims = node.GetInt("keepdims", 1) != 0;
  std::vector<int64_t> axes;
  if (ReduceAxesIsInput(node.op_type, opset)) {
    if (axes_input_present && axes_input == nullptr) return std::optional<ReduceAxes>();
    if (axes_input != nullptr) {
      if (axes_input->rank() > 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(node.Describe(), ": axes must be 1-D, got rank ", axes_input->rank()));
      }
      for (int64_t i = 0; i < axes_input->num_elements(); ++i) {
        axes.push_back(static_cast<int64_t>(axes_input->ElementAsDouble(i)));
      }
    }
    if (axes.empty() && node.GetInt("noop_with_empty_axes", 0) != 0) {
      out.noop = true;
      out.reduced.assign(static_cast<size_t>(rank), false);
      return std::optional<ReduceAxes>(out);
    }
  } else {
    axes = node.GetInts("axes");
  }
  out.reduced.assign(static_cast<size_t>(rank), axes.empty());
  for (int64_t a : axes) {
    absl::StatusOr<int64_t> norm = NormalizeAxis(a, rank);
    if (!norm.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(node.Describe(), ": ", norm.status().message()));
    }
    out.reduced[static_cast<size_t>(*norm)] = true;
  }
  return std::optional<ReduceAxes>(out);
}

Shape ReducedShape(const Shape& input, const ReduceAxes& axes) {
  std::vector<Dim> dims;
  for (size_t i = 0; i < input.dims().size(); ++i) {
    if (!axes.reduced[i]) {
      dims.push_back(input.dims()[i]);
    } else if (axes.keepdims) {
      dims.push_back(Dim(1));
    }
  }
  return Shape(std::move(dims));
}

std::vector<int64_t> ReducedDims(const std::vector<int64_t>& input, const ReduceAxes& axes) {
  std::vector<int64_t> dims;
  for (size_t i = 0; i < input.size(); ++i) {
    if (!axes.reduced[i]) {
      dims.push_back(input[i]);
    } else if (axes.keepdims) {
      dims.push_back(1);
    }
  }
  return dims;
}

std::string ReducedAxesText(const ReduceAxes& axes) {
  std::vector<int64_t> list;
  for (size_t i = 0; i < axes.reduced.size(); ++i) {
    if (axes.reduced[i]) list.push_back(static_cast<int64_t>(i));
  }
  if (!list.empty() && list.size() == axes.reduced.size()) return "all";
  return absl::StrCat("[", absl::StrJoin(list, ", "), "]");
}

}  // namespace aic
