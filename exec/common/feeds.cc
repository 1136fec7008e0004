#include "exec/common/feeds.h"

#include "absl/strings/str_cat.h"

namespace aic::exec {

absl::Status CheckFeedNames(const std::vector<std::pair<std::string, int>>& plan_feeds,
                            const std::map<std::string, RuntimeValue>& feeds) {
  for (const auto& f : plan_feeds) {
    if (feeds.find(f.first) == feeds.end()) {
      return absl::InvalidArgumentError(absl::StrCat("graph input '", f.first, "' not fed"));
    }
  }
  // Every input is fed; with no more feeds than inputs, no name is unknown
  // (the common case costs no second loop).
  if (feeds.size() == plan_feeds.size()) return absl::OkStatus();
  for (const auto& [name, v] : feeds) {
    bool known = false;
    for (const auto& f : plan_feeds) known |= f.first == name;
    if (!known) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a graph input"));
  }
  return absl::OkStatus();
}

absl::Status CheckCompiledShape(const std::string& name, const RuntimeValue& given, DType dtype,
                                const std::vector<int64_t>& dims) {
  if (!given.is_tensor()) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a tensor"));
  const Tensor& t = given.tensor;
  if (t.dtype() == dtype && t.dims() == dims) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("input '", name, "' is ", DTypeName(t.dtype()), DimsToString(t.dims()),
                                                 ", the plan was compiled for ", DTypeName(dtype), DimsToString(dims)));
}

}  // namespace aic::exec
