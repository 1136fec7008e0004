// The innermost dim is a memcpy when its source stride is 1, a tiled
// transpose where another dim is contiguous (transpose_blocks.h), else a
// strided loop by element size; rows of it are spread over threads.
#include "exec/cpu/kernels/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "exec/cpu/kernels/parallel.h"
#include "exec/cpu/kernels/transpose_blocks.h"
#include "ops/util/broadcast.h"

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

}  // namespace

StridedCopyPlan MakeStridedCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& starts,
                                const std::vector<int64_t>& steps, const std::vector<int64_t>& out_dims,
                                int64_t elem_size) {
  std::vector<int64_t> dense = ContiguousStrides(in_dims), strides(in_dims.size());
  int64_t offset = 0;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    offset += starts[i] * dense[i];
    strides[i] = steps[i] * dense[i];
  }
  return Collapse(out_dims, strides, offset, elem_size);
}

StridedCopyPlan MakeCopy(const std::vector<int64_t>& out_dims, const std::vector<int64_t>& src_strides,
                         int64_t offset, int64_t elem_size) {
  return Collapse(out_dims, src_strides, offset, elem_size);
}

StridedCopyPlan MakeTransposeCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& perm,
                                  int64_t elem_size) {
  std::vector<int64_t> dense = ContiguousStrides(in_dims), out(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    out[i] = in_dims[perm[i]];
    strides[i] = dense[perm[i]];
  }
  return Collapse(out, strides, 0, elem_size);
}

StridedCopyPlan MakeTileCopy(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& repeats,
                             int64_t elem_size) {
  std::vector<int64_t> dense = ContiguousStrides(in_dims), out, strides;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    out.insert(out.end(), {repeats[i], in_dims[i]});
    strides.insert(strides.end(), {0, dense[i]});
  }
  return Collapse(out, strides, 0, elem_size);
}

namespace {

// A contiguous row of a few hundred bytes at most (an attention head's 64
// floats): fixed-size moves the compiler inlines, not a call to memcpy
// per row, which cost as much as the copy on [8,512,12,64] -> [8,12,512,64].
inline void CopyRow(char* o, const char* s, int64_t n) {
  if (n > 512) {
    std::memcpy(o, s, static_cast<size_t>(n));
    return;
  }
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) __builtin_memcpy(o + i, s + i, 32);
  for (; i + 8 <= n; i += 8) __builtin_memcpy(o + i, s + i, 8);
  for (; i < n; ++i) o[i] = s[i];
}

template <typename T>
void StridedRow(const T* src, int64_t stride, T* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i * stride];
}

}  // namespace

void RunStridedCopy(const StridedCopyPlan& p, const void* in, void* out) {
  if (p.elements == 0) return;
  if (TransposeInBlocks(p, in, out)) return;
  const auto rank = static_cast<int64_t>(p.dims.size());
  const int64_t inner = p.dims.back(), inner_stride = p.strides.back();
  const int64_t rows = p.elements / inner;
  const int64_t row_bytes = inner * p.elem_size;
  // The rows' order: the output's, or, for rows of a cache line or more read
  // from far apart (a Transpose that keeps the last axis, [8,512,12,64] ->
  // [8,12,512,64]), the source's: scattered loads stall on every row, while
  // scattered stores of whole lines drain from the store buffer (2.5x on that
  // Transpose). Shorter rows keep the output order, so that no line is
  // written in pieces far apart in time.
  std::vector<int64_t> axes;  // outer dims, outermost first
  for (int64_t d = 0; d + 1 < rank; ++d) axes.push_back(d);
  const std::vector<int64_t> dst_stride = ContiguousStrides(p.dims);  // the output is dense
  if (inner_stride == 1 && row_bytes >= 64) {
    std::stable_sort(axes.begin(), axes.end(), [&](int64_t a, int64_t b) { return p.strides[a] > p.strides[b]; });
  }
  const auto outer = static_cast<int64_t>(axes.size());
  // Rows go in runs of about 4K elements: a run finds its first row by
  // division, the rest by stepping an odometer (a division per dim per row
  // cost as much as a short row's copy).
  const int64_t per_run = std::max<int64_t>(1, 4096 / inner);
  const int64_t runs = (rows + per_run - 1) / per_run;
  ParallelFor(runs, per_run * inner, [&](int64_t run) {
    int64_t first = run * per_run, last = std::min(rows, first + per_run);
    // On the stack for the usual ranks: a heap vector per run was 3% of a
    // [8, 512, 2304] -> [8, 512, 768] half slice (820 runs).
    absl::InlinedVector<int64_t, 8> idx(static_cast<size_t>(std::max<int64_t>(outer, 1)), 0);
    int64_t src = p.offset, dst = 0;
    for (int64_t a = outer - 1, rest = first; a >= 0; --a) {
      int64_t d = axes[a];
      idx[a] = rest % p.dims[d];
      rest /= p.dims[d];
      src += idx[a] * p.strides[d];
      dst += idx[a] * dst_stride[d];
    }
    for (int64_t row = first; row < last; ++row) {
      const char* s = static_cast<const char*>(in) + src * p.elem_size;
      char* o = static_cast<char*>(out) + dst * p.elem_size;
      if (inner_stride == 1) {
        CopyRow(o, s, row_bytes);
      } else {
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
      }
      // The next row: step the odometer from the innermost axis of the order.
      for (int64_t a = outer - 1; a >= 0; --a) {
        int64_t d = axes[a];
        src += p.strides[d];
        dst += dst_stride[d];
        if (++idx[a] < p.dims[d]) break;
        src -= idx[a] * p.strides[d];
        dst -= idx[a] * dst_stride[d];
        idx[a] = 0;
      }
    }
  });
}

}  // namespace aic::cpu::kernels
