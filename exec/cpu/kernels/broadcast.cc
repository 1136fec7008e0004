#include "exec/cpu/kernels/broadcast.h"

#include <cstring>

#include "exec/cpu/kernels/parallel.h"

namespace aic::cpu::kernels {

std::optional<BroadcastLoop> MakeBroadcastLoop(const std::vector<int64_t>& out,
                                               const std::vector<std::vector<int64_t>>& in_dims,
                                               const std::vector<int64_t>& in_elem_sizes,
                                               int64_t out_elem_size) {
  BroadcastLoop loop;
  loop.operands = static_cast<int>(in_dims.size());
  if (loop.operands < 1 || loop.operands > kMaxOperands || in_elem_sizes.size() != in_dims.size()) {
    return std::nullopt;
  }
  size_t rank = out.size();
  int ops = loop.operands;
  // Per output dim, each operand's stride in elements (0 where it broadcasts).
  std::vector<std::array<int64_t, kMaxOperands>> strides(rank);
  for (int k = 0; k < ops; ++k) {
    const std::vector<int64_t>& d = in_dims[k];
    if (d.size() > rank) return std::nullopt;
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      size_t j = i + d.size();  // index into d, offset by rank
      int64_t dim = j >= rank ? d[j - rank] : 1;
      if (dim != out[i] && dim != 1) return std::nullopt;
      strides[i][k] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
    loop.elem_size[k] = in_elem_sizes[k];
  }
  loop.out_elem_size = out_elem_size;
  loop.out_elements = 1;
  for (int64_t d : out) loop.out_elements *= d;
  // Collapse from the innermost dim: drop size-1 dims, merge a dim into the
  // run inside it when every operand is contiguous across the two.
  std::vector<int64_t> dims;
  std::vector<std::array<int64_t, kMaxOperands>> st;
  for (size_t i = rank; i-- > 0;) {
    if (out[i] == 1) continue;
    if (!dims.empty()) {
      bool merge = true;
      for (int k = 0; k < ops; ++k) merge = merge && strides[i][k] == st.back()[k] * dims.back();
      if (merge) {
        dims.back() *= out[i];
        continue;
      }
    }
    dims.push_back(out[i]);
    st.push_back(strides[i]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    st.push_back({});
  }
  // The innermost collapsed dim is the run; an operand strided along it by
  // more than 1 cannot be (it would have merged), so its stride is 0 or 1.
  loop.inner = dims[0];
  for (int k = 0; k < ops; ++k) loop.inner_stride[k] = st[0][k];
  for (size_t i = dims.size(); i-- > 1;) {  // outermost first
    loop.outer.push_back(dims[i]);
    std::array<int64_t, kMaxOperands> bytes{};
    for (int k = 0; k < ops; ++k) bytes[k] = st[i][k] * loop.elem_size[k];
    loop.outer_strides.push_back(bytes);
  }
  return loop;
}

void RunBroadcast(const BroadcastLoop& loop, const void* const* in, void* out, RowFn fn) {
  if (loop.out_elements == 0) return;
  int64_t rows = loop.out_elements / loop.inner;
  int64_t pieces = PiecesPerRow(rows, loop.inner);
  int64_t piece = (loop.inner + pieces - 1) / pieces;
  int ops = loop.operands;
  ParallelFor(rows * pieces, piece, [&](int64_t item) {
    int64_t row = item / pieces;
    int64_t begin = (item % pieces) * piece;
    int64_t n = loop.inner - begin < piece ? loop.inner - begin : piece;
    if (n <= 0) return;
    const void* ptrs[kMaxOperands];
    for (int k = 0; k < ops; ++k) {
      ptrs[k] = static_cast<const char*>(in[k]) + begin * loop.inner_stride[k] * loop.elem_size[k];
    }
    int64_t rest = row;
    for (size_t i = loop.outer.size(); i-- > 0;) {  // innermost outer dim first
      int64_t idx = rest % loop.outer[i];
      rest /= loop.outer[i];
      for (int k = 0; k < ops; ++k) ptrs[k] = static_cast<const char*>(ptrs[k]) + idx * loop.outer_strides[i][k];
    }
    fn(ptrs, loop.inner_stride.data(), static_cast<char*>(out) + (row * loop.inner + begin) * loop.out_elem_size, n);
  });
}

namespace {

template <typename T>
AIC_KERNEL_CLONES void CopyRow(const void* const* in, const int64_t* stride, void* out, int64_t n) {
  const T* x = static_cast<const T*>(in[0]);
  T* y = static_cast<T*>(out);
  if (stride[0] == 0) {
    T v = x[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = v;
  } else {
    std::memcpy(y, x, static_cast<size_t>(n) * sizeof(T));
  }
}

}  // namespace

RowFn CopyRowKernel(int64_t elem_size) {
  switch (elem_size) {
    case 1: return CopyRow<uint8_t>;
    case 2: return CopyRow<uint16_t>;
    case 4: return CopyRow<uint32_t>;
    case 8: return CopyRow<uint64_t>;
    default: return nullptr;
  }
}

}  // namespace aic::cpu::kernels
