// Resize's (and Upsample's) parameters, however the opset spells them
// (Upsample and Resize-10 behave as asymmetric coordinates with floor
// rounding; opset 11 adds roi and the coordinate modes, 18 axes, antialias and
// the aspect policy), and the source coordinate an output index reads. The
// one decoder for the reference kernel, shape inference, traits and the CPU
// lowerings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "graph/graph.h"

namespace aic {

struct ResizeAttrs {
  std::string mode = "nearest";
  std::string coord = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
  bool antialias = false;
  std::string aspect_policy = "stretch";
  std::vector<int64_t> axes;  // empty: all
};

// Upsample (node.op_type) and Resize at `opset`.
ResizeAttrs ResizeAttrsOf(const Node& node, int64_t opset);
// InvalidArgument for a mode, coordinate mode, nearest mode or policy the standard does not have.
absl::Status ValidateResizeAttrs(const ResizeAttrs& a);

// Input indices of scales / sizes / roi for a node (-1: none at this opset).
struct ResizeInputs {
  int roi = -1, scales = -1, sizes = -1;
};
ResizeInputs ResizeInputsOf(const Node& node, int64_t opset);

// Where output index x of an axis (output extent out_width, input extent
// in_width, scale) reads from in the input, as the standard's coordinate
// transformation `coord` defines it (roi_start/roi_end: tf_crop_and_resize's
// region, in normalized coordinates). A tf_crop_and_resize coordinate outside
// [0, in_width - 1] means "extrapolate".
double ResizeSourceCoordinate(const std::string& coord, int64_t x, int64_t out_width, int64_t in_width, double scale,
                              double roi_start = 0, double roi_end = 1);

// The input index output index x of an axis copies in nearest mode: the
// source coordinate rounded by `a.nearest_mode`, clamped to the axis, as the
// reference kernel's one nearest tap (ops/tensor/resize.cc); -1 where
// tf_crop_and_resize extrapolates.
int64_t ResizeNearestIndex(const ResizeAttrs& a, int64_t x, int64_t out_width, int64_t in_width, double scale,
                           double roi_start = 0, double roi_end = 1);

// An input index and its weight: along each axis an output element is the
// weighted sum of its taps, and over all axes the sum of products of one tap
// per axis (1 tap for nearest, 2 for linear, 4 for cubic, more with
// antialias; weights in double exactly as ONNX's numpy reference, its
// "ratio = 1 on integer coordinates" and edge clamping included). The rule of
// the reference kernel, and of the CPU backend's separable kernel.
struct ResizeTap {
  int64_t index;
  double weight;
};
struct ResizeAxisTaps {
  std::vector<ResizeTap> taps;
  bool outside = false;  // tf_crop_and_resize: extrapolate
};
ResizeAxisTaps ResizeTapsFor(int64_t x, int64_t width, int64_t out_width, double scale, const ResizeAttrs& a,
                             double roi_start = 0, double roi_end = 1);

}  // namespace aic
