// Tensor: dtype, concrete dims, device, and a Buffer. A Buffer either owns
// 64-byte-aligned memory, or borrows bytes that something else keeps alive (a
// memory-mapped model file, or the raw_data string moved out of a parsed
// protobuf), so loading a model never copies its weights. Copying a Tensor is
// shallow: the copies share the buffer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "graph/dtype.h"
#include "support/status.h"

namespace aic {

enum class Device : uint8_t { kCpu, kCuda };

class Buffer {
 public:
  // Zero-initialized owned memory, 64-byte aligned.
  static std::shared_ptr<Buffer> Allocate(size_t size);
  // The same, left uninitialized: for a caller about to write every byte.
  static std::shared_ptr<Buffer> AllocateUninitialized(size_t size);
  // Borrows [data, data+size); `keep_alive` owns whatever backs it.
  static std::shared_ptr<Buffer> Borrow(const void* data, size_t size,
                                        std::shared_ptr<const void> keep_alive);
  // Takes ownership of a string's bytes without copying them.
  static std::shared_ptr<Buffer> FromString(std::string&& bytes);
  // `size` bytes that `fill` writes on the first data(): a value derived
  // from another (a half-precision weight widened to float) that may never be
  // read, or be read once and then released (Release).
  static std::shared_ptr<Buffer> Deferred(size_t size, std::function<void(uint8_t* dst)> fill);

  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const uint8_t* data() const {
    if (released_.load(std::memory_order_acquire)) [[unlikely]] Restore();
    return data_;
  }
  // Only owned buffers are writable; borrowed views (mapped files) are read-only.
  uint8_t* mutable_data() {
    data();
    AIC_CHECK(writable_, "write to a borrowed read-only buffer");
    return data_;
  }
  size_t size() const { return size_; }
  bool writable() const { return writable_; }
  bool borrowed() const { return keep_alive_ != nullptr; }

  // Frees the bytes now; the first data() after this has `restore` write all
  // size() of them into fresh owned memory. For a weight the CPU backend
  // keeps in its own packed layout, whose plain bytes nobody reads while the
  // model runs: a model otherwise holds every weight twice. Safe only where
  // no one else holds a pointer into the bytes (a buffer nothing else shares;
  // the caller checks). Neither this nor data() may race with another call of
  // this on the same buffer.
  void Release(std::function<void(uint8_t* dst)> restore);
  bool released() const { return released_.load(std::memory_order_acquire); }

 private:
  Buffer() = default;
  void Restore() const;  // under a lock: owned memory again, filled by restore_
  void Free();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool writable_ = false;
  bool aligned_alloc_ = false;
  std::shared_ptr<const void> keep_alive_;
  std::string owned_string_;
  std::function<void(uint8_t*)> restore_;
  mutable std::atomic<bool> released_{false};
};

class Tensor {
 public:
  Tensor() = default;
  // Allocates zeroed storage for the given dtype and dims.
  Tensor(DType dtype, std::vector<int64_t> dims, Device device = Device::kCpu);
  // Wraps an existing buffer (which must hold at least the tensor's bytes).
  Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<Buffer> buffer,
         size_t byte_offset = 0);

  template <typename T>
  static Tensor FromVector(const std::vector<T>& values, std::vector<int64_t> dims);
  template <typename T>
  static Tensor Scalar(T value) { return FromVector<T>({value}, {}); }
  static Tensor FromStrings(std::vector<std::string> values, std::vector<int64_t> dims);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  int64_t dim(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t num_elements() const;
  size_t byte_size() const { return ByteSizeOf(dtype_, num_elements()); }
  Device device() const { return device_; }
  bool defined() const { return dtype_ != DType::kUndefined; }

  const void* raw_data() const;
  void* mutable_raw_data();
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(raw_data());
  }
  template <typename T>
  T* mutable_data() {
    return static_cast<T*>(mutable_raw_data());
  }
  template <typename T>
  absl::Span<const T> span() const {
    return absl::Span<const T>(data<T>(), static_cast<size_t>(num_elements()));
  }
  template <typename T>
  absl::Span<T> mutable_span() {
    return absl::Span<T>(mutable_data<T>(), static_cast<size_t>(num_elements()));
  }
  // String tensors keep their elements here instead of in the buffer.
  const std::vector<std::string>& strings() const { return strings_; }
  std::vector<std::string>& mutable_strings() { return strings_; }

  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  size_t byte_offset() const { return byte_offset_; }
  // Same dtype and dims, sharing storage (for Reshape-like views).
  Tensor WithDims(std::vector<int64_t> dims) const;
  // A deep copy into freshly owned memory (writable).
  Tensor Clone() const;
  // Bitwise equality of dtype, dims and contents.
  bool BitwiseEquals(const Tensor& other) const;
  // Element i converted to double (numeric dtypes only; fp16/bf16 included).
  double ElementAsDouble(int64_t i) const;
  std::string DebugString(int max_elements = 8) const;

 private:
  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> dims_;
  Device device_ = Device::kCpu;
  std::shared_ptr<Buffer> buffer_;
  size_t byte_offset_ = 0;
  std::vector<std::string> strings_;
};

template <typename T>
Tensor Tensor::FromVector(const std::vector<T>& values, std::vector<int64_t> dims) {
  Tensor t(DTypeOf<T>::value, std::move(dims));
  AIC_CHECK(static_cast<int64_t>(values.size()) == t.num_elements(), "FromVector size mismatch");
  T* out = t.mutable_data<T>();
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return t;
}

// Number of elements of a dims vector (1 for a scalar).
int64_t NumElements(const std::vector<int64_t>& dims);
std::string DimsToString(const std::vector<int64_t>& dims);

}  // namespace aic
