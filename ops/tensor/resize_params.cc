#include "ops/tensor/resize_params.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "absl/strings/str_cat.h"

namespace aic {

ResizeAttrs ResizeAttrsOf(const Node& node, int64_t opset) {
  bool is_upsample = node.op_type == "Upsample";
  ResizeAttrs a;
  a.mode = node.GetString("mode", "nearest");
  if (is_upsample || opset < 11) {
    a.coord = "asymmetric";
    a.nearest_mode = "floor";
    if (a.mode == "bilinear") a.mode = "linear";
    return a;
  }
  a.coord = node.GetString("coordinate_transformation_mode", "half_pixel");
  a.nearest_mode = node.GetString("nearest_mode", "round_prefer_floor");
  a.cubic_a = node.GetFloat("cubic_coeff_a", -0.75f);
  a.exclude_outside = node.GetInt("exclude_outside", 0) != 0;
  a.extrapolation = node.GetFloat("extrapolation_value", 0.f);
  if (opset >= 18) {
    a.antialias = node.GetInt("antialias", 0) != 0;
    a.aspect_policy = node.GetString("keep_aspect_ratio_policy", "stretch");
    a.axes = node.GetInts("axes");
  }
  return a;
}

absl::Status ValidateResizeAttrs(const ResizeAttrs& a) {
  if (a.mode != "nearest" && a.mode != "linear" && a.mode != "cubic") {
    return absl::InvalidArgumentError(absl::StrCat("unknown mode '", a.mode, "'"));
  }
  static const char* kCoords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                  "align_corners", "asymmetric", "tf_crop_and_resize",
                                  "tf_half_pixel_for_nn"};
  if (std::find(std::begin(kCoords), std::end(kCoords), a.coord) == std::end(kCoords)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown coordinate_transformation_mode '", a.coord, "'"));
  }
  if (a.nearest_mode != "round_prefer_floor" && a.nearest_mode != "round_prefer_ceil" &&
      a.nearest_mode != "floor" && a.nearest_mode != "ceil") {
    return absl::InvalidArgumentError(absl::StrCat("unknown nearest_mode '", a.nearest_mode, "'"));
  }
  if (a.aspect_policy != "stretch" && a.aspect_policy != "not_larger" && a.aspect_policy != "not_smaller") {
    return absl::InvalidArgumentError(absl::StrCat("unknown keep_aspect_ratio_policy '", a.aspect_policy, "'"));
  }
  return absl::OkStatus();
}

ResizeInputs ResizeInputsOf(const Node& node, int64_t opset) {
  bool is_upsample = node.op_type == "Upsample";
  if (is_upsample) return {-1, opset >= 9 ? 1 : -1, -1};
  if (opset < 11) return {-1, 1, -1};
  return {1, 2, 3};
}

double ResizeSourceCoordinate(const std::string& coord, int64_t x, int64_t out_width, int64_t in_width, double scale,
                              double roi_start, double roi_end) {
  double xd = static_cast<double>(x);
  double in_w = static_cast<double>(in_width);
  double out_w = scale * in_w;  // as the reference: not rounded
  if (coord == "align_corners") return out_w == 1 ? 0.0 : xd * (in_w - 1) / (out_w - 1);
  if (coord == "asymmetric") return xd / scale;
  if (coord == "tf_crop_and_resize") {
    double ori = out_w == 1 ? (roi_end - roi_start) * (in_w - 1) / 2
                            : xd * (roi_end - roi_start) * (in_w - 1) / (out_w - 1);
    return ori + roi_start * (in_w - 1);
  }
  if (coord == "pytorch_half_pixel") return out_w == 1 ? -0.5 : (xd + 0.5) / scale - 0.5;
  if (coord == "tf_half_pixel_for_nn") return (xd + 0.5) / scale;
  if (coord == "half_pixel_symmetric") {
    double adjustment = static_cast<double>(out_width) / out_w;
    double center = in_w / 2;
    return center * (1 - adjustment) + (xd + 0.5) / scale - 0.5;
  }
  return (xd + 0.5) / scale - 0.5;  // half_pixel
}

int64_t ResizeNearestIndex(const ResizeAttrs& a, int64_t x, int64_t out_width, int64_t in_width, double scale,
                           double roi_start, double roi_end) {
  double ori = ResizeSourceCoordinate(a.coord, x, out_width, in_width, scale, roi_start, roi_end);
  if (a.coord == "tf_crop_and_resize" && (ori < 0 || ori > static_cast<double>(in_width) - 1)) return -1;
  double fl = std::floor(ori);
  bool integer = ori == fl;
  double r = ori - fl;
  // The reference's two candidate taps are [first, first + 1]; the mode picks one.
  int64_t first = std::clamp<int64_t>(static_cast<int64_t>(fl) - (integer ? 1 : 0), -1, in_width - 1);
  bool upper = integer || (a.nearest_mode == "round_prefer_floor" ? r > 0.5
                           : a.nearest_mode == "round_prefer_ceil" ? r >= 0.5
                           : a.nearest_mode != "floor");
  return std::clamp<int64_t>(first + (upper ? 1 : 0), 0, in_width - 1);
}

namespace {

std::vector<double> CubicCoeffs(double r, double A) {
  return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
          ((A + 2) * r - (A + 3)) * r * r + 1,
          ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1,
          ((A * ((1 - r) + 1) - 5 * A) * ((1 - r) + 1) + 8 * A) * ((1 - r) + 1) - 4 * A};
}

// Antialiased filters stretch the kernel by 1/scale when downsampling.
std::vector<double> AntialiasCoeffs(double r, double scale, bool cubic, double A) {
  scale = std::min(scale, 1.0);
  int64_t support = cubic ? 2 : 1;
  int64_t start = static_cast<int64_t>(std::floor(-static_cast<double>(support) / scale) + 1);
  int64_t n = 2 - 2 * start;
  std::vector<double> c;
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double x = std::fabs((static_cast<double>(start + i) - r) * scale);
    double w;
    if (cubic) {
      w = x < 1 ? ((A + 2) * x - (A + 3)) * x * x + 1
                : x < 2 ? ((A * x - 5 * A) * x + 8 * A) * x - 4 * A : 0;
    } else {
      w = std::clamp(1 - x, 0.0, 1.0);
    }
    c.push_back(w);
    sum += w;
  }
  for (double& w : c) w /= sum;
  return c;
}

std::vector<double> NearestCoeffs(double r, bool integer, const std::string& mode) {
  if (integer) return {0, 1};
  if (mode == "round_prefer_floor") return {r <= 0.5 ? 1.0 : 0.0, r > 0.5 ? 1.0 : 0.0};
  if (mode == "round_prefer_ceil") return {r < 0.5 ? 1.0 : 0.0, r >= 0.5 ? 1.0 : 0.0};
  if (mode == "floor") return {1, 0};
  return {0, 1};
}

}  // namespace

ResizeAxisTaps ResizeTapsFor(int64_t x, int64_t width, int64_t out_width, double scale, const ResizeAttrs& a,
                 double roi_start, double roi_end) {
  ResizeAxisTaps t;
  if (a.mode == "nearest" && !a.exclude_outside) {  // one tap: the rule the CPU backend tabulates too
    int64_t i = ResizeNearestIndex(a, x, out_width, width, scale, roi_start, roi_end);
    if (i < 0) {
      t.outside = true;
    } else {
      t.taps.push_back({i, 1.0});
    }
    return t;
  }
  double in_w = static_cast<double>(width);
  double ori = ResizeSourceCoordinate(a.coord, x, out_width, width, scale, roi_start, roi_end);
  if (a.coord == "tf_crop_and_resize" && (ori < 0 || ori > in_w - 1)) {
    t.outside = true;
    return t;
  }
  double fl = std::floor(ori);
  bool integer = ori == fl;
  double ratio = integer ? 1.0 : ori - fl;
  int64_t left = static_cast<int64_t>(fl) - (integer ? 1 : 0);
  std::vector<double> c;
  if (a.mode == "nearest") {
    c = NearestCoeffs(ratio, integer, a.nearest_mode);
  } else if (a.antialias && scale < 1) {
    c = AntialiasCoeffs(ratio, scale, a.mode == "cubic", a.cubic_a);
  } else if (a.mode == "linear") {
    c = {1 - ratio, ratio};
  } else {
    c = CubicCoeffs(ratio, a.cubic_a);
  }
  int64_t n = static_cast<int64_t>(c.size());
  int64_t pad = (n + 1) / 2;
  int64_t first = std::clamp<int64_t>(left + 1 - n / 2, -pad, width + pad - n);
  if (a.exclude_outside) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t idx = first + i;
      if (idx < 0 || idx >= width) c[i] = 0;
      sum += c[i];
    }
    for (double& w : c) w /= sum;
  }
  for (int64_t i = 0; i < n; ++i) {
    if (c[i] == 0) continue;  // zero taps contribute nothing
    t.taps.push_back({std::clamp<int64_t>(first + i, 0, width - 1), c[i]});
  }
  return t;
}

}  // namespace aic
