// What every compiled plan checks of the feeds it is handed, before reading
// them: each name is one of its graph inputs, each input is fed, a tensor
// input gets a tensor of the dtype and dims it was compiled for. Sessions
// check feeds against the model's declared types first (session/session.h);
// this is the plan's own guard, so a direct caller of a backend cannot make
// it read past a buffer.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "graph/runtime_value.h"

namespace aic::exec {

// `plan_feeds`: (input name, slot) in the plan's order.
absl::Status CheckFeedNames(const std::vector<std::pair<std::string, int>>& plan_feeds,
                            const std::map<std::string, RuntimeValue>& feeds);

// InvalidArgument when `given` is not a tensor of `dtype` and `dims`.
absl::Status CheckCompiledShape(const std::string& name, const RuntimeValue& given, DType dtype,
                                const std::vector<int64_t>& dims);

}  // namespace aic::exec
