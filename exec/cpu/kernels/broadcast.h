// The one strided broadcast driver behind every native elementwise op: ONNX
// (numpy) broadcasting of up to three operands onto a dense output. Shapes
// are collapsed once at compile time (size-1 output dims dropped, dims merged
// while every operand stays contiguous across them), so the run time loop is
// "for each outer index, call a row kernel on the innermost run", where each
// operand's innermost stride is 1 (contiguous) or 0 (a broadcast scalar).
// Row kernels are plain loops the compiler vectorizes; outer rows (or pieces
// of a long row) are spread over threads.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace aic::cpu::kernels {

inline constexpr int kMaxOperands = 3;

// y[i] = f(in[0][i * stride[0]], in[1][i * stride[1]], ...) for i < n; strides
// are in elements and each 0 or 1.
using RowFn = void (*)(const void* const* in, const int64_t* stride, void* out, int64_t n);

struct BroadcastLoop {
  int operands = 0;
  std::vector<int64_t> outer;                                  // collapsed outer dims
  std::vector<std::array<int64_t, kMaxOperands>> outer_strides;  // bytes per step of each outer dim
  int64_t inner = 1;                                           // innermost run length
  std::array<int64_t, kMaxOperands> inner_stride{};            // 0 or 1 (elements)
  std::array<int64_t, kMaxOperands> elem_size{};
  int64_t out_elem_size = 0;
  int64_t out_elements = 0;
};

// The loop writing `out` (dense) from operands of `in_dims` that broadcast to
// it; nullopt when one does not.
std::optional<BroadcastLoop> MakeBroadcastLoop(const std::vector<int64_t>& out,
                                               const std::vector<std::vector<int64_t>>& in_dims,
                                               const std::vector<int64_t>& in_elem_sizes,
                                               int64_t out_elem_size);

void RunBroadcast(const BroadcastLoop& loop, const void* const* in, void* out, RowFn fn);

// y[i] = in[0][i * stride[0]] for elements of `elem_size` bytes (1, 2, 4, 8):
// Expand as a one-operand broadcast. Null for other sizes.
RowFn CopyRowKernel(int64_t elem_size);

}  // namespace aic::cpu::kernels
