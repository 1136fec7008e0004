// Region-of-interest pooling: MaxRoiPool (Caffe's quantized bins, max over
// each bin) and RoiAlign (bilinear samples averaged, or maxed, per bin; its
// sampling rules are roi_align.h's, shared with the CPU backend).
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/pool_internal.h"
#include "ops/nn/roi_align.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// Output [num_rois, C, out_h, out_w] from X [N, C, H, W] and rois [num_rois, *].
absl::Status InferRoi(OpContext& ctx, int64_t out_h, int64_t out_w) {
  const Shape& x = ctx.input_shape(0);
  const Shape& rois = ctx.input_shape(1);
  if (x.has_rank() && x.rank() != 4) return ctx.Error("input must be 4-D, got ", x.ToString());
  if (rois.has_rank() && rois.rank() != 2) return ctx.Error("rois must be 2-D, got ", rois.ToString());
  if (out_h <= 0 || out_w <= 0) return ctx.Error("pooled size must be positive");
  Dim n = rois.has_rank() ? rois[0] : ctx.FreshDim();
  Dim c = x.has_rank() ? x[1] : ctx.FreshDim();
  ctx.set_output(0, ctx.input_dtype(0), Shape(std::vector<Dim>{n, c, out_h, out_w}));
  return absl::OkStatus();
}

std::vector<int64_t> PooledShape(const Node& n) { return n.GetInts("pooled_shape", {}); }

absl::Status MaxRoiPoolKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Tensor& rt = ctx.input(1);
  std::vector<int64_t> pooled = PooledShape(ctx.node());
  if (pooled.size() != 2) return ctx.Error("pooled_shape must have 2 entries");
  if (xt.rank() != 4 || rt.rank() != 2 || rt.dim(1) != 5) return ctx.Error("bad input shapes");
  double scale = ctx.node().GetFloat("spatial_scale", 1.0f);
  int64_t c_n = xt.dim(1), h = xt.dim(2), w = xt.dim(3), ph_n = pooled[0], pw_n = pooled[1];
  std::vector<double> x = TensorToDoubles(xt), rois = TensorToDoubles(rt);
  int64_t num = rt.dim(0);
  std::vector<double> y(static_cast<size_t>(num * c_n * ph_n * pw_n), 0.0);
  for (int64_t r = 0; r < num; ++r) {
    const double* roi = rois.data() + r * 5;
    int64_t b = static_cast<int64_t>(roi[0]);
    if (b < 0 || b >= xt.dim(0)) return ctx.Error("roi batch index ", b, " out of range");
    int64_t x1 = std::llround(roi[1] * scale), y1 = std::llround(roi[2] * scale);
    int64_t x2 = std::llround(roi[3] * scale), y2 = std::llround(roi[4] * scale);
    double bin_h = static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / static_cast<double>(ph_n);
    double bin_w = static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / static_cast<double>(pw_n);
    for (int64_t c = 0; c < c_n; ++c) {
      const double* plane = x.data() + (b * c_n + c) * h * w;
      for (int64_t ph = 0; ph < ph_n; ++ph) {
        int64_t hs = std::clamp<int64_t>(static_cast<int64_t>(std::floor(ph * bin_h)) + y1, 0, h);
        int64_t he = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((ph + 1) * bin_h)) + y1, 0, h);
        for (int64_t pw = 0; pw < pw_n; ++pw) {
          int64_t ws = std::clamp<int64_t>(static_cast<int64_t>(std::floor(pw * bin_w)) + x1, 0, w);
          int64_t we = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((pw + 1) * bin_w)) + x1, 0, w);
          double best = -std::numeric_limits<double>::infinity();
          for (int64_t i = hs; i < he; ++i) {
            for (int64_t j = ws; j < we; ++j) best = std::max(best, plane[i * w + j]);
          }
          y[static_cast<size_t>(((r * c_n + c) * ph_n + ph) * pw_n + pw)] =
              (he <= hs || we <= ws) ? 0.0 : best;
        }
      }
    }
  }
  ctx.set_output(0, DoublesToTensor(y, {num, c_n, ph_n, pw_n}, xt.dtype()));
  return absl::OkStatus();
}

absl::Status RoiAlignKernel(KernelContext& ctx) {
  const Tensor& xt = ctx.input(0);
  const Tensor& rt = ctx.input(1);
  const Tensor& bt = ctx.input(2);
  if (!IsRealDType(xt.dtype())) return ctx.Unimplemented("dtype ", DTypeName(xt.dtype()));
  if (xt.rank() != 4 || rt.rank() != 2 || rt.dim(1) != 4) return ctx.Error("bad input shapes");
  const RoiAlignParams p = RoiAlignParams::Of(ctx.node(), ctx.opset());
  const int64_t oh = p.out_h, ow = p.out_w;
  int64_t c_n = xt.dim(1), h = xt.dim(2), w = xt.dim(3), num = rt.dim(0);
  std::vector<double> x = TensorToDoubles(xt), rois = TensorToDoubles(rt);
  std::vector<int64_t> batch = TensorToInt64(bt);
  if (static_cast<int64_t>(batch.size()) != num) return ctx.Error("batch_indices size != rois");
  std::vector<double> y(static_cast<size_t>(num * c_n * oh * ow), 0.0);
  for (int64_t r = 0; r < num; ++r) {
    if (batch[r] < 0 || batch[r] >= xt.dim(0)) return ctx.Error("batch index out of range");
    const RoiGeometry g = RoiGeometry::Of(p, rois.data() + r * 4);
    for (int64_t c = 0; c < c_n; ++c) {
      const double* plane = x.data() + (batch[r] * c_n + c) * h * w;
      for (int64_t ph = 0; ph < oh; ++ph) {
        for (int64_t pw = 0; pw < ow; ++pw) {
          double acc = p.is_max ? -std::numeric_limits<double>::infinity() : 0.0;
          bool any = false;
          for (int64_t iy = 0; iy < g.grid_h; ++iy) {
            for (int64_t ix = 0; ix < g.grid_w; ++ix) {
              RoiSample s = BilinearRoiSample(g.SampleY(ph, iy), g.SampleX(pw, ix), h, w);
              if (!s.valid) continue;
              any = true;
              for (int q = 0; q < 4; ++q) {
                double v = s.w[q] * plane[s.off[q]];
                acc = p.is_max ? std::max(acc, v) : acc + v;
              }
            }
          }
          y[static_cast<size_t>(((r * c_n + c) * oh + ph) * ow + pw)] =
              p.is_max ? (any ? acc : 0.0) : acc / g.count;
        }
      }
    }
  }
  ctx.set_output(0, DoublesToTensor(y, {num, c_n, oh, ow}, xt.dtype()));
  return absl::OkStatus();
}

Traits RoiTraits(const char* name, const char* meaning, CollapseKind kind) {
  Traits t;
  t.semantic_name = name;
  t.meaning = meaning;
  t.linearity = kind == CollapseKind::kReduces ? Linearity::kLinear : Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = kind;
  t.collapse_how = kind == CollapseKind::kReduces ? "each region bin summarised by interpolated means"
                                                  : "keeps the largest value of each region bin";
  return t;
}

}  // namespace

void RegisterRoiPoolOps(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "MaxRoiPool",
                   .since_version = 1,
                   .infer =
                       [](OpContext& ctx) {
                         std::vector<int64_t> p = PooledShape(ctx.node());
                         if (p.size() != 2) return ctx.Error("pooled_shape must have 2 entries");
                         return InferRoi(ctx, p[0], p[1]);
                       },
                   .traits =
                       [](const OpContext&) {
                         return RoiTraits("MaxRoiPool", "y = max over each bin of each region",
                                          CollapseKind::kSelects);
                       },
                   .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
                   .kernel = MaxRoiPoolKernel});
  r.Register(OpDef{.domain = "",
                   .op_type = "RoiAlign",
                   .since_version = 10,
                   .infer =
                       [](OpContext& ctx) {
                         return InferRoi(ctx, ctx.node().GetInt("output_height", 1),
                                         ctx.node().GetInt("output_width", 1));
                       },
                   .traits =
                       [](const OpContext& ctx) {
                         bool is_max = ctx.node().GetString("mode", "avg") == "max";
                         return RoiTraits("RoiAlign", "y = pooled bilinear samples of each region bin",
                                          is_max ? CollapseKind::kSelects : CollapseKind::kReduces);
                       },
                   .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
                   .kernel = RoiAlignKernel});
}

}  // namespace aic
