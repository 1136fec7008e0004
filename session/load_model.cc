#include "session/load_model.h"

#include "absl/strings/str_cat.h"
#include "graph/verify.h"
#include "onnx_io/load.h"
#include "onnx_io/onnx_shape_fallback.h"
#include "ops/infer_shapes.h"
#include "support/status.h"

namespace aic::session {

namespace {

absl::StatusOr<std::unique_ptr<Model>> Checked(std::unique_ptr<Model> model, const std::string& name,
                                               const LoadOptions& options) {
  if (absl::Status s = Verify(*model->graph); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
  }
  if (options.infer_shapes) InferShapesWithFallback(*model);
  return model;
}

}  // namespace

void InferShapesWithFallback(Model& model) {
  InferStats stats;
  InferShapes(model, InferOptions(), &stats).IgnoreError();  // best effort
  if (stats.opaque_nodes == 0) return;
  auto filled = FillTypesFromOnnxInference(model);
  // New facts about opaque outputs may resolve their consumers.
  if (filled.ok() && *filled > 0) InferShapes(model).IgnoreError();
}

absl::StatusOr<std::unique_ptr<Model>> LoadVerifiedModel(const std::string& path, const LoadOptions& options) {
  AIC_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, LoadModel(path));
  return Checked(std::move(model), path, options);
}

absl::StatusOr<std::unique_ptr<Model>> LoadVerifiedModelFromBytes(std::string_view bytes, const std::string& name,
                                                                  const std::string& base_dir,
                                                                  const LoadOptions& options) {
  auto model = LoadModelFromBytes(bytes.data(), bytes.size(), base_dir);
  if (!model.ok()) return absl::Status(model.status().code(), absl::StrCat(name, ": ", model.status().message()));
  return Checked(*std::move(model), name, options);
}

}  // namespace aic::session
