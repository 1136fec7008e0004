// Rearrangements that move every element to a computed place: DepthToSpace
// and SpaceToDepth (channel blocks <-> spatial blocks, DCR or CRD order) and
// ReverseSequence (per-batch reversal of the first len[b] time steps).
#include <string>

#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_family.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/broadcast.h"

namespace aic {

namespace {

// ---- DepthToSpace, SpaceToDepth ----

absl::StatusOr<int64_t> BlockSize(const Node& node) {
  int64_t b = node.GetInt("blocksize", 0);
  if (b <= 0) return absl::InvalidArgumentError("blocksize must be positive");
  return b;
}

// to_space: [N, C, H, W] → [N, C/b², H·b, W·b]; else the inverse.
absl::Status InferBlockMove(OpContext& ctx, bool to_space) {
  const Shape& in = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  absl::StatusOr<int64_t> b = BlockSize(ctx.node());
  if (!b.ok()) return ctx.Error(b.status().message());
  if (!in.has_rank()) {
    ctx.set_output(0, dt, Shape({ctx.FreshDim(), ctx.FreshDim(), ctx.FreshDim(), ctx.FreshDim()}));
    return absl::OkStatus();
  }
  if (in.rank() != 4) return ctx.Error("input must be 4-D, got rank ", in.rank());
  int64_t bb = *b * *b;
  auto scale = [&](const Dim& d, bool mul, int64_t f) -> absl::StatusOr<Dim> {
    if (!d.is_value()) return ctx.FreshDim();
    if (mul) return Dim(d.value() * f);
    if (d.value() % f != 0) return ctx.Error("dim ", d.value(), " is not divisible by ", f);
    return Dim(d.value() / f);
  };
  std::vector<Dim> dims = {in[0]};
  for (auto [k, mul, f] : {std::tuple<int, bool, int64_t>{1, !to_space, bb}, {2, to_space, *b}, {3, to_space, *b}}) {
    absl::StatusOr<Dim> d = scale(in[k], mul, f);
    if (!d.ok()) return d.status();
    dims.push_back(*d);
  }
  ctx.set_output(0, dt, Shape(dims));
  return absl::OkStatus();
}

absl::Status BlockMoveKernel(KernelContext& ctx, bool to_space) {
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  absl::StatusOr<int64_t> bs = BlockSize(ctx.node());
  if (!bs.ok()) return ctx.Error(bs.status().message());
  if (x.rank() != 4) return ctx.Error("input must be 4-D");
  int64_t b = *bs;
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  std::string mode = ctx.node().GetString("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return ctx.Error("mode must be DCR or CRD, got '", mode, "'");
  bool crd = mode == "CRD";
  std::vector<int64_t> dims;
  if (to_space) {
    if (c % (b * b) != 0) return ctx.Error("channels ", c, " not divisible by blocksize² ", b * b);
    dims = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0) return ctx.Error("spatial dims not divisible by blocksize ", b);
    dims = {n, c * b * b, h / b, w / b};
  }
  ctx.set_output(0, Remap(x, dims, [&](const std::vector<int64_t>& o) {
                   int64_t ic, ih, iw;
                   if (to_space) {
                     int64_t bh = o[2] % b, bw = o[3] % b, oc = dims[1];
                     ic = crd ? o[1] * b * b + bh * b + bw : (bh * b + bw) * oc + o[1];
                     ih = o[2] / b;
                     iw = o[3] / b;
                   } else {
                     // DCR: channel = (bh·b + bw)·C + c; CRD (opset 28): c·b² + bh·b + bw.
                     int64_t blk = crd ? o[1] % (b * b) : o[1] / c;
                     ic = crd ? o[1] / (b * b) : o[1] % c;
                     ih = o[2] * b + blk / b;
                     iw = o[3] * b + blk % b;
                   }
                   return ((o[0] * c + ic) * h + ih) * w + iw;
                 }));
  return absl::OkStatus();
}

// ---- ReverseSequence ----

absl::Status InferSameAsInput(OpContext& ctx) {
  ctx.set_output_type(0, ctx.input_type(0));
  return absl::OkStatus();
}

absl::Status ReverseSequenceKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, x.dtype()));
  std::vector<int64_t> lens = TensorToInt64s(ctx.input(1));
  int64_t batch_axis = ctx.node().GetInt("batch_axis", 1);
  int64_t time_axis = ctx.node().GetInt("time_axis", 0);
  if (x.rank() < 2 || (batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) ||
      batch_axis == time_axis) {
    return ctx.Error("batch_axis/time_axis must be 0 and 1 in either order, on a rank ≥ 2 input");
  }
  if (static_cast<int64_t>(lens.size()) != x.dim(batch_axis)) return ctx.Error("sequence_lens size mismatch");
  for (int64_t l : lens) {
    if (l < 0 || l > x.dim(time_axis)) return ctx.Error("sequence length ", l, " out of range");
  }
  std::vector<int64_t> strides = ContiguousStrides(x.dims());
  ctx.set_output(0, Remap(x, x.dims(), [&](const std::vector<int64_t>& idx) {
                   int64_t t = idx[time_axis];
                   int64_t len = lens[idx[batch_axis]];
                   int64_t src = t < len ? len - 1 - t : t;
                   return OffsetOf(idx, strides) + (src - t) * strides[time_axis];
                 }));
  return absl::OkStatus();
}

}  // namespace

void RegisterRearrangeOps(OpRegistry& r) {
  r.Register(MakeOp(
      "DepthToSpace", 1, [](OpContext& ctx) { return InferBlockMove(ctx, true); },
      [](const OpContext& ctx) {
        return ReindexTraits(ctx, "DepthToSpace", "channels rearranged into spatial blocks");
      },
      nullptr, [](KernelContext& ctx) { return BlockMoveKernel(ctx, true); }));
  r.Register(MakeOp(
      "SpaceToDepth", 1, [](OpContext& ctx) { return InferBlockMove(ctx, false); },
      [](const OpContext& ctx) {
        return ReindexTraits(ctx, "SpaceToDepth", "spatial blocks rearranged into channels");
      },
      nullptr, [](KernelContext& ctx) { return BlockMoveKernel(ctx, false); }));
  r.Register(MakeOp(
      "ReverseSequence", 10, InferSameAsInput,
      [](const OpContext& ctx) {
        return ReindexTraits(ctx, "ReverseSequence", "y[b, t] = x[b, len[b]-1-t] for t < len[b]");
      },
      nullptr, ReverseSequenceKernel));
}

}  // namespace aic
