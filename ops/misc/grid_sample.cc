// GridSample (opset 16): samples X [N, C, H, W] at the normalized (x, y)
// locations of grid [N, Hout, Wout, 2], with bilinear, nearest or bicubic
// interpolation and zeros / border / reflection padding. The suite's expected
// values come from PyTorch, so coordinate handling follows
// torch.nn.functional.grid_sample exactly (including its reflection rule and
// bicubic A = −0.75).
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

enum class Mode { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

struct Sampler {
  Mode mode;
  Padding padding;
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
    if (padding == Padding::kBorder) return std::clamp(c, 0.0, hi);
    if (padding == Padding::kReflection) {
      c = align_corners ? Reflect(c, 0, 2 * hi) : Reflect(c, -1, 2 * static_cast<double>(size) - 1);
      return std::clamp(c, 0.0, hi);
    }
    return c;
  }
};

double CubicNear(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double CubicFar(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

// One channel plane [h, w]; out-of-range reads are 0 (zeros padding, or
// taps that padding has not brought inside).
double Sample(const Sampler& s, const double* plane, int64_t h, int64_t w, double gx, double gy) {
  auto read = [&](int64_t y, int64_t x) {
    return (y < 0 || y >= h || x < 0 || x >= w) ? 0.0 : plane[y * w + x];
  };
  double x = s.Unnormalize(gx, w), y = s.Unnormalize(gy, h);
  if (s.mode == Mode::kBicubic) {
    // Padding applies to each of the 4×4 taps, not to the center.
    const double x0 = std::floor(x), y0 = std::floor(y);
    const double tx = x - x0, ty = y - y0, a = -0.75;
    const double cx[4] = {CubicFar(tx + 1, a), CubicNear(tx, a), CubicNear(1 - tx, a), CubicFar(2 - tx, a)};
    const double cy[4] = {CubicFar(ty + 1, a), CubicNear(ty, a), CubicNear(1 - ty, a), CubicFar(2 - ty, a)};
    double sum = 0;
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 4; ++i) {
        const double px = s.Pad(x0 - 1 + i, w), py = s.Pad(y0 - 1 + j, h);
        sum += cx[i] * cy[j] * read(static_cast<int64_t>(py), static_cast<int64_t>(px));
      }
    }
    return sum;
  }
  x = s.Pad(x, w);
  y = s.Pad(y, h);
  if (s.mode == Mode::kNearest) {
    return read(static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)));
  }
  const double x0 = std::floor(x), y0 = std::floor(y);
  const double tx = x - x0, ty = y - y0;
  const int64_t ix = static_cast<int64_t>(x0), iy = static_cast<int64_t>(y0);
  return read(iy, ix) * (1 - tx) * (1 - ty) + read(iy, ix + 1) * tx * (1 - ty) +
         read(iy + 1, ix) * (1 - tx) * ty + read(iy + 1, ix + 1) * tx * ty;
}

absl::StatusOr<Sampler> ParseSampler(const Node& node) {
  Sampler s{Mode::kBilinear, Padding::kZeros, node.GetInt("align_corners", 0) != 0};
  const std::string mode = node.GetString("mode", "bilinear");
  const std::string pad = node.GetString("padding_mode", "zeros");
  if (mode == "nearest") s.mode = Mode::kNearest;
  else if (mode == "bicubic") s.mode = Mode::kBicubic;
  else if (mode != "bilinear") return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": unknown mode '", mode, "'"));
  if (pad == "border") s.padding = Padding::kBorder;
  else if (pad == "reflection") s.padding = Padding::kReflection;
  else if (pad != "zeros") return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": unknown padding_mode '", pad, "'"));
  return s;
}

absl::Status GridSampleKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1}));
  AIC_ASSIGN_OR_RETURN(Sampler s, ParseSampler(ctx.node()));
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  if (!IsRealFloat(x.dtype())) return ctx.Unimplemented("X dtype ", DTypeName(x.dtype()));
  if (x.rank() != 4 || grid.rank() != 4 || grid.dim(3) != 2 || grid.dim(0) != x.dim(0)) {
    return ctx.Error("X must be [N, C, H, W] and grid [N, Hout, Wout, 2]");
  }
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  const int64_t ho = grid.dim(1), wo = grid.dim(2);
  const std::vector<double> xs = ToDoubles(x), gs = ToDoubles(grid);
  std::vector<double> y(static_cast<size_t>(n * c * ho * wo));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const double* plane = xs.data() + (b * c + ch) * h * w;
      for (int64_t i = 0; i < ho * wo; ++i) {
        const double* g = gs.data() + (b * ho * wo + i) * 2;
        y[static_cast<size_t>((b * c + ch) * ho * wo + i)] = Sample(s, plane, h, w, g[0], g[1]);
      }
    }
  }
  ctx.set_output(0, FromDoubles(y, {n, c, ho, wo}, x.dtype()));
  return absl::OkStatus();
}

absl::Status InferGridSample(OpContext& ctx) {
  absl::StatusOr<Sampler> s = ParseSampler(ctx.node());
  if (!s.ok()) return s.status();
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "X"));
  const Shape& x = ctx.input_shape(0);
  const Shape& g = ctx.input_shape(1);
  if (x.has_rank() && x.rank() != 4) return ctx.Error("X must have rank 4, got ", x.ToString());
  if (g.has_rank() && g.rank() != 4) return ctx.Error("grid must have rank 4, got ", g.ToString());
  Dim n = x.has_rank() ? x[0] : (g.has_rank() ? g[0] : ctx.FreshDim());
  Dim c = x.has_rank() ? x[1] : ctx.FreshDim();
  Dim ho = g.has_rank() ? g[1] : ctx.FreshDim();
  Dim wo = g.has_rank() ? g[2] : ctx.FreshDim();
  ctx.set_output(0, ctx.input_dtype(0), Shape({n, c, ho, wo}));
  return absl::OkStatus();
}

Traits GridSampleTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "GridSample";
  t.meaning = absl::StrCat("y[n,c,i,j] = ", ctx.node().GetString("mode", "bilinear"),
                           "-interpolated X[n,c] at grid[n,i,j]");
  // Linear in X for a fixed grid; nonlinear in the grid.
  t.linearity = Linearity::kLinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kSelects;
  t.collapse_how = "pixels the grid does not reach are discarded";
  t.effect_detail = "spatial resampling";
  return t;
}

Cost GridSampleCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  const int64_t out = ctx.num_outputs() ? StaticElements(ctx.output_type(0)) : -1;
  if (out < 0) return c;
  const std::string mode = ctx.node().GetString("mode", "bilinear");
  const int64_t taps = mode == "bicubic" ? 16 : mode == "nearest" ? 1 : 4;
  c.macs = out * taps;
  c.flops = 2 * c.macs + out * 8;  // plus coordinate arithmetic
  return c;
}

}  // namespace

void RegisterGridSampleOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = "",
      .op_type = "GridSample",
      .since_version = 16,
      .infer = InferGridSample,
      .traits = GridSampleTraits,
      .cost = GridSampleCost,
      .kernel = GridSampleKernel,
  });
}

}  // namespace aic
