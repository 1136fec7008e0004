// GridSample's sampling rules, shared by the reference kernel
// (grid_sample.cc) and the CPU backend's native one: modes, padding, and how
// a normalized grid coordinate becomes a pixel coordinate, as
// torch.nn.functional.grid_sample does it (the suite's expected values come
// from PyTorch).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "absl/status/statusor.h"
#include "graph/graph.h"

namespace aic {

enum class GridMode { kBilinear, kNearest, kBicubic };
enum class GridPadding { kZeros, kBorder, kReflection };

struct GridSampler {
  GridMode mode;
  GridPadding padding;
  bool align_corners;

  // [-1, 1] to pixel coordinates.
  double Unnormalize(double c, int64_t size) const {
    return align_corners ? (c + 1) / 2 * static_cast<double>(size - 1)
                         : ((c + 1) * static_cast<double>(size) - 1) / 2;
  }

  static double Reflect(double c, double twice_low, double twice_high) {
    if (twice_low == twice_high) return 0;
    const double mn = twice_low / 2, span = (twice_high - twice_low) / 2;
    c = std::fabs(c - mn);
    const double extra = std::fmod(c, span);
    const int64_t flips = static_cast<int64_t>(std::floor(c / span));
    return flips % 2 == 0 ? extra + mn : span - extra + mn;
  }

  // Applies border / reflection padding to a pixel coordinate.
  double Pad(double c, int64_t size) const {
    const double hi = static_cast<double>(size - 1);
    if (padding == GridPadding::kBorder) return std::clamp(c, 0.0, hi);
    if (padding == GridPadding::kReflection) {
      c = align_corners ? Reflect(c, 0, 2 * hi) : Reflect(c, -1, 2 * static_cast<double>(size) - 1);
      return std::clamp(c, 0.0, hi);
    }
    return c;
  }
};

// The node's mode and padding (mode names by opset: bilinear / bicubic
// before 20, linear / cubic from 20); an error naming the node otherwise.
absl::StatusOr<GridSampler> ParseGridSampler(const Node& node, int64_t opset);

}  // namespace aic
