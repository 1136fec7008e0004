#include "ops/tensor/resize_params.h"

#include <algorithm>
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

}  // namespace aic
