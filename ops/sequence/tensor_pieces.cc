#include "ops/sequence/tensor_pieces.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace aic {

namespace {

// Copies n elements from src[src_off..] to dst[dst_off..] (same dtype).
void CopyElements(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t n) {
  if (n <= 0) return;
  if (src.dtype() == DType::kString) {
    for (int64_t i = 0; i < n; ++i) {
      dst.mutable_strings()[static_cast<size_t>(dst_off + i)] =
          src.strings()[static_cast<size_t>(src_off + i)];
    }
    return;
  }
  const size_t es = ElementSize(src.dtype());
  std::memcpy(static_cast<uint8_t*>(dst.mutable_raw_data()) + static_cast<size_t>(dst_off) * es,
              static_cast<const uint8_t*>(src.raw_data()) + static_cast<size_t>(src_off) * es,
              static_cast<size_t>(n) * es);
}

// Product of dims[begin, end).
int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

}  // namespace

Tensor SliceAlongAxis(const Tensor& t, int64_t axis, int64_t start, int64_t length) {
  const std::vector<int64_t>& dims = t.dims();
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = Product(dims, 0, a);
  const int64_t inner = Product(dims, a + 1, dims.size());
  std::vector<int64_t> out_dims = dims;
  out_dims[a] = length;
  Tensor out(t.dtype(), out_dims);
  for (int64_t o = 0; o < outer; ++o) {
    CopyElements(t, (o * dims[a] + start) * inner, out, o * length * inner, length * inner);
  }
  return out;
}

Tensor TakeAlongAxis(const Tensor& t, int64_t axis, int64_t index) {
  Tensor slice = SliceAlongAxis(t, axis, index, 1);
  std::vector<int64_t> dims = slice.dims();
  dims.erase(dims.begin() + axis);
  return slice.WithDims(std::move(dims));
}

absl::StatusOr<Tensor> ConcatAlongAxis(const std::vector<Tensor>& parts, int64_t axis,
                                       bool new_axis) {
  if (parts.empty()) return absl::InvalidArgumentError("nothing to concatenate");
  // View every part as having the concatenation axis (size 1 when stacking).
  std::vector<Tensor> views;
  for (const Tensor& p : parts) {
    std::vector<int64_t> dims = p.dims();
    if (new_axis) {
      if (axis < 0 || axis > static_cast<int64_t>(dims.size())) {
        return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " out of range"));
      }
      dims.insert(dims.begin() + axis, 1);
    }
    views.push_back(p.WithDims(std::move(dims)));
  }
  const std::vector<int64_t>& first = views[0].dims();
  const size_t a = static_cast<size_t>(axis);
  if (axis < 0 || a >= first.size()) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " out of range"));
  }
  int64_t total = 0;
  for (const Tensor& v : views) {
    if (v.dtype() != views[0].dtype()) {
      return absl::InvalidArgumentError(absl::StrCat("mixed dtypes ", DTypeName(views[0].dtype()),
                                                     " and ", DTypeName(v.dtype())));
    }
    bool same = v.rank() == views[0].rank();
    for (size_t i = 0; same && i < first.size(); ++i) same = i == a || v.dims()[i] == first[i];
    if (!same) {
      return absl::InvalidArgumentError(absl::StrCat("cannot join shapes ", DimsToString(first),
                                                     " and ", DimsToString(v.dims()),
                                                     " along axis ", axis));
    }
    total += v.dims()[a];
  }
  std::vector<int64_t> out_dims = first;
  out_dims[a] = total;
  Tensor out(views[0].dtype(), out_dims);
  const int64_t outer = Product(first, 0, a);
  const int64_t inner = Product(first, a + 1, first.size());
  int64_t offset = 0;  // along the axis
  for (const Tensor& v : views) {
    const int64_t len = v.dims()[a];
    for (int64_t o = 0; o < outer; ++o) {
      CopyElements(v, o * len * inner, out, (o * total + offset) * inner, len * inner);
    }
    offset += len;
  }
  return out;
}

}  // namespace aic
