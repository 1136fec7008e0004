#include "cli/output_file.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"

namespace aic::cli {

namespace fs = std::filesystem;

absl::StatusOr<OutputTarget> ResolveOutput(const std::string& path) {
  OutputTarget t;
  t.given = path;
  if (path == "-") {
    t.kind = OutputTarget::Kind::kStdout;
    return t;
  }
  if (path.empty()) return absl::InvalidArgumentError("the output path is empty");
  std::error_code ec;
  fs::path p(path);
  // A symlink's target gets the bytes; renaming over the link would replace it.
  if (fs::is_symlink(fs::symlink_status(p, ec))) p = fs::weakly_canonical(p, ec);
  fs::file_status st = fs::status(p, ec);
  if (fs::exists(st)) {
    if (fs::is_directory(st)) return absl::InvalidArgumentError(absl::StrCat(path, ": is a folder"));
    if (fs::is_character_file(st) || fs::is_block_file(st) || fs::is_fifo(st) || fs::is_socket(st)) {
      t.kind = OutputTarget::Kind::kDevice;
      t.path = p.string();
      return t;
    }
  }
  fs::path parent = p.parent_path();
  if (parent.empty()) parent = ".";
  if (!fs::is_directory(parent, ec)) {
    return absl::NotFoundError(absl::StrCat(path, ": no folder '", parent.string(), "'"));
  }
  if (::access(parent.c_str(), W_OK) != 0) {
    return absl::PermissionDeniedError(absl::StrCat(path, ": folder '", parent.string(), "' is not writable"));
  }
  t.kind = OutputTarget::Kind::kFile;
  t.path = p.string();
  return t;
}

absl::Status WriteModel(const Model& model, const OutputTarget& target, const SaveOptions& options) {
  if (target.kind == OutputTarget::Kind::kFile) return SaveModel(model, target.path, options);
  if (options.external_data == SaveOptions::ExternalData::kAlways) {
    return absl::InvalidArgumentError(absl::StrCat(target.given, ": external data needs a file to sit beside"));
  }
  absl::StatusOr<std::string> bytes = SerializeModel(model);
  if (!bytes.ok()) return absl::Status(bytes.status().code(), absl::StrCat(target.given, ": ", bytes.status().message()));
  if (target.kind == OutputTarget::Kind::kStdout) {
    if (std::fwrite(bytes->data(), 1, bytes->size(), stdout) != bytes->size() || std::fflush(stdout) != 0) {
      return absl::DataLossError("-: writing to standard output failed");
    }
    return absl::OkStatus();
  }
  std::ofstream f(target.path, std::ios::binary | std::ios::out);
  f.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  f.flush();
  if (!f) return absl::DataLossError(absl::StrCat(target.given, ": writing failed"));
  return absl::OkStatus();
}

absl::Status WriteText(const std::string& text, const OutputTarget& target) {
  if (target.kind == OutputTarget::Kind::kStdout) {
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
      return absl::DataLossError("-: writing to standard output failed");
    }
    return absl::OkStatus();
  }
  std::string path = target.kind == OutputTarget::Kind::kFile ? target.path + ".tmp" : target.path;
  {
    std::ofstream f(path, std::ios::binary | std::ios::out | std::ios::trunc);
    f.write(text.data(), static_cast<std::streamsize>(text.size()));
    f.flush();
    if (!f) return absl::DataLossError(absl::StrCat(target.given, ": writing failed"));
  }
  if (target.kind != OutputTarget::Kind::kFile) return absl::OkStatus();
  std::error_code ec;
  fs::rename(path, target.path, ec);
  if (ec) {
    fs::remove(path, ec);
    return absl::DataLossError(absl::StrCat(target.given, ": writing failed"));
  }
  return absl::OkStatus();
}

}  // namespace aic::cli
