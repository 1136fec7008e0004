// NonMaxSuppression: per batch and class, greedily keep the highest-scoring
// box and drop the boxes that overlap it by more than the IoU threshold. The
// output is data-dependent in length ([selected, 3] of batch, class, box), so
// inference gives a fresh symbolic row count.
#include <algorithm>
#include <numeric>

#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

struct Box {
  double y1, x1, y2, x2;
  double Area() const { return (y2 - y1) * (x2 - x1); }
};

// Corner form with min <= max, from either ONNX encoding.
Box ReadBox(const std::vector<double>& b, size_t at, bool center_point) {
  const double a = b[at], c = b[at + 1], d = b[at + 2], e = b[at + 3];
  if (center_point) {  // [x_center, y_center, width, height]
    return {c - e / 2, a - d / 2, c + e / 2, a + d / 2};
  }
  // [y1, x1, y2, x2], corners possibly flipped.
  return {std::min(a, d), std::min(c, e), std::max(a, d), std::max(c, e)};
}

double Iou(const Box& p, const Box& q) {
  const double ih = std::min(p.y2, q.y2) - std::max(p.y1, q.y1);
  const double iw = std::min(p.x2, q.x2) - std::max(p.x1, q.x1);
  if (ih <= 0 || iw <= 0) return 0;
  const double inter = ih * iw;
  const double uni = p.Area() + q.Area() - inter;
  return uni <= 0 ? 0 : inter / uni;
}

absl::Status NmsKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1}, {2, 3, 4}));
  const Tensor& boxes_t = ctx.input(0);
  const Tensor& scores_t = ctx.input(1);
  if (boxes_t.rank() != 3 || boxes_t.dim(2) != 4) return ctx.Error("boxes must be [B, N, 4]");
  if (scores_t.rank() != 3 || scores_t.dim(0) != boxes_t.dim(0) ||
      scores_t.dim(2) != boxes_t.dim(1)) {
    return ctx.Error("scores must be [B, C, N] matching boxes");
  }
  const int64_t max_out = ctx.has_input(2) && ctx.input(2).num_elements() > 0
                              ? ToInt64s(ctx.input(2))[0] : 0;
  const double iou_th = ctx.has_input(3) && ctx.input(3).num_elements() > 0
                            ? ctx.input(3).ElementAsDouble(0) : 0.0;
  const bool has_score_th = ctx.has_input(4) && ctx.input(4).num_elements() > 0;
  const double score_th = has_score_th ? ctx.input(4).ElementAsDouble(0) : 0.0;
  const bool center = ctx.node().GetInt("center_point_box", 0) != 0;
  const int64_t nb = boxes_t.dim(0), nc = scores_t.dim(1), n = boxes_t.dim(1);
  const std::vector<double> boxes = ToDoubles(boxes_t), scores = ToDoubles(scores_t);
  std::vector<int64_t> selected;  // triples
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t c = 0; c < nc; ++c) {
      const double* s = scores.data() + (b * nc + c) * n;
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i) {
        if (!has_score_th || s[i] > score_th) order.push_back(i);
      }
      // Highest score first; equal scores keep the lower index first.
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      std::vector<Box> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        Box box = ReadBox(boxes, static_cast<size_t>((b * n + i) * 4), center);
        bool suppressed = false;
        for (const Box& k : kept) suppressed = suppressed || Iou(box, k) > iou_th;
        if (suppressed) continue;
        kept.push_back(box);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  const int64_t rows = static_cast<int64_t>(selected.size() / 3);
  ctx.set_output(0, Tensor::FromVector<int64_t>(selected, {rows, 3}));
  return absl::OkStatus();
}

absl::Status InferNms(OpContext& ctx) {
  AIC_RETURN_IF_ERROR(ExpectFloatInput(ctx, 0, "boxes"));
  const Shape& boxes = ctx.input_shape(0);
  if (boxes.has_rank() && (boxes.rank() != 3 || (boxes[2].is_value() && boxes[2].value() != 4))) {
    return ctx.Error("boxes must be [B, N, 4], got ", boxes.ToString());
  }
  ctx.set_output(0, DType::kInt64, Shape({ctx.FreshDim(), 3}));
  return absl::OkStatus();
}

Traits NmsTraits(const OpContext& ctx) {
  Traits t;
  t.semantic_name = "NonMaxSuppression";
  t.meaning = "per class: keep the best box, drop boxes with IoU > threshold, repeat";
  t.linearity = Linearity::kNonlinear;
  t.invertibility = Invertibility::kIrreversible;
  t.collapse = CollapseKind::kSelects;
  t.collapse_how = "overlapping and low-scoring boxes are discarded";
  t.effect = RepresentationEffect::kRestricts;
  t.effect_detail = "boxes → indices of the kept ones";
  return t;
}

// Worst case: every box compared with every kept box, per class.
Cost NmsCost(const OpContext& ctx) {
  Cost c = BytesOnlyCost(ctx);
  const Shape& s = ctx.input_shape(1);
  if (!s.has_rank() || !s.IsStatic() || s.rank() != 3) return c;
  const int64_t n = s[2].value();
  c.flops = s[0].value() * s[1].value() * n * n * 12;
  return c;
}

}  // namespace

void RegisterDetectionOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = "",
      .op_type = "NonMaxSuppression",
      .since_version = 10,
      .infer = InferNms,
      .traits = NmsTraits,
      .cost = NmsCost,
      .kernel = NmsKernel,
  });
}

}  // namespace aic
