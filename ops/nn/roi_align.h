// RoiAlign's sampling rules, shared by the reference kernel (pool_roi.cc)
// and the CPU backend's (exec/cpu/kernels/roi_align.h): the attributes, each
// region's bins and their bilinear sample points, as the ONNX spec and ONNX
// Runtime define them (opset 16 added coordinate_transformation_mode with
// half_pixel as the default; opset 10 behaves as output_half_pixel).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace aic {

struct RoiAlignParams {
  int64_t out_h = 1, out_w = 1;
  int64_t sampling_ratio = 0;  // 0: ceil(region size / bins) samples per bin side
  double spatial_scale = 1.0;
  bool is_max = false;
  bool half_pixel = true;

  static RoiAlignParams Of(const Node& n, int64_t opset) {
    RoiAlignParams p;
    p.out_h = n.GetInt("output_height", 1);
    p.out_w = n.GetInt("output_width", 1);
    p.sampling_ratio = n.GetInt("sampling_ratio", 0);
    p.spatial_scale = n.GetFloat("spatial_scale", 1.0f);
    p.is_max = n.GetString("mode", "avg") == "max";
    p.half_pixel = n.GetString("coordinate_transformation_mode", opset >= 16 ? "half_pixel" : "output_half_pixel") ==
                   "half_pixel";
    return p;
  }
};

// One region's bins: their origin and size in input pixels and the samples
// per bin side.
struct RoiGeometry {
  double x0, y0, bin_w, bin_h;
  int64_t grid_h, grid_w;
  double count;  // samples averaged per bin (at least 1)

  static RoiGeometry Of(const RoiAlignParams& p, const double roi[4]) {
    const double offset = p.half_pixel ? 0.5 : 0.0;
    RoiGeometry g;
    g.x0 = roi[0] * p.spatial_scale - offset;
    g.y0 = roi[1] * p.spatial_scale - offset;
    double rw = roi[2] * p.spatial_scale - offset - g.x0, rh = roi[3] * p.spatial_scale - offset - g.y0;
    if (!p.half_pixel) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    g.bin_h = rh / static_cast<double>(p.out_h);
    g.bin_w = rw / static_cast<double>(p.out_w);
    g.grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(rh / static_cast<double>(p.out_h)));
    g.grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(rw / static_cast<double>(p.out_w)));
    g.count = static_cast<double>(std::max<int64_t>(g.grid_h * g.grid_w, 1));
    return g;
  }
  // Sample (iy, ix) of bin (ph, pw), in input pixels.
  double SampleY(int64_t ph, int64_t iy) const {
    return y0 + static_cast<double>(ph) * bin_h + (static_cast<double>(iy) + 0.5) * bin_h / static_cast<double>(grid_h);
  }
  double SampleX(int64_t pw, int64_t ix) const {
    return x0 + static_cast<double>(pw) * bin_w + (static_cast<double>(ix) + 0.5) * bin_w / static_cast<double>(grid_w);
  }
};

// Bilinear interpolation taps at (y, x) of an h x w plane, as RoiAlign
// defines them: samples more than one pixel outside contribute nothing,
// coordinates clamp to the last row and column.
struct RoiSample {
  bool valid = false;
  int64_t off[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

inline RoiSample BilinearRoiSample(double y, double x, int64_t h, int64_t w) {
  RoiSample s;
  if (y < -1.0 || y > static_cast<double>(h) || x < -1.0 || x > static_cast<double>(w)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t y_lo = static_cast<int64_t>(y), x_lo = static_cast<int64_t>(x), y_hi, x_hi;
  if (y_lo >= h - 1) {
    y_hi = y_lo = h - 1;
    y = static_cast<double>(y_lo);
  } else {
    y_hi = y_lo + 1;
  }
  if (x_lo >= w - 1) {
    x_hi = x_lo = w - 1;
    x = static_cast<double>(x_lo);
  } else {
    x_hi = x_lo + 1;
  }
  double ly = y - static_cast<double>(y_lo), lx = x - static_cast<double>(x_lo);
  double hy = 1.0 - ly, hx = 1.0 - lx;
  s.valid = true;
  s.off[0] = y_lo * w + x_lo, s.off[1] = y_lo * w + x_hi;
  s.off[2] = y_hi * w + x_lo, s.off[3] = y_hi * w + x_hi;
  s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
  return s;
}

}  // namespace aic
