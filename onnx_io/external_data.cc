#include "onnx_io/external_data.h"

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace aic::onnx_io {

namespace fs = std::filesystem;

absl::StatusOr<std::shared_ptr<MappedFile>> ExternalDataResolver::Map(const std::string& location) {
  auto it = files_.find(location);
  if (it != files_.end()) return it->second;
  if (location.empty()) return absl::InvalidArgumentError("external data with an empty location");
  if (location[0] == '/' || location.find('\\') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("external data location '", location, "' must be a relative path"));
  }
  for (absl::string_view part : absl::StrSplit(location, '/')) {
    if (part == "..") {
      return absl::InvalidArgumentError(absl::StrCat(
          "external data location '", location, "' escapes the model's folder ('..')"));
    }
  }
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(fs::path(model_dir_.empty() ? "." : model_dir_), ec);
  fs::path target = fs::weakly_canonical(dir / location, ec);
  if (ec || !fs::exists(target)) {
    return absl::NotFoundError(
        absl::StrCat("external data file '", location, "' not found next to the model"));
  }
  // After resolving symlinks the file must still be inside the folder.
  std::string dir_s = dir.string(), target_s = target.string();
  if (target_s.size() <= dir_s.size() || target_s.compare(0, dir_s.size(), dir_s) != 0 ||
      (dir_s.back() != '/' && target_s[dir_s.size()] != '/')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "external data location '", location, "' resolves outside the model's folder"));
  }
  AIC_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::Open(target_s));
  files_[location] = file;
  return file;
}

absl::StatusOr<std::shared_ptr<Buffer>> ExternalDataResolver::Resolve(const std::string& location,
                                                                      int64_t offset,
                                                                      int64_t length) {
  AIC_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, Map(location));
  uint64_t size = file->size();
  if (offset < 0 || static_cast<uint64_t>(offset) > size) {
    return absl::InvalidArgumentError(absl::StrCat("external data offset ", offset, " is past the end of '",
                                                   location, "' (", size, " bytes)"));
  }
  uint64_t len = length < 0 ? size - static_cast<uint64_t>(offset) : static_cast<uint64_t>(length);
  if (len > size - static_cast<uint64_t>(offset)) {
    return absl::InvalidArgumentError(absl::StrCat("external data [", offset, ", +", len,
                                                   ") runs past the end of '", location, "' (",
                                                   size, " bytes)"));
  }
  return Buffer::Borrow(file->data() + offset, static_cast<size_t>(len), file);
}

}  // namespace aic::onnx_io
