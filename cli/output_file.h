// Where a command writes a model, decided before any work: `-` is standard
// output, a device or FIFO (/dev/stdout, /dev/null) is written in place, a
// symlink is followed (the link stays, its target gets the bytes), and a
// regular file is replaced atomically. A path that cannot be written (a
// folder, a missing or read-only parent folder) fails at once, in one line
// that names it once.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "graph/model.h"
#include "onnx_io/save.h"

namespace aic::cli {

struct OutputTarget {
  enum class Kind { kFile, kStdout, kDevice };
  Kind kind = Kind::kFile;
  std::string given;  // as the user wrote it
  std::string path;   // what is written: the file (a symlink's target), the device; "" for stdout
  bool to_stdout() const { return kind == Kind::kStdout; }
};

absl::StatusOr<OutputTarget> ResolveOutput(const std::string& path);

// Writes the model there; errors name the path once.
absl::Status WriteModel(const Model& model, const OutputTarget& target, const SaveOptions& options);

// Writes a text (a page, a report) there, a file atomically (a reader never
// sees half of it); errors name the path once.
absl::Status WriteText(const std::string& text, const OutputTarget& target);

}  // namespace aic::cli
