// Resolution of ONNX external data: a tensor's bytes live in a file next to
// the model. Locations are confined to the model's folder: an absolute path,
// a `..` component, or a symlink leading outside is refused, as is an
// offset/length that runs past the file. Files are memory-mapped once and
// tensors borrow views of the mapping.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "graph/tensor.h"
#include "support/mapped_file.h"

namespace aic::onnx_io {

class ExternalDataResolver {
 public:
  explicit ExternalDataResolver(std::string model_dir) : model_dir_(std::move(model_dir)) {}

  // A read-only buffer for [offset, offset+length) of `location`; length < 0
  // means "to the end of the file".
  absl::StatusOr<std::shared_ptr<Buffer>> Resolve(const std::string& location, int64_t offset,
                                                  int64_t length);

 private:
  absl::StatusOr<std::shared_ptr<MappedFile>> Map(const std::string& location);
  std::string model_dir_;
  std::map<std::string, std::shared_ptr<MappedFile>> files_;
};

}  // namespace aic::onnx_io
