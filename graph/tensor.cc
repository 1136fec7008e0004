#include "graph/tensor.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/half.h"

namespace aic {

namespace {
constexpr size_t kAlignment = 64;

// size rounded up to whole 64-byte lines (at least one): what an owned
// buffer allocates.
size_t AllocatedSize(size_t size) {
  size_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
  return rounded == 0 ? kAlignment : rounded;
}

uint8_t* AlignedAlloc(size_t size) {
  auto* p = static_cast<uint8_t*>(std::aligned_alloc(kAlignment, AllocatedSize(size)));
  AIC_CHECK(p != nullptr, "out of memory allocating ", size, " bytes");
  return p;
}
}  // namespace

std::shared_ptr<Buffer> Buffer::AllocateUninitialized(size_t size) {
  std::shared_ptr<Buffer> b(new Buffer());
  b->data_ = AlignedAlloc(size);
  b->size_ = size;
  b->writable_ = true;
  b->aligned_alloc_ = true;
  return b;
}

std::shared_ptr<Buffer> Buffer::Allocate(size_t size) {
  std::shared_ptr<Buffer> b = AllocateUninitialized(size);
  std::memset(b->data_, 0, AllocatedSize(size));
  return b;
}

std::shared_ptr<Buffer> Buffer::Borrow(const void* data, size_t size,
                                       std::shared_ptr<const void> keep_alive) {
  std::shared_ptr<Buffer> b(new Buffer());
  b->data_ = const_cast<uint8_t*>(static_cast<const uint8_t*>(data));
  b->size_ = size;
  b->writable_ = false;
  b->keep_alive_ = std::move(keep_alive);
  return b;
}

std::shared_ptr<Buffer> Buffer::FromString(std::string&& bytes) {
  std::shared_ptr<Buffer> b(new Buffer());
  b->owned_string_ = std::move(bytes);
  b->data_ = reinterpret_cast<uint8_t*>(b->owned_string_.data());
  b->size_ = b->owned_string_.size();
  b->writable_ = true;
  return b;
}

std::shared_ptr<Buffer> Buffer::Deferred(size_t size, std::function<void(uint8_t* dst)> fill) {
  AIC_CHECK(fill != nullptr, "Buffer::Deferred needs a fill function");
  std::shared_ptr<Buffer> b(new Buffer());
  b->size_ = size;
  b->restore_ = std::move(fill);
  b->released_.store(true, std::memory_order_release);
  return b;
}

Buffer::~Buffer() { Free(); }

void Buffer::Free() {
  if (aligned_alloc_) std::free(data_);
  data_ = nullptr;
  aligned_alloc_ = false;
  keep_alive_.reset();
  std::string().swap(owned_string_);
}

void Buffer::Release(std::function<void(uint8_t* dst)> restore) {
  AIC_CHECK(restore != nullptr && !released(), "Buffer::Release needs a restore function, once");
  Free();
  writable_ = false;
  restore_ = std::move(restore);
  released_.store(true, std::memory_order_release);
}

void Buffer::Restore() const {
  // Restores are rare (a second compile of the same weights, writing the
  // model out): one lock for all buffers. Recursive: a restore may read
  // another released buffer (a deferred float weight widens its released
  // half original, whose restore unpacks a plan's packed copy).
  static std::recursive_mutex* mu = new std::recursive_mutex;
  std::lock_guard<std::recursive_mutex> lock(*mu);
  if (!released_.load(std::memory_order_relaxed)) return;  // another thread restored it
  // data() is logically const: the bytes it returns are the same bytes.
  auto* self = const_cast<Buffer*>(this);
  self->data_ = AlignedAlloc(size_);
  self->aligned_alloc_ = true;
  self->writable_ = true;
  self->restore_(self->data_);
  self->restore_ = nullptr;
  released_.store(false, std::memory_order_release);
}

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string DimsToString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, Device device)
    : dtype_(dtype), dims_(std::move(dims)), device_(device) {
  if (dtype_ == DType::kString) {
    strings_.resize(static_cast<size_t>(num_elements()));
  } else {
    buffer_ = Buffer::Allocate(byte_size());
  }
}

Tensor::Tensor(DType dtype, std::vector<int64_t> dims, std::shared_ptr<Buffer> buffer,
               size_t byte_offset)
    : dtype_(dtype), dims_(std::move(dims)), buffer_(std::move(buffer)), byte_offset_(byte_offset) {
  AIC_CHECK(buffer_ != nullptr && byte_offset_ + byte_size() <= buffer_->size(),
            "tensor of ", byte_size(), " bytes does not fit its buffer");
}

Tensor Tensor::FromStrings(std::vector<std::string> values, std::vector<int64_t> dims) {
  Tensor t(DType::kString, std::move(dims));
  AIC_CHECK(static_cast<int64_t>(values.size()) == t.num_elements(), "FromStrings size mismatch");
  t.strings_ = std::move(values);
  return t;
}

int64_t Tensor::num_elements() const { return NumElements(dims_); }

const void* Tensor::raw_data() const {
  if (!buffer_) return nullptr;
  return buffer_->data() + byte_offset_;
}

void* Tensor::mutable_raw_data() {
  if (!buffer_) return nullptr;
  return buffer_->mutable_data() + byte_offset_;
}

Tensor Tensor::WithDims(std::vector<int64_t> dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  AIC_CHECK(t.num_elements() == num_elements(), "WithDims changes the element count");
  return t;
}

Tensor Tensor::Clone() const {
  if (dtype_ == DType::kString || byte_size() == 0) {
    Tensor t(dtype_, dims_, device_);
    t.strings_ = strings_;
    return t;
  }
  // Every byte is written next: no zeroing first (an output copied out of a
  // CPU plan paid twice for its size, 0.3 ms of 0.8 on 12 MB).
  Tensor t(dtype_, dims_, Buffer::AllocateUninitialized(byte_size()));
  t.device_ = device_;
  std::memcpy(t.mutable_raw_data(), raw_data(), byte_size());
  return t;
}

bool Tensor::BitwiseEquals(const Tensor& other) const {
  if (dtype_ != other.dtype_ || dims_ != other.dims_) return false;
  if (dtype_ == DType::kString) return strings_ == other.strings_;
  size_t n = byte_size();
  return n == 0 || std::memcmp(raw_data(), other.raw_data(), n) == 0;
}

double Tensor::ElementAsDouble(int64_t i) const {
  switch (dtype_) {
    case DType::kFloat: return data<float>()[i];
    case DType::kDouble: return data<double>()[i];
    case DType::kFloat16: return HalfToFloat(data<uint16_t>()[i]);
    case DType::kBFloat16: return BFloat16ToFloat(data<uint16_t>()[i]);
    case DType::kInt8: return data<int8_t>()[i];
    case DType::kInt16: return data<int16_t>()[i];
    case DType::kInt32: return data<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(data<int64_t>()[i]);
    case DType::kUint8: return data<uint8_t>()[i];
    case DType::kUint16: return data<uint16_t>()[i];
    case DType::kUint32: return data<uint32_t>()[i];
    case DType::kUint64: return static_cast<double>(data<uint64_t>()[i]);
    case DType::kBool: return data<uint8_t>()[i] ? 1.0 : 0.0;
    default: AIC_CHECK(false, "ElementAsDouble on ", DTypeName(dtype_));
  }
  return 0;
}

std::string Tensor::DebugString(int max_elements) const {
  std::string s = absl::StrCat(DTypeName(dtype_), DimsToString(dims_), " {");
  int64_t n = num_elements();
  for (int64_t i = 0; i < n && i < max_elements; ++i) {
    if (i) s += ", ";
    if (dtype_ == DType::kString) {
      absl::StrAppend(&s, "\"", strings_[static_cast<size_t>(i)], "\"");
    } else if (IsFloatingPoint(dtype_) || IsInteger(dtype_) || dtype_ == DType::kBool) {
      absl::StrAppend(&s, ElementAsDouble(i));
    } else {
      s += "?";
    }
  }
  if (n > max_elements) s += ", ...";
  return s + "}";
}

}  // namespace aic
