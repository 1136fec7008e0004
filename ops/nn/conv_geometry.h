// Sliding-window geometry shared by Conv, ConvTranspose and the pooling ops:
// kernel, strides, dilations, pads (explicit or auto_pad) and ceil_mode, and
// the output extent they give, for concrete dims (kernels) and symbolic dims
// (shape inference). One place computes "SAME_UPPER" so conv and pool agree.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "graph/graph.h"
#include "graph/shape.h"

namespace aic {

struct Window {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;  // all begins, then all ends (ONNX order)
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;

  size_t rank() const { return kernel.size(); }
  // Span of the dilated kernel along axis k.
  int64_t extent(size_t k) const { return (kernel[k] - 1) * dilations[k] + 1; }
  int64_t pad_begin(size_t k) const { return pads[k]; }
  int64_t pad_end(size_t k) const { return pads[rank() + k]; }
  int64_t kernel_volume() const;
};

// Reads strides, dilations, pads, auto_pad and ceil_mode for a window whose
// kernel is `kernel` (one entry per spatial axis); errors name the node.
absl::StatusOr<Window> ReadWindow(const Node& node, std::vector<int64_t> kernel);

// Output extent along axis k for input extent `in`; for auto_pad SAME_* it
// also writes the pads it implies into w.pads (VALID: zero pads).
int64_t WindowOutputExtent(Window& w, size_t k, int64_t in);
// Resolves all axes: returns the output spatial dims.
std::vector<int64_t> ResolveWindow(Window& w, const std::vector<int64_t>& in_spatial);
// Symbolic version: a known input gives a known output; a symbol flows through
// when the window preserves extent (stride 1 with covering pads or SAME);
// otherwise `fresh`.
Dim WindowOutputDim(const Window& w, size_t k, const Dim& in, const std::function<Dim()>& fresh);

// ConvTranspose: pads and output extents from output_padding, output_shape and
// auto_pad (spec: total padding split per auto_pad; without output_shape,
// SAME_* gives in·stride).
struct TransposeWindow {
  Window window;
  std::vector<int64_t> output_padding;
  std::vector<int64_t> output_shape;  // spatial, empty when not given
};
absl::StatusOr<TransposeWindow> ReadTransposeWindow(const Node& node, std::vector<int64_t> kernel);
// Resolves pads and returns output spatial dims for concrete inputs.
std::vector<int64_t> ResolveTransposeWindow(TransposeWindow& t, const std::vector<int64_t>& in_spatial);

// Floor division (Python's //), for pads computed from possibly negative totals.
int64_t FloorDiv(int64_t a, int64_t b);

}  // namespace aic
