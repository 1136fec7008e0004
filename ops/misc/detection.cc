// NonMaxSuppression: per batch and class, greedily keep the highest-scoring
// box and drop the boxes that overlap it by more than the IoU threshold. The
// output is data-dependent in length ([selected, 3] of batch, class, box), so
// inference gives a fresh symbolic row count.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

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

// The kept boxes of one class, by coordinate (with their areas, worked out
// once), in order of y1: a candidate can only overlap kept boxes whose y1 lies
// within the tallest kept box's height above its own top and below its
// bottom, so it is compared with that window, not with all of them (an
// SSD-style head keeps hundreds among thousands of candidates, and
// torchvision's batched NMS offsets each class's boxes apart: the window is
// mostly its own class). Boxes with a NaN coordinate are compared with
// everything (`unordered`): order means nothing for them.
struct BoxColumns {
  std::vector<double> y1, x1, y2, x2, area;
  size_t size() const { return y1.size(); }
  void Append(const BoxColumns& from, size_t i) {
    y1.push_back(from.y1[i]);
    x1.push_back(from.x1[i]);
    y2.push_back(from.y2[i]);
    x2.push_back(from.x2[i]);
    area.push_back(from.area[i]);
  }
};

struct KeptBoxes {
  BoxColumns sorted;   // by y1
  BoxColumns recent;   // the last few kept, in the order kept: merged in 64 at a time
  double tallest = 0;
  bool unordered = false;
  void Add(const Box& b, double a) {
    recent.y1.push_back(b.y1);
    recent.x1.push_back(b.x1);
    recent.y2.push_back(b.y2);
    recent.x2.push_back(b.x2);
    recent.area.push_back(a);
    tallest = std::max(tallest, b.y2 - b.y1);
    if (recent.size() >= 64) Merge();
  }
  // The recent boxes into the sorted ones, one pass (inserting each where it
  // belongs moved half the array every time: 10% of an SSD's run).
  void Merge() {
    std::vector<size_t> order(recent.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return recent.y1[i] < recent.y1[j]; });
    BoxColumns merged;
    size_t i = 0, j = 0;
    while (i < sorted.size() || j < order.size()) {
      if (j == order.size() || (i < sorted.size() && !(recent.y1[order[j]] < sorted.y1[i]))) {
        merged.Append(sorted, i++);
      } else {
        merged.Append(recent, order[j++]);
      }
    }
    sorted = std::move(merged);
    recent = BoxColumns();
  }
};

bool HasNaN(const Box& b) { return std::isnan(b.y1) || std::isnan(b.x1) || std::isnan(b.y2) || std::isnan(b.x2); }

// Whether IoU(p, q) > iou_th for one of kept boxes [begin, end), with p's area
// given. IoU is intersection / union, 0 where the boxes do not intersect or
// the union is not positive (the same doubles, NaN included, as a branchy
// loop: the selects only pick among values every lane computes), written
// branch-free so it vectorizes: the library builds at -O2, whose cost model
// leaves it scalar, and the clones pick AVX-512 or AVX2 at load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default"), optimize("tree-vectorize", "vect-cost-model=dynamic")))
#endif
bool AnyIouAbove(const Box& p, double p_area, const BoxColumns& k, size_t begin, size_t end, double iou_th) {
  const double* y1 = k.y1.data();
  const double* x1 = k.x1.data();
  const double* y2 = k.y2.data();
  const double* x2 = k.x2.data();
  const double* area = k.area.data();
  int above = 0;
  for (size_t j = begin; j < end; ++j) {
    const double ih = std::min(p.y2, y2[j]) - std::max(p.y1, y1[j]);
    const double iw = std::min(p.x2, x2[j]) - std::max(p.x1, x1[j]);
    const double inter = ih * iw;
    const double uni = p_area + area[j] - inter;
    const double q = inter / uni;
    const double iou = (ih <= 0) | (iw <= 0) ? 0.0 : (uni <= 0 ? 0.0 : q);
    above |= static_cast<int>(iou > iou_th);
  }
  return above != 0;
}

// Whether a kept box suppresses p. Past a threshold of 0 only a box that
// intersects p can, and intersecting p needs y1 < p.y2 and
// y2 > p.y1, so y1 > p.y1 - tallest: the window between those keys, widened
// by a relative margin so rounding in the heights cannot leave a box out.
// Comparing fewer boxes changes nothing but the time: the answer is whether
// any of them overlaps p by more than the threshold.
bool Suppressed(const Box& p, double p_area, const KeptBoxes& k, double iou_th) {
  constexpr size_t kBlock = 32;
  auto any_in = [&](const BoxColumns& c, size_t begin, size_t end) {
    for (size_t b0 = begin; b0 < end; b0 += kBlock) {
      if (AnyIouAbove(p, p_area, c, b0, std::min(end, b0 + kBlock), iou_th)) return true;
    }
    return false;
  };
  size_t begin = 0, end = k.sorted.size();
  // (At a negative threshold a box that does not overlap p suppresses it
  // too: every kept box is a candidate then.)
  if (!k.unordered && !HasNaN(p) && iou_th >= 0) {
    const double margin = 1e-9 * (std::fabs(p.y1) + std::fabs(p.y2) + k.tallest) + 1e-300;
    const std::vector<double>& y1 = k.sorted.y1;
    begin = static_cast<size_t>(std::lower_bound(y1.begin(), y1.end(), p.y1 - k.tallest - margin) - y1.begin());
    end = static_cast<size_t>(std::upper_bound(y1.begin(), y1.end(), p.y2 + margin) - y1.begin());
  }
  return any_in(k.recent, 0, k.recent.size()) || any_in(k.sorted, begin, end);
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
      KeptBoxes kept;
      size_t kept_count = 0;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept_count) >= max_out) break;
        const Box box = ReadBox(boxes, static_cast<size_t>((b * n + i) * 4), center);
        const double area = box.Area();
        if (Suppressed(box, area, kept, iou_th)) continue;
        if (HasNaN(box)) kept.unordered = true;
        kept.Add(box, area);
        ++kept_count;
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
