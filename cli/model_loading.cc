#include "cli/model_loading.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace aic::cli {

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

}  // namespace aic::cli
