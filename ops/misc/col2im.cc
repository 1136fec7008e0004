// Col2Im (opset 18): the inverse layout of im2col. Input [N, C·Πblock, L]
// holds, for each of L sliding-block positions, one block's values; they are
// summed back into an image [N, C, *image_shape] (overlaps add up), with
// strides, dilations and pads as Conv defines them. Any number of spatial dims.
#include "absl/strings/str_cat.h"
#include "ops/misc/misc_ops.h"
#include "ops/misc/numeric_util.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

struct Geometry {
  std::vector<int64_t> image, block, strides, dilations, pads;  // pads: begins then ends
  std::vector<int64_t> blocks_per_dim;                          // sliding positions per dim

  int64_t BlockSize() const { return NumElements(block); }
  int64_t Positions() const { return NumElements(blocks_per_dim); }
};

absl::StatusOr<Geometry> MakeGeometry(const Node& node, std::vector<int64_t> image,
                                      std::vector<int64_t> block) {
  const size_t k = image.size();
  if (k == 0 || block.size() != k) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.Describe(), ": image_shape and block_shape must have equal, nonzero length"));
  }
  Geometry g;
  g.image = std::move(image);
  g.block = std::move(block);
  g.strides = node.GetInts("strides", std::vector<int64_t>(k, 1));
  g.dilations = node.GetInts("dilations", std::vector<int64_t>(k, 1));
  g.pads = node.GetInts("pads", std::vector<int64_t>(2 * k, 0));
  if (g.strides.size() != k || g.dilations.size() != k || g.pads.size() != 2 * k) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.Describe(), ": strides/dilations/pads do not match ", k, " spatial dims"));
  }
  for (size_t i = 0; i < k; ++i) {
    const int64_t span = g.dilations[i] * (g.block[i] - 1) + 1;
    const int64_t padded = g.image[i] + g.pads[i] + g.pads[i + k];
    if (g.strides[i] < 1 || g.block[i] < 1 || padded < span) {
      return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": block does not fit dim ", i));
    }
    g.blocks_per_dim.push_back((padded - span) / g.strides[i] + 1);
  }
  return g;
}

// Multi-index of flat index i over dims (row-major).
std::vector<int64_t> Unflatten(int64_t i, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = i % dims[d];
    i /= dims[d];
  }
  return idx;
}

absl::Status Col2ImKernel(KernelContext& ctx) {
  AIC_RETURN_IF_ERROR(RequireNumericInputs(ctx, {0, 1, 2}));
  const Tensor& x = ctx.input(0);
  if (x.rank() != 3) return ctx.Error("input must be [N, C·Πblock, L]");
  AIC_ASSIGN_OR_RETURN(Geometry g, MakeGeometry(ctx.node(), ToInt64s(ctx.input(1)), ToInt64s(ctx.input(2))));
  const int64_t bs = g.BlockSize(), positions = g.Positions();
  if (x.dim(1) % bs != 0 || x.dim(2) != positions) {
    return ctx.Error("input ", DimsToString(x.dims()), " does not match block size ", bs, " and ",
                     positions, " block positions");
  }
  const int64_t n = x.dim(0), c = x.dim(1) / bs, pixels = NumElements(g.image);
  const size_t k = g.image.size();
  const std::vector<double> xs = ToDoubles(x);
  std::vector<double> y(static_cast<size_t>(n * c * pixels), 0.0);
  for (int64_t b = 0; b < bs; ++b) {
    const std::vector<int64_t> off = Unflatten(b, g.block);
    for (int64_t l = 0; l < positions; ++l) {
      const std::vector<int64_t> pos = Unflatten(l, g.blocks_per_dim);
      int64_t pixel = 0;
      bool inside = true;
      for (size_t d = 0; d < k && inside; ++d) {
        const int64_t coord = pos[d] * g.strides[d] - g.pads[d] + off[d] * g.dilations[d];
        inside = coord >= 0 && coord < g.image[d];
        pixel = pixel * g.image[d] + coord;
      }
      if (!inside) continue;  // lands in the padding
      for (int64_t i = 0; i < n * c; ++i) {
        y[static_cast<size_t>(i * pixels + pixel)] += xs[static_cast<size_t>((i * bs + b) * positions + l)];
      }
    }
  }
  std::vector<int64_t> dims = {n, c};
  dims.insert(dims.end(), g.image.begin(), g.image.end());
  ctx.set_output(0, FromDoubles(y, dims, x.dtype()));
  return absl::OkStatus();
}

absl::Status InferCol2Im(OpContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  if (x.has_rank() && x.rank() != 3) return ctx.Error("input must have rank 3, got ", x.ToString());
  const Tensor* image = ctx.input_constant(1);
  const Tensor* block = ctx.input_constant(2);
  Dim n = x.has_rank() ? x[0] : ctx.FreshDim();
  Dim c = ctx.FreshDim();
  if (block != nullptr && x.has_rank() && x[1].is_value()) {
    const int64_t bs = NumElements(ToInt64s(*block));
    if (bs > 0 && x[1].value() % bs != 0) return ctx.Error("channels ", x[1].value(), " not divisible by block size ", bs);
    if (bs > 0) c = Dim(x[1].value() / bs);
  }
  std::vector<Dim> dims = {n, c};
  if (image != nullptr) {
    for (int64_t v : ToInt64s(*image)) dims.push_back(Dim(v));
  } else if (ctx.input_shape(1).has_rank() && ctx.input_shape(1).rank() == 1 &&
             ctx.input_shape(1)[0].is_value()) {
    for (int64_t i = 0; i < ctx.input_shape(1)[0].value(); ++i) dims.push_back(ctx.FreshDim());
  } else {
    ctx.set_output(0, ctx.input_dtype(0), Shape::UnknownRank());
    return absl::OkStatus();
  }
  ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
  return absl::OkStatus();
}

Traits Col2ImTraits(const OpContext&) {
  Traits t;
  t.semantic_name = "Col2Im";
  t.meaning = "y[n, c, p] = Σ over blocks covering p of x[n, c·Πblock + offset, block]";
  t.linearity = Linearity::kLinear;
  t.invertibility = Invertibility::kIrreversible;  // overlapping blocks are summed
  t.collapse = CollapseKind::kReduces;
  t.collapse_how = "overlapping block values summed into one pixel";
  t.effect_detail = "columns → image";
  return t;
}

}  // namespace

void RegisterCol2ImOps(OpRegistry& r) {
  r.Register(OpDef{
      .domain = "",
      .op_type = "Col2Im",
      .since_version = 18,
      .infer = InferCol2Im,
      .traits = Col2ImTraits,
      .cost = [](const OpContext& ctx) {
        Cost c = BytesOnlyCost(ctx);
        const int64_t in = StaticElements(ctx.input_type(0));
        if (in >= 0) c.flops = in;  // one add per input element
        return c;
      },
      .kernel = Col2ImKernel,
  });
}

}  // namespace aic
