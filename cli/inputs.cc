#include "cli/inputs.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "cli/args.h"
#include "onnx_io/load.h"
#include "onnx_io/npy.h"
#include "session/test_inputs.h"

namespace aic::cli {


absl::StatusOr<std::map<std::string, RuntimeValue>> BuildFeeds(const Model& model,
                                                               const InputOptions& options) {
  const Graph& g = *model.graph;
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const std::string& s : options.shapes) {
    AIC_ASSIGN_OR_RETURN(auto spec, ParseShapeSpec(s));
    shapes[spec.first] = spec.second;
  }
  std::map<std::string, RuntimeValue> feeds;
  for (const std::string& f : options.files) {
    size_t eq = f.find('=');
    if (eq == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat("--input expects NAME=FILE, got '", f, "'"));
    }
    std::string name = f.substr(0, eq), file = f.substr(eq + 1);
    const Value* input = nullptr;
    for (const Value* v : g.inputs()) {
      if (v->name() == name) input = v;
    }
    if (input == nullptr) return absl::InvalidArgumentError(absl::StrCat("'", name, "' is not a graph input"));
    bool is_npy = file.size() >= 4 && file.compare(file.size() - 4, 4, ".npy") == 0;
    if (is_npy) {
      AIC_ASSIGN_OR_RETURN(Tensor t, ReadNpy(file));
      feeds[name] = RuntimeValue(std::move(t));
    } else {
      AIC_ASSIGN_OR_RETURN(RuntimeValue v, LoadValueProtoFile(file, input->type()));
      feeds[name] = std::move(v);
    }
  }
  uint64_t seed = options.seed;
  for (const Value* v : g.inputs()) {
    if (feeds.count(v->name()) || v->is_initializer()) continue;
    if (!options.random) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input '", v->name(), "' not given (use --input or --random)"));
    }
    auto it = shapes.find(v->name());
    auto t = RandomTensorFor(v->type(), it == shapes.end() ? nullptr : &it->second, seed++);
    if (!t.ok()) {
      return absl::Status(t.status().code(),
                          absl::StrCat("input '", v->name(), "': ", t.status().message()));
    }
    feeds[v->name()] = RuntimeValue(*std::move(t));
  }
  return feeds;
}

}  // namespace aic::cli
