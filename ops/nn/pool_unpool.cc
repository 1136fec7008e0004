// MaxUnpool: the partial inverse of MaxPool. Scatters each pooled value back
// to the flat position its Indices name; every other output element is zero.
#include "absl/strings/str_cat.h"
#include "ops/math/matmul_util.h"
#include "ops/nn/conv_geometry.h"
#include "ops/nn/pool_internal.h"
#include "ops/util/cost_util.h"

namespace aic {

namespace {

// Default output extent: (in - 1)·stride + kernel - pads (MaxPool's inverse).
absl::StatusOr<std::vector<Dim>> UnpoolDims(const Node& node, const Shape& x,
                                            const std::function<Dim()>& fresh) {
  size_t nsp = static_cast<size_t>(x.rank() - 2);
  std::vector<int64_t> kernel = node.GetInts("kernel_shape", {});
  if (kernel.size() != nsp) {
    return absl::InvalidArgumentError(
        absl::StrCat(node.Describe(), ": kernel_shape must have ", nsp, " entries"));
  }
  AIC_ASSIGN_OR_RETURN(Window w, ReadWindow(node, kernel));
  std::vector<Dim> out = {x[0], x[1]};
  for (size_t k = 0; k < nsp; ++k) {
    const Dim& in = x[k + 2];
    out.push_back(in.is_value()
                      ? Dim((in.value() - 1) * w.strides[k] + w.kernel[k] - w.pad_begin(k) - w.pad_end(k))
                      : fresh());
  }
  return out;
}

absl::Status InferMaxUnpool(OpContext& ctx) {
  const Shape& x = ctx.input_shape(0);
  DType dt = ctx.input_dtype(0);
  if (ctx.has_input(2)) {
    if (const Tensor* s = ctx.input_constant(2)) {
      ctx.set_output(0, dt, Shape::FromValues(TensorToInt64(*s)));
      return absl::OkStatus();
    }
    int64_t rank = x.rank();
    std::vector<Dim> dims;
    for (int64_t k = 0; k < rank; ++k) dims.push_back(ctx.FreshDim());
    ctx.set_output(0, dt, rank < 0 ? Shape::UnknownRank() : Shape(dims));
    return absl::OkStatus();
  }
  if (!x.has_rank()) {
    ctx.set_output(0, dt, Shape::UnknownRank());
    return absl::OkStatus();
  }
  if (x.rank() < 3) return ctx.Error("input must have rank >= 3, got ", x.ToString());
  AIC_ASSIGN_OR_RETURN(std::vector<Dim> out, UnpoolDims(ctx.node(), x, [&] { return ctx.FreshDim(); }));
  ctx.set_output(0, dt, Shape(out));
  return absl::OkStatus();
}

absl::Status MaxUnpoolKernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& ind = ctx.input(1);
  if (x.rank() < 3) return ctx.Error("input must have rank >= 3");
  if (ind.dims() != x.dims()) return ctx.Error("indices shape differs from input shape");
  // Indices address MaxPool's input, whose shape is the default output; a
  // larger output_shape pads that at the end of each axis.
  std::vector<int64_t> dims;
  auto d = UnpoolDims(ctx.node(), Shape::FromValues(x.dims()), [] { return Dim(); });
  if (!d.ok()) return d.status();
  for (const Dim& v : *d) dims.push_back(v.value());
  for (int64_t v : dims) {
    if (v < 0) return ctx.Error("negative output extent");
  }
  std::vector<double> xv = TensorToDoubles(x), y(static_cast<size_t>(NumElements(dims)), 0.0);
  std::vector<int64_t> iv = TensorToInt64(ind);
  for (size_t i = 0; i < xv.size(); ++i) {
    if (iv[i] < 0 || iv[i] >= static_cast<int64_t>(y.size())) {
      return ctx.Error("index ", iv[i], " out of range for output ", DimsToString(dims));
    }
    y[static_cast<size_t>(iv[i])] = xv[i];
  }
  if (ctx.has_input(2)) {
    std::vector<int64_t> want = TensorToInt64(ctx.input(2));
    if (want.size() != dims.size()) return ctx.Error("output_shape has the wrong rank");
    for (size_t k = 0; k < dims.size(); ++k) {
      if (want[k] < dims[k]) return ctx.Error("output_shape is smaller than the unpooled shape");
    }
    std::vector<double> padded(static_cast<size_t>(NumElements(want)), 0.0);
    std::vector<int64_t> idx(dims.size(), 0);
    std::vector<int64_t> strides(want.size(), 1);
    for (size_t k = want.size(); k-- > 1;) strides[k - 1] = strides[k] * want[k];
    size_t src = 0;
    if (!y.empty()) {
      do {
        int64_t off = 0;
        for (size_t k = 0; k < idx.size(); ++k) off += idx[k] * strides[k];
        padded[static_cast<size_t>(off)] = y[src++];
      } while (NextMultiIndex(idx, dims));
    }
    y = std::move(padded);
    dims = want;
  }
  ctx.set_output(0, DoublesToTensor(y, dims, x.dtype()));
  return absl::OkStatus();
}

Traits MaxUnpoolTraits(const OpContext&) {
  Traits t;
  t.semantic_name = "MaxUnpool";
  t.meaning = "y = 0 except y[indices] = x";
  t.linearity = Linearity::kLinear;
  t.invertibility = Invertibility::kUnknown;  // injective unless indices repeat
  t.effect = RepresentationEffect::kExpands;
  return t;
}

}  // namespace

void RegisterMaxUnpoolOp(OpRegistry& r) {
  r.Register(OpDef{.domain = "",
                   .op_type = "MaxUnpool",
                   .since_version = 9,
                   .infer = InferMaxUnpool,
                   .traits = MaxUnpoolTraits,
                   .cost = [](const OpContext& ctx) { return BytesOnlyCost(ctx); },
                   .kernel = MaxUnpoolKernel});
}

}  // namespace aic
