// GridSample (opset 16; N-D and the modes renamed linear / cubic in opset
// 20): samples X [N, C, d1..dr] at the normalized locations of grid
// [N, o1..or, r] (coordinates innermost-first: x, y, z), with (multi)linear,
// nearest or bicubic (2-D only) interpolation and zeros / border /
// reflection padding. The suite's expected values come from PyTorch, so
// coordinate handling follows torch.nn.functional.grid_sample exactly
// (including its reflection rule and bicubic A = −0.75). AffineGrid, which
// makes the grids spatial transformers feed it, is here too.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/misc/grid_sample.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

double CubicNear(double x, double a) { return ((a + 2) * x - (a + 3)) * x * x + 1; }
double CubicFar(double x, double a) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

// One channel volume of `dims` (outermost first); `coord` holds the grid's
// normalized coordinates, innermost dim first. Out-of-range reads are 0
// (zeros padding, or taps that padding has not brought inside).
double Sample(const GridSampler& s, const double* vol, const std::vector<int64_t>& dims, const double* coord) {
  const size_t r = dims.size();
  auto read = [&](const int64_t* idx) {  // idx outermost first
    int64_t at = 0;
    for (size_t d = 0; d < r; ++d) {
      if (idx[d] < 0 || idx[d] >= dims[d]) return 0.0;
      at = at * dims[d] + idx[d];
    }
    return vol[at];
  };
  double p[3];  // pixel coordinates, outermost first (r <= 3 is checked by the caller)
  for (size_t d = 0; d < r; ++d) p[d] = s.Unnormalize(coord[r - 1 - d], dims[d]);
  int64_t idx[3];
  if (s.mode == GridMode::kBicubic) {
    // 2-D only. Padding applies to each of the 4×4 taps, not to the center.
    const int64_t h = dims[0], w = dims[1];
    const double x0 = std::floor(p[1]), y0 = std::floor(p[0]);
    const double tx = p[1] - x0, ty = p[0] - y0, a = -0.75;
    const double cx[4] = {CubicFar(tx + 1, a), CubicNear(tx, a), CubicNear(1 - tx, a), CubicFar(2 - tx, a)};
    const double cy[4] = {CubicFar(ty + 1, a), CubicNear(ty, a), CubicNear(1 - ty, a), CubicFar(2 - ty, a)};
    double sum = 0;
    for (int j = 0; j < 4; ++j) {
      for (int i = 0; i < 4; ++i) {
        idx[0] = static_cast<int64_t>(s.Pad(y0 - 1 + j, h));
        idx[1] = static_cast<int64_t>(s.Pad(x0 - 1 + i, w));
        sum += cx[i] * cy[j] * read(idx);
      }
    }
    return sum;
  }
  for (size_t d = 0; d < r; ++d) p[d] = s.Pad(p[d], dims[d]);
  if (s.mode == GridMode::kNearest) {
    // Ties to even, as PyTorch rounds.
    for (size_t d = 0; d < r; ++d) idx[d] = static_cast<int64_t>(std::nearbyint(p[d]));
    return read(idx);
  }
  // Multilinear: the 2^r corners around p, each weighted by its distance products.
  double lo[3], t[3];
  for (size_t d = 0; d < r; ++d) {
    lo[d] = std::floor(p[d]);
    t[d] = p[d] - lo[d];
  }
  double sum = 0;
  for (unsigned corner = 0; corner < (1u << r); ++corner) {
    double weight = 1;
    for (size_t d = 0; d < r; ++d) {
      const bool up = (corner >> d) & 1u;
      idx[d] = static_cast<int64_t>(lo[d]) + (up ? 1 : 0);
      weight *= up ? t[d] : 1 - t[d];
    }
    if (weight != 0) sum += weight * read(idx);
  }
  return sum;
}

// Spatial rank r of X (rank r + 2) the kernel handles: 2-D before opset 20,
// 1- to 3-D after, and cubic in 2-D only.
absl::Status CheckSpatialRank(int64_t r, const GridSampler& s, int64_t opset) {
  if (opset < 20 && r != 2) return absl::InvalidArgumentError("X must have rank 4 before opset 20");
  if (r < 1 || r > 3) return absl::UnimplementedError(absl::StrCat("GridSample over ", r, " spatial dims"));
  if (s.mode == GridMode::kBicubic && r != 2) return absl::InvalidArgumentError("cubic mode needs 4-D input");
  return absl::OkStatus();
}

absl::Status GridSampleKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1}));
  absl::StatusOr<GridSampler> sampler = ParseGridSampler(ctx.node(), ctx.opset());
  if (!sampler.ok()) return ctx.Error(sampler.status().message());
  const GridSampler& s = *sampler;
  const Tensor& x = ctx.input(0);
  const Tensor& grid = ctx.input(1);
  if (!IsRealFloat(x.dtype())) return ctx.Unimplemented("X dtype ", DTypeName(x.dtype()));
  const int64_t r = x.rank() - 2;
  absl::Status rank_ok = CheckSpatialRank(r, s, ctx.opset());
  if (absl::IsUnimplemented(rank_ok)) return ctx.Unimplemented(rank_ok.message());
  if (!rank_ok.ok()) return ctx.Error(rank_ok.message());
  if (grid.rank() != r + 2 || grid.dim(grid.rank() - 1) != r || grid.dim(0) != x.dim(0)) {
    return ctx.Error("grid must be [N, out dims.., ", r, "] for X ", DimsToString(x.dims()), ", got ",
                     DimsToString(grid.dims()));
  }
  const int64_t n = x.dim(0), c = x.dim(1);
  const std::vector<int64_t> dims(x.dims().begin() + 2, x.dims().end());
  int64_t in_size = 1, out_size = 1;
  for (int64_t d : dims) in_size *= d;
  std::vector<int64_t> out_dims = {n, c};
  for (int64_t d = 1; d <= r; ++d) {
    out_dims.push_back(grid.dim(d));
    out_size *= grid.dim(d);
  }
  const std::vector<double> xs = ToDoubles(x), gs = ToDoubles(grid);
  std::vector<double> y(static_cast<size_t>(n * c * out_size));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const double* vol = xs.data() + (b * c + ch) * in_size;
      for (int64_t i = 0; i < out_size; ++i) {
        const double* g = gs.data() + (b * out_size + i) * r;
        y[static_cast<size_t>((b * c + ch) * out_size + i)] = Sample(s, vol, dims, g);
      }
    }
  }
  ctx.set_output(0, FromDoubles(y, out_dims, x.dtype()));
  return absl::OkStatus();
}

absl::Status InferGridSample(OpContext& ctx) {
  absl::StatusOr<GridSampler> s = ParseGridSampler(ctx.node(), ctx.opset());
  if (!s.ok()) return ctx.Error(s.status().message());
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "X"));
  const Shape& x = ctx.input_shape(0);
  const Shape& g = ctx.input_shape(1);
  if (x.has_rank()) {
    absl::Status rank_ok = CheckSpatialRank(x.rank() - 2, *s, ctx.opset());
    if (!rank_ok.ok() && !absl::IsUnimplemented(rank_ok)) return ctx.Error(rank_ok.message(), ", got ", x.ToString());
  }
  if (x.has_rank() && g.has_rank() && g.rank() != x.rank()) {
    return ctx.Error("grid ", g.ToString(), " must have the rank of X ", x.ToString());
  }
  if (!x.has_rank() && !g.has_rank()) {
    ctx.set_output(0, ctx.input_dtype(0), Shape::UnknownRank());
    return absl::OkStatus();
  }
  const int64_t rank = x.has_rank() ? x.rank() : g.rank();
  std::vector<Dim> dims = {x.has_rank() ? x[0] : g[0], x.has_rank() ? x[1] : ctx.FreshDim()};
  for (int64_t d = 1; d + 1 < rank; ++d) dims.push_back(g.has_rank() ? g[d] : ctx.FreshDim());
  ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
  return absl::OkStatus();
}

Traits GridSampleTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "GridSample";
  t.meaning = absl::StrCat("y[n,c,i,j] = ",
                           ctx.node().GetString("mode", ctx.opset() >= 20 ? "linear" : "bilinear"),
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
  absl::StatusOr<GridSampler> s = ParseGridSampler(ctx.node(), ctx.opset());
  const int64_t r = ctx.input_shape(0).has_rank() ? ctx.input_shape(0).rank() - 2 : 2;
  const int64_t taps = !s.ok() ? 4 : s->mode == GridMode::kBicubic ? 16 : s->mode == GridMode::kNearest ? 1 : (1 << r);
  c.macs = out * taps;
  c.flops = 2 * c.macs + out * 8;  // plus coordinate arithmetic
  return c;
}

// ---- AffineGrid ----

// AffineGrid (opset 20): the sampling grid GridSample reads, from a batch of
// affine maps theta [N, r, r+1] (r = 2 or 3) and size [N, C, (D,) H, W]:
// grid[n, (d,) h, w] = theta[n] · (x, y, (z,) 1), the base coordinates evenly
// spaced in [-1, 1] (pixel centers, or corners with align_corners).

// Base coordinate i of an axis of `size` pixels.
double BaseCoordinate(int64_t i, int64_t size, bool align_corners) {
  if (align_corners) return size == 1 ? -1.0 : -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(size - 1);
  return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(size);
}

absl::Status AffineGridKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1}));
  const Tensor& theta = ctx.input(0);
  if (!IsRealFloat(theta.dtype())) return ctx.Unimplemented("theta dtype ", DTypeName(theta.dtype()));
  const std::vector<int64_t> size = ToInt64s(ctx.input(1));
  const int64_t r = static_cast<int64_t>(size.size()) - 2;
  if (r != 2 && r != 3) return ctx.Error("size must have 4 or 5 entries, got ", size.size());
  if (theta.rank() != 3 || theta.dim(0) != size[0] || theta.dim(1) != r || theta.dim(2) != r + 1) {
    return ctx.Error("theta must be [", size[0], ", ", r, ", ", r + 1, "], got ", DimsToString(theta.dims()));
  }
  for (int64_t d : size) {
    if (d < 0) return ctx.Error("size entries must be non-negative");
  }
  const bool align = ctx.node().GetInt("align_corners", 0) != 0;
  const std::vector<int64_t> spatial(size.begin() + 2, size.end());  // outermost first
  int64_t points = 1;
  for (int64_t d : spatial) points *= d;
  const std::vector<double> th = ToDoubles(theta);
  std::vector<double> grid(static_cast<size_t>(size[0] * points * r));
  std::vector<double> base(static_cast<size_t>(r + 1), 1.0);  // (x, y, (z,) 1)
  for (int64_t n = 0; n < size[0]; ++n) {
    const double* t = th.data() + n * r * (r + 1);
    for (int64_t p = 0; p < points; ++p) {
      // The point's index along each axis; base[0] is x, along the innermost.
      for (int64_t q = p, d = r - 1; d >= 0; --d) {
        base[static_cast<size_t>(r - 1 - d)] = BaseCoordinate(q % spatial[d], spatial[d], align);
        q /= spatial[d];
      }
      double* g = grid.data() + (n * points + p) * r;
      for (int64_t row = 0; row < r; ++row) {
        double v = 0;
        for (int64_t col = 0; col <= r; ++col) v += t[row * (r + 1) + col] * base[static_cast<size_t>(col)];
        g[row] = v;
      }
    }
  }
  std::vector<int64_t> dims = {size[0]};
  dims.insert(dims.end(), spatial.begin(), spatial.end());
  dims.push_back(r);
  ctx.set_output(0, FromDoubles(grid, dims, theta.dtype()));
  return absl::OkStatus();
}

absl::Status InferAffineGrid(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "theta"));
  const Shape& theta = ctx.input_shape(0);
  if (theta.has_rank() && theta.rank() != 3) return ctx.Error("theta must have rank 3, got ", theta.ToString());
  const Tensor* size = ctx.input_constant(1);
  const Shape& size_shape = ctx.input_shape(1);
  std::optional<int64_t> entries;
  if (size != nullptr) entries = size->num_elements();
  else if (size_shape.has_rank() && size_shape.rank() == 1 && size_shape[0].is_value()) entries = size_shape[0].value();
  else if (theta.has_rank() && theta[1].is_value()) entries = theta[1].value() + 2;
  if (!entries) {
    ctx.set_output(0, ctx.input_dtype(0), Shape::UnknownRank());
    return absl::OkStatus();
  }
  if (*entries != 4 && *entries != 5) return ctx.Error("size must have 4 or 5 entries, got ", *entries);
  const int64_t r = *entries - 2;
  if (theta.has_rank() && theta[1].is_value() && theta[1].value() != r) {
    return ctx.Error("theta ", theta.ToString(), " does not match a ", r, "-D size");
  }
  std::vector<Dim> dims = {theta.has_rank() ? theta[0] : ctx.FreshDim()};
  const std::vector<int64_t> values = size != nullptr ? ToInt64s(*size) : std::vector<int64_t>();
  if (!values.empty() && !dims[0].is_value()) dims[0] = Dim(values[0]);
  for (int64_t d = 0; d < r; ++d) dims.push_back(values.empty() ? ctx.FreshDim() : Dim(values[d + 2]));
  dims.push_back(Dim(r));
  ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
  return absl::OkStatus();
}

Traits AffineGridTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "AffineGrid";
  t.meaning = "grid[n, p] = theta[n] · (p, 1), p evenly spaced in [-1, 1]";
  // Linear in theta (the base points are constants); size only shapes it.
  t.linearity = Linearity::kLinear;
  t.effect = RepresentationEffect::kExpands;
  t.effect_detail = "affine maps → sampling grid";
  t.safe_transform_when = "fold to a constant when theta and size are constant";
  return t;
}

}  // namespace

// Mode names by opset: bilinear / bicubic before 20, linear / cubic from 20.
absl::StatusOr<GridSampler> ParseGridSampler(const Node& node, int64_t opset) {
  const bool renamed = opset >= 20;
  GridSampler s{GridMode::kBilinear, GridPadding::kZeros, node.GetInt("align_corners", 0) != 0};
  const std::string mode = node.GetString("mode", renamed ? "linear" : "bilinear");
  const std::string pad = node.GetString("padding_mode", "zeros");
  if (mode == "nearest") s.mode = GridMode::kNearest;
  else if (mode == (renamed ? "cubic" : "bicubic")) s.mode = GridMode::kBicubic;
  else if (mode != (renamed ? "linear" : "bilinear")) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": unknown mode '", mode, "'"));
  }
  if (pad == "border") s.padding = GridPadding::kBorder;
  else if (pad == "reflection") s.padding = GridPadding::kReflection;
  else if (pad != "zeros") return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": unknown padding_mode '", pad, "'"));
  return s;
}

void RegisterGridSampleOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = "",
      .op_type = "AffineGrid",
      .since_version = 20,
      .infer = InferAffineGrid,
      .traits = AffineGridTraits,
      // r + 1 multiply-adds per output coordinate.
      .cost = [](const OpContext& ctx) {
        const Shape& theta = ctx.input_shape(0);
        const int64_t r = theta.has_rank() && theta[1].is_value() ? theta[1].value() : 2;
        return ElementwiseCost(ctx, 2 * (r + 1));
      },
      .kernel = AffineGridKernel,
  });
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
