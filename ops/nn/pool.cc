// The pooling family: MaxPool (with Indices), AveragePool, LpPool and their
// Global* forms; MaxUnpool is in pool_unpool.cc, MaxRoiPool/RoiAlign in
// pool_roi.cc. One window driver (shared geometry with Conv) visits each
// output position's taps; the pool kind only decides how taps combine. Pools
// collapse by nature: max selects, average and Lp summarise.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/conv_geometry.h"
#include "ops/nn/pool_internal.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

enum class PoolKind { kMax, kAverage, kLp };

struct PoolSpec {
  PoolKind kind;
  bool global;
};

struct PoolOutput {
  std::vector<double> y;
  std::vector<int64_t> indices;
  std::vector<int64_t> dims;
};

// Window of a node: kernel_shape attribute, or the whole spatial extent for Global*.
absl::StatusOr<Window> PoolWindow(const Node& node, const PoolSpec& spec,
                                  const std::vector<int64_t>& in_spatial, size_t nsp) {
  if (spec.global) {
    Window w;
    w.kernel = in_spatial;
    w.strides.assign(nsp, 1);
    w.dilations.assign(nsp, 1);
    w.pads.assign(2 * nsp, 0);
    return w;
  }
  std::vector<int64_t> kernel = node.GetInts("kernel_shape", {});
  if (kernel.size() != nsp) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": kernel_shape has ",
                                                   kernel.size(), " entries for ", nsp,
                                                   " spatial axes"));
  }
  return ReadWindow(node, kernel);
}

PoolOutput PoolForward(const std::vector<double>& x, const std::vector<int64_t>& x_dims, Window& win,
                       PoolKind kind, double p, bool count_include_pad, bool column_major) {
  size_t nsp = win.rank();
  std::vector<int64_t> in_sp(x_dims.begin() + 2, x_dims.end());
  std::vector<int64_t> out_sp = ResolveWindow(win, in_sp);
  PoolOutput r;
  int64_t planes = x_dims[0] * x_dims[1];
  r.dims = {x_dims[0], x_dims[1]};
  r.dims.insert(r.dims.end(), out_sp.begin(), out_sp.end());
  int64_t in_size = NumElements(in_sp), out_size = NumElements(out_sp);
  r.y.assign(static_cast<size_t>(planes * out_size), 0.0);
  r.indices.assign(r.y.size(), 0);
  if (out_size == 0 || planes == 0) return r;
  std::vector<int64_t> strides(nsp, 1), index_strides(nsp, 1);
  for (size_t k = nsp; k-- > 1;) strides[k - 1] = strides[k] * in_sp[k];
  for (size_t k = 1; k < nsp; ++k) index_strides[k] = index_strides[k - 1] * in_sp[k - 1];
  if (!column_major) index_strides = strides;
  std::vector<int64_t> o(nsp, 0), kk(nsp, 0);
  int64_t oi = 0;
  do {
    std::vector<int64_t> taps, tap_index;
    int64_t padded_count = 1;  // taps inside the padded input (count_include_pad)
    for (size_t d = 0; d < nsp; ++d) {
      int64_t start = o[d] * win.strides[d] - win.pad_begin(d);
      int64_t end = std::min(start + win.extent(d), in_sp[d] + win.pad_end(d));
      padded_count *= (end - start + win.dilations[d] - 1) / win.dilations[d];
    }
    std::fill(kk.begin(), kk.end(), 0);
    do {
      int64_t off = 0, idx = 0;
      for (size_t d = 0; d < nsp && off >= 0; ++d) {
        int64_t pos = o[d] * win.strides[d] - win.pad_begin(d) + kk[d] * win.dilations[d];
        off = (pos < 0 || pos >= in_sp[d]) ? -1 : off + pos * strides[d];
        idx += pos * index_strides[d];
      }
      if (off >= 0) {
        taps.push_back(off);
        tap_index.push_back(idx);
      }
    } while (NextMultiIndex(kk, win.kernel));
    for (int64_t pl = 0; pl < planes; ++pl) {
      const double* xp = x.data() + pl * in_size;
      size_t out = static_cast<size_t>(pl * out_size + oi);
      if (kind == PoolKind::kMax) {
        double best = -std::numeric_limits<double>::infinity();
        int64_t best_i = 0;
        for (size_t t = 0; t < taps.size(); ++t) {
          double v = xp[taps[t]];
          if (v > best || (std::isnan(v) && !std::isnan(best))) {
            best = v;
            best_i = tap_index[t];
          }
        }
        r.y[out] = best;
        r.indices[out] = pl * in_size + best_i;
      } else if (kind == PoolKind::kAverage) {
        double s = 0;
        for (int64_t t : taps) s += xp[t];
        double n = count_include_pad ? static_cast<double>(padded_count)
                                     : static_cast<double>(taps.size());
        r.y[out] = n > 0 ? s / n : 0.0;
      } else {
        double s = 0;
        for (int64_t t : taps) s += std::pow(std::fabs(xp[t]), p);
        r.y[out] = std::pow(s, 1.0 / p);
      }
    }
    ++oi;
  } while (NextMultiIndex(o, out_sp));
  return r;
}

double LpOrder(const Node& node) {
  // LpPool-1 had p as a float; later versions an int.
  const Attribute* a = node.FindAttr("p");
  if (a == nullptr) return 2.0;
  return a->type == AttrType::kFloat ? static_cast<double>(a->f) : static_cast<double>(a->i);
}

absl::Status PoolKernel(KernelContext& ctx, PoolSpec spec) {
  const Tensor& x = ctx.input(0);
  if (!IsRealDType(x.dtype()) && !(spec.kind == PoolKind::kMax && IsQuant8DType(x.dtype()))) {
    return ctx.Unimplemented("dtype ", DTypeName(x.dtype()));
  }
  if (x.rank() < 3) return ctx.Error("input must have rank >= 3, got ", DimsToString(x.dims()));
  std::vector<int64_t> in_sp(x.dims().begin() + 2, x.dims().end());
  AIC_ASSIGN_OR_RETURN(Window win, PoolWindow(ctx.node(), spec, in_sp, in_sp.size()));
  PoolOutput r = PoolForward(TensorToDoubles(x), x.dims(), win, spec.kind, LpOrder(ctx.node()),
                             ctx.node().GetInt("count_include_pad", 0) != 0,
                             ctx.node().GetInt("storage_order", 0) != 0);
  ctx.set_output(0, DoublesToTensor(r.y, r.dims, x.dtype()));
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    ctx.set_output(1, Tensor::FromVector<int64_t>(r.indices, r.dims));
  }
  return absl::OkStatus();
}

absl::Status InferPool(OpContext& ctx, PoolSpec spec) {
  const Shape& x = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  if (!x.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kInt64, Shape::UnknownRank());
    return absl::OkStatus();
  }
  if (x.rank() < 3) return ctx.Error("input must have rank >= 3, got ", x.ToString());
  size_t nsp = static_cast<size_t>(x.rank() - 2);
  std::vector<Dim> out = {x[0], x[1]};
  if (spec.global) {
    out.insert(out.end(), nsp, Dim(1));
  } else {
    AIC_ASSIGN_OR_RETURN(Window win, PoolWindow(ctx.node(), spec, {}, nsp));
    for (size_t k = 0; k < nsp; ++k) {
      out.push_back(WindowOutputDim(win, k, x[k + 2], [&] { return ctx.FreshDim(); }));
      // Why: a window larger than the padded input leaves nothing (ONNX
      // Runtime refuses the node); a model that asks for it is malformed.
      if (out.back().is_value() && out.back().value() <= 0) {
        return ctx.Error("the window does not fit the padded input on spatial axis ", k, " (", x[k + 2].ToString(), ")");
      }
    }
  }
  ctx.set_output(0, dt, Shape(out));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::kInt64, Shape(out));
  return absl::OkStatus();
}

std::string SpatialText(const Shape& s) {
  if (!s.has_rank() || s.rank() < 3) return "?";
  std::vector<std::string> parts;
  for (size_t k = 2; k < s.dims().size(); ++k) parts.push_back(s[k].ToString());
  return absl::StrJoin(parts, "×");
}

Traits PoolTraits(const OpContext& ctx, PoolSpec spec) {
  Traits t;
  const char* where = spec.global ? "over all positions" : "over each window";
  switch (spec.kind) {
    case PoolKind::kMax:
      t.semantic_name = spec.global ? "GlobalMaxPool" : "MaxPool";
      t.meaning = absl::StrCat("y = max(x) ", where);
      t.linearity = Linearity::kNonlinear;
      t.collapse = CollapseKind::kSelects;
      t.collapse_how = absl::StrCat("keeps the largest value ", where, "; the rest are discarded");
      break;
    case PoolKind::kAverage:
      t.semantic_name = spec.global ? "GlobalAvgPool" : "AvgPool";
      t.meaning = absl::StrCat("y = mean(x) ", where);
      t.linearity = Linearity::kLinear;
      t.collapse = CollapseKind::kReduces;
      t.collapse_how = absl::StrCat("values summarised by their mean ", where);
      break;
    case PoolKind::kLp:
      t.semantic_name = spec.global ? "GlobalLpPool" : "LpPool";
      t.meaning = absl::StrCat("y = (Σ|x|^p)^(1/p) ", where);
      t.linearity = Linearity::kNonlinear;
      t.collapse = CollapseKind::kReduces;
      t.collapse_how = absl::StrCat("values summarised by their Lp norm ", where);
      break;
  }
  t.invertibility = Invertibility::kIrreversible;
  auto in = StaticElements(ctx.input_type(0)), out = StaticElements(ctx.output_type(0));
  if (in > 0 && out > 0) {
    t.effect = out < in ? RepresentationEffect::kRestricts : RepresentationEffect::kPreserves;
  }
  t.effect_detail = absl::StrCat(SpatialText(ctx.input_shape(0)), " → ",
                                 SpatialText(ctx.output_type(0).shape));
  t.removable_when = "the window is 1 with unit stride and no padding";
  if (spec.kind == PoolKind::kMax) t.fuses_with = {"Relu"};
  return t;
}

// FLOPs: one compare/add per tap for every output element (+1 divide for
// average, +2 per tap for Lp's |x|^p); no MACs.
Cost PoolCost(const OpContext& ctx, PoolSpec spec) {
  Cost c = BytesOnlyCost(ctx);
  int64_t out = StaticElements(ctx.output_type(0));
  const Shape& x = ctx.input_shape(0);
  if (out < 0 || !x.IsStatic() || x.rank() < 3) {
    c.known = false;
    return c;
  }
  int64_t taps = 1;
  if (spec.global) {
    for (size_t k = 2; k < x.dims().size(); ++k) taps *= x[k].value();
  } else {
    for (int64_t k : ctx.node().GetInts("kernel_shape", {})) taps *= k;
  }
  int64_t per_tap = spec.kind == PoolKind::kLp ? 3 : 1;
  c.flops = out * taps * per_tap + (spec.kind == PoolKind::kAverage ? out : 0);
  return c;
}

void RegisterPool(OpRegistry& r, const char* name, int since, PoolSpec spec) {
  r.Register(OpDef{.domain = "",
                   .op_type = name,
                   .since_version = since,
                   .infer = [spec](OpContext& ctx) { return InferPool(ctx, spec); },
                   .traits = [spec](const OpContext& ctx) { return PoolTraits(ctx, spec); },
                   .cost = [spec](const OpContext& ctx) { return PoolCost(ctx, spec); },
                   .kernel = [spec](KernelContext& ctx) { return PoolKernel(ctx, spec); }});
}

}  // namespace

void RegisterPoolOps(OpRegistry& r) {
  RegisterPool(r, "MaxPool", 1, {PoolKind::kMax, false});
  RegisterPool(r, "AveragePool", 1, {PoolKind::kAverage, false});
  RegisterPool(r, "LpPool", 1, {PoolKind::kLp, false});
  RegisterPool(r, "GlobalMaxPool", 1, {PoolKind::kMax, true});
  RegisterPool(r, "GlobalAveragePool", 1, {PoolKind::kAverage, true});
  RegisterPool(r, "GlobalLpPool", 1, {PoolKind::kLp, true});
  RegisterMaxUnpoolOp(r);
  RegisterRoiPoolOps(r);
}

}  // namespace aic
