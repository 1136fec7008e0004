// Read-only memory mapping of a file. Model files and external-data files are
// mapped, never read into heap copies: initializers borrow views of the mapping
// and keep it alive through a shared_ptr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace aic {

class MappedFile {
 public:
  // Maps `path` read-only. An empty file maps to a zero-length view.
  static absl::StatusOr<std::shared_ptr<MappedFile>> Open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, const uint8_t* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::string path_;
  const uint8_t* data_;
  size_t size_;
};

}  // namespace aic
