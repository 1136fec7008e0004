// The innermost dim is a memcpy when its source stride is 1, else a strided
// loop by element size; rows of it are spread over threads.
#include "exec/cpu/kernels/strided_copy.h"

#include <cstring>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

namespace {

// The plan over output dims with the given source strides: size-1 dims
// dropped, a dim merged into the one inside it where the source stays
// contiguous across them.
StridedCopyPlan Collapse(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& src_strides,
                         int64_t offset, int64_t elem_size) {
  StridedCopyPlan p;
  p.elem_size = elem_size;
  p.offset = offset;
  p.elements = 1;
  std::vector<int64_t> dims, strides;  // innermost first while collapsing
  for (size_t i = out_dims.size(); i-- > 0;) {
    p.elements *= out_dims[i];
    if (out_dims[i] == 1) continue;
    if (!dims.empty() && strides.back() * dims.back() == src_strides[i]) {
      dims.back() *= out_dims[i];
      continue;
    }
    dims.push_back(out_dims[i]);
    strides.push_back(src_strides[i]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    strides.push_back(1);
  }
  p.dims.assign(dims.rbegin(), dims.rend());
  p.strides.assign(strides.rbegin(), strides.rend());
  return p;
}

std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

}  // namespace

StridedCopyPlan MakeStridedCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& starts,
                                const std::vector<int64_t>& steps, const std::vector<int64_t>& out_dims,
                                int64_t elem_size) {
  std::vector<int64_t> dense = DenseStrides(in_dims), strides(in_dims.size());
  int64_t offset = 0;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    offset += starts[i] * dense[i];
    strides[i] = steps[i] * dense[i];
  }
  return Collapse(out_dims, strides, offset, elem_size);
}

StridedCopyPlan MakeTransposeCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& perm,
                                  int64_t elem_size) {
  std::vector<int64_t> dense = DenseStrides(in_dims), out(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out[i] = in_dims[perm[i]];
    strides[i] = dense[perm[i]];
  }
  return Collapse(out, strides, 0, elem_size);
}

StridedCopyPlan MakeTileCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& repeats,
                             int64_t elem_size) {
  std::vector<int64_t> dense = DenseStrides(in_dims), out, strides;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    out.insert(out.end(), {repeats[i], in_dims[i]});
    strides.insert(strides.end(), {0, dense[i]});
  }
  return Collapse(out, strides, 0, elem_size);
}

namespace {

template <typename T>
void StridedRow(const T* src, int64_t stride, T* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

}  // namespace

void RunStridedCopy(const StridedCopyPlan& p, const void* in, void* out) {
  if (p.elements == 0) return;
  auto rank = static_cast<int64_t>(p.dims.size());
  int64_t inner = p.dims.back(), inner_stride = p.strides.back();
  int64_t rows = p.elements / inner;
  ParallelFor(rows, inner, [&](int64_t row) {
    int64_t src = p.offset;
    int64_t rest = row;
    for (int64_t d = rank - 2; d >= 0; --d) {
      src += (rest % p.dims[d]) * p.strides[d];
      rest /= p.dims[d];
    }
    const char* s = static_cast<const char*>(in) + src * p.elem_size;
    char* o = static_cast<char*>(out) + row * inner * p.elem_size;
    if (inner_stride == 1) {
      std::memcpy(o, s, static_cast<size_t>(inner * p.elem_size));
      return;
    }
    switch (p.elem_size) {
      case 1: StridedRow(reinterpret_cast<const uint8_t*>(s), inner_stride, reinterpret_cast<uint8_t*>(o), inner); break;
      case 2: StridedRow(reinterpret_cast<const uint16_t*>(s), inner_stride, reinterpret_cast<uint16_t*>(o), inner); break;
      case 4: StridedRow(reinterpret_cast<const uint32_t*>(s), inner_stride, reinterpret_cast<uint32_t*>(o), inner); break;
      case 8: StridedRow(reinterpret_cast<const uint64_t*>(s), inner_stride, reinterpret_cast<uint64_t*>(o), inner); break;
      default:
        for (int64_t i = 0; i < inner; ++i) {
          std::memcpy(o + i * p.elem_size, s + i * inner_stride * p.elem_size, static_cast<size_t>(p.elem_size));
        }
    }
  });
}

}  // namespace aic::cpu::kernels
