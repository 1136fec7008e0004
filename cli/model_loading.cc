#include "cli/model_loading.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "graph/verify.h"
#include "onnx_io/load.h"
#include "onnx_io/onnx_shape_fallback.h"
#include "ops/infer_shapes.h"

namespace aic::cli {

void InferShapesWithFallback(Model& model) {
  InferStats stats;
  InferShapes(model, InferOptions(), &stats).IgnoreError();  // best effort
  if (stats.opaque_nodes == 0) return;
  auto filled = FillTypesFromOnnxInference(model);
  // New facts about opaque outputs may resolve their consumers.
  if (filled.ok() && *filled > 0) InferShapes(model).IgnoreError();
}

absl::StatusOr<std::unique_ptr<session::Session>> OpenSession(const std::string& path, std::unique_ptr<Model> model,
                                                              const session::SessionOptions& options) {
  auto s = session::Session::Create(std::move(model), options);
  if (!s.ok()) return absl::Status(s.status().code(), absl::StrCat(path, ": ", s.status().message()));
  if (!(*s)->optimize_error().empty()) {
    std::fprintf(stderr, "warning: %s: running the graph as loaded (the rewriter failed: %s)\n", path.c_str(),
                 (*s)->optimize_error().c_str());
  }
  return s;
}

absl::StatusOr<std::unique_ptr<Model>> LoadVerifiedModel(const std::string& path,
                                                         const LoadOptions& options) {
  AIC_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, LoadModel(path));
  if (absl::Status s = Verify(*model->graph); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
  }
  if (options.infer_shapes) InferShapesWithFallback(*model);
  return model;
}

}  // namespace aic::cli
