#include "ops/nn/conv_geometry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace aic {

int64_t Window::kernel_volume() const {
  int64_t v = 1;
  for (int64_t k : kernel) v *= k;
  return v;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

absl::Status CheckSize(const Node& node, const char* what, const std::vector<int64_t>& v,
                       size_t n) {
  if (v.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": ", what, " has ", v.size(),
                                                   " entries, expected ", n));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Window> ReadWindow(const Node& node, std::vector<int64_t> kernel) {
  Window w;
  size_t n = kernel.size();
  w.kernel = std::move(kernel);
  w.strides = node.GetInts("strides", std::vector<int64_t>(n, 1));
  w.dilations = node.GetInts("dilations", std::vector<int64_t>(n, 1));
  w.pads = node.GetInts("pads", std::vector<int64_t>(2 * n, 0));
  w.auto_pad = node.GetString("auto_pad", "NOTSET");
  if (w.auto_pad.empty()) w.auto_pad = "NOTSET";
  w.ceil_mode = node.GetInt("ceil_mode", 0) != 0;
  AIC_RETURN_IF_ERROR(CheckSize(node, "strides", w.strides, n));
  AIC_RETURN_IF_ERROR(CheckSize(node, "dilations", w.dilations, n));
  AIC_RETURN_IF_ERROR(CheckSize(node, "pads", w.pads, 2 * n));
  for (size_t k = 0; k < n; ++k) {
    if (w.kernel[k] <= 0 || w.strides[k] <= 0 || w.dilations[k] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          node.Describe(), ": kernel, strides and dilations must be positive on axis ", k));
    }
  }
  if (w.auto_pad != "NOTSET" && w.auto_pad != "VALID" && w.auto_pad != "SAME_UPPER" &&
      w.auto_pad != "SAME_LOWER") {
    return absl::InvalidArgumentError(
        absl::StrCat(node.Describe(), ": unknown auto_pad '", w.auto_pad, "'"));
  }
  if (w.auto_pad != "NOTSET") std::fill(w.pads.begin(), w.pads.end(), 0);
  return w;
}

int64_t WindowOutputExtent(Window& w, size_t k, int64_t in) {
  int64_t s = w.strides[k], e = w.extent(k);
  if (w.auto_pad == "VALID") return std::max<int64_t>(0, CeilDiv(in - e + 1, s));
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
    int64_t out = CeilDiv(in, s);
    int64_t total = std::max<int64_t>(0, (out - 1) * s + e - in);
    int64_t small = total / 2;
    w.pads[k] = w.auto_pad == "SAME_UPPER" ? small : total - small;
    w.pads[w.rank() + k] = total - w.pads[k];
    return out;
  }
  int64_t span = in + w.pad_begin(k) + w.pad_end(k) - e;
  if (span < 0) return 0;
  int64_t out = (w.ceil_mode ? CeilDiv(span, s) : span / s) + 1;
  // A last window that would start in the end padding is dropped (as
  // PyTorch and ONNX Runtime do with ceil_mode).
  if (w.ceil_mode && (out - 1) * s >= in + w.pad_begin(k)) --out;
  return out;
}

std::vector<int64_t> ResolveWindow(Window& w, const std::vector<int64_t>& in_spatial) {
  std::vector<int64_t> out;
  for (size_t k = 0; k < w.rank(); ++k) out.push_back(WindowOutputExtent(w, k, in_spatial[k]));
  return out;
}

Dim WindowOutputDim(const Window& w, size_t k, const Dim& in, const std::function<Dim()>& fresh) {
  if (in.is_value()) {
    Window copy = w;
    return WindowOutputExtent(copy, k, in.value());
  }
  bool unit_stride = w.strides[k] == 1;
  bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
  bool covering = w.auto_pad == "NOTSET" && w.pad_begin(k) + w.pad_end(k) == w.extent(k) - 1;
  bool identity = w.auto_pad == "VALID" && w.extent(k) == 1;
  if (unit_stride && (same || covering || identity)) return in;
  return fresh();
}

absl::StatusOr<TransposeWindow> ReadTransposeWindow(const Node& node, std::vector<int64_t> kernel) {
  TransposeWindow t;
  size_t n = kernel.size();
  AIC_ASSIGN_OR_RETURN(t.window, ReadWindow(node, std::move(kernel)));
  t.output_padding = node.GetInts("output_padding", std::vector<int64_t>(n, 0));
  AIC_RETURN_IF_ERROR(CheckSize(node, "output_padding", t.output_padding, n));
  t.output_shape = node.GetInts("output_shape", {});
  if (t.output_shape.size() > n) {  // some exporters give [N, C, spatial...]
    t.output_shape.erase(t.output_shape.begin(),
                         t.output_shape.end() - static_cast<int64_t>(n));
  }
  if (!t.output_shape.empty()) AIC_RETURN_IF_ERROR(CheckSize(node, "output_shape", t.output_shape, n));
  return t;
}

std::vector<int64_t> ResolveTransposeWindow(TransposeWindow& t, const std::vector<int64_t>& in) {
  Window& w = t.window;
  size_t n = w.rank();
  std::vector<int64_t> out(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t full = w.strides[k] * (in[k] - 1) + t.output_padding[k] + w.extent(k);
    bool same = w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER";
    if (!t.output_shape.empty() || same) {
      out[k] = !t.output_shape.empty() ? t.output_shape[k] : in[k] * w.strides[k];
      int64_t total = full - out[k];
      // The spec's split: SAME_UPPER puts the smaller half first, otherwise last.
      if (w.auto_pad == "SAME_UPPER") {
        w.pads[k] = FloorDiv(total, 2);
      } else {
        w.pads[k] = total - FloorDiv(total, 2);
      }
      w.pads[n + k] = total - w.pads[k];
    } else {
      out[k] = full - w.pad_begin(k) - w.pad_end(k);
    }
  }
  return out;
}

}  // namespace aic
