// TensorScatter (opset 24): the functional KV-cache update. present_cache is
// past_cache with `update` written along `axis` (the sequence axis, not the
// batch) starting at write_indices[b] for each sample b (0 when absent); in
// "circular" mode the write position wraps modulo the cache length.
#include "absl/strings/str_cat.h"
#include "ops/registry.h"
#include "ops/tensor/tensor_family.h"
#include "ops/tensor/tensor_util.h"
#include "ops/util/broadcast.h"

namespace aic {

namespace {

// The mode attribute: true for "circular". Decoded here for both inference
// and the kernel, which runs without inference and must not read an unknown
// mode as linear.
absl::StatusOr<bool> IsCircular(const Node& node) {
  std::string mode = node.GetString("mode", "linear");
  if (mode != "linear" && mode != "circular") {
    return absl::InvalidArgumentError(absl::StrCat("unknown mode '", mode, "'"));
  }
  return mode == "circular";
}

absl::Status InferTensorScatter(OpContext& ctx) {
  const Shape &past = ctx.input_shape(0), &update = ctx.input_shape(1);
  if (auto mode = IsCircular(ctx.node()); !mode.ok()) return ctx.Error(mode.status().message());
  if (past.has_rank()) {
    auto axis = NormalizeAxis(ctx.node().GetInt("axis", -2), past.rank());
    if (!axis.ok()) return ctx.Error(axis.status().message());
    if (*axis == 0) return ctx.Error("axis cannot be the batch axis 0");
    if (update.has_rank()) {
      if (update.rank() != past.rank()) {
        return ctx.Error("update ", update.ToString(), " and past_cache ", past.ToString(),
                         " differ in rank");
      }
      for (int64_t k = 0; k < past.rank(); ++k) {
        const Dim &p = past[static_cast<size_t>(k)], &u = update[static_cast<size_t>(k)];
        if (!p.is_value() || !u.is_value()) continue;
        if (k == *axis ? u.value() > p.value() : u.value() != p.value()) {
          return ctx.Error("update ", update.ToString(), " does not fit past_cache ",
                           past.ToString());
        }
      }
    }
  }
  ctx.set_output(0, ctx.input_dtype(0), past);
  return absl::OkStatus();
}

absl::Status TensorScatterKernel(KernelContext& ctx) {
  const Tensor &past = ctx.input(0), &update = ctx.input(1);
  AIC_RETURN_IF_ERROR(CheckCopyable(ctx, past.dtype()));
  if (update.dtype() != past.dtype()) return ctx.Error("update and past_cache dtypes differ");
  auto axis_or = NormalizeAxis(ctx.node().GetInt("axis", -2), past.rank());
  if (!axis_or.ok()) return ctx.Error(axis_or.status().message());
  int64_t axis = *axis_or;
  if (axis == 0) return ctx.Error("axis cannot be the batch axis 0");
  if (update.rank() != past.rank()) return ctx.Error("update and past_cache differ in rank");
  for (int64_t k = 0; k < past.rank(); ++k) {
    if (k == axis ? update.dim(k) > past.dim(k) : update.dim(k) != past.dim(k)) {
      return ctx.Error("update ", DimsToString(update.dims()), " does not fit past_cache ",
                       DimsToString(past.dims()));
    }
  }
  absl::StatusOr<bool> circular_or = IsCircular(ctx.node());
  if (!circular_or.ok()) return ctx.Error(circular_or.status().message());
  bool circular = *circular_or;
  int64_t batch = past.dim(0), max_len = past.dim(axis), len = update.dim(axis);
  std::vector<int64_t> write(static_cast<size_t>(batch), 0);
  if (ctx.has_input(2)) {
    const Tensor& w = ctx.input(2);
    if (w.rank() != 1 || w.dim(0) != batch) {
      return ctx.Error("write_indices ", DimsToString(w.dims()), " is not [", batch, "]");
    }
    write = TensorToInt64s(w);
  }
  // Rows before the axis, each holding a [len or max_len, inner] block.
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < axis; ++k) outer *= past.dim(k);
  for (int64_t k = axis + 1; k < past.rank(); ++k) inner *= past.dim(k);
  int64_t per_sample = outer / batch;
  Tensor out = past.Clone();
  for (int64_t o = 0; o < outer; ++o) {
    int64_t start = write[static_cast<size_t>(o / per_sample)];
    for (int64_t s = 0; s < len; ++s) {
      int64_t dst = start + s;
      if (circular) dst = ((dst % max_len) + max_len) % max_len;
      if (dst < 0 || dst >= max_len) {
        return ctx.Error("write index ", dst, " outside the cache length ", max_len);
      }
      CopyElements(update, (o * len + s) * inner, out, (o * max_len + dst) * inner, inner);
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterTensorScatterOps(OpRegistry& r) {
  r.Register(MakeOp(
      "TensorScatter", 24, InferTensorScatter,
      [](const OpContext& ctx) {
        return SelectTraits(ctx, "TensorScatter",
                            "present = past with update written at write_indices along axis", false,
                            "the overwritten cache entries are discarded");
      },
      MovementCost, TensorScatterKernel));
}

}  // namespace aic
