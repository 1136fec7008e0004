// Each md is read as oneDNN's blocking description: per logical dim an outer
// stride, plus at most one inner block (size b on dim d, innermost, stride
// 1). The destination's physical axes (outer dims by decreasing stride, then
// its block) are walked in memory order; each gets the source stride that
// one step along it moves the source by. A dim blocked in the source but not
// in the destination splits into [D/b, b] there (dense, so the split keeps
// the destination's order).
#include "exec/cpu/layout_copy.h"

#include <algorithm>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "exec/cpu/native_step.h"

namespace aic::cpu {

namespace {

struct Blocking {
  int block_dim = -1;  // the dim with an inner block, -1 for none
  int64_t block = 1;
};

// The md's single inner block, or nullopt for anything this copy cannot
// describe (padding, two-level blocks, compensation, non-blocked formats).
std::optional<Blocking> BlockingOf(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked || d.extra.flags != 0 || d.ndims <= 0) return std::nullopt;
  for (int k = 0; k < d.ndims; ++k) {
    if (d.padded_dims[k] != d.dims[k] || d.padded_offsets[k] != 0 || d.dims[k] <= 0) return std::nullopt;
  }
  const dnnl_blocking_desc_t& b = d.format_desc.blocking;
  Blocking out;
  if (b.inner_nblks > 1) return std::nullopt;
  if (b.inner_nblks == 1) {
    out.block_dim = static_cast<int>(b.inner_idxs[0]);
    out.block = b.inner_blks[0];
    if (out.block <= 1 || d.dims[out.block_dim] % out.block != 0) return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<kernels::StridedCopyPlan> LayoutCopyPlan(const memory::desc& from, const memory::desc& to) {
  const dnnl_memory_desc_t& f = from.data;
  const dnnl_memory_desc_t& t = to.data;
  if (f.ndims != t.ndims || f.data_type != t.data_type || t.offset0 != 0) return std::nullopt;
  const int rank = f.ndims;
  for (int k = 0; k < rank; ++k) {
    if (f.dims[k] != t.dims[k]) return std::nullopt;
  }
  std::optional<Blocking> fb = BlockingOf(from), tb = BlockingOf(to);
  if (!fb || !tb) return std::nullopt;
  if (fb->block_dim >= 0 && fb->block_dim == tb->block_dim && fb->block != tb->block) return std::nullopt;

  // The destination's physical axes, outermost first: (dim, inner?).
  std::vector<int> order(rank);
  std::iota(order.begin(), order.end(), 0);
  const auto* ts = t.format_desc.blocking.strides;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ts[a] > ts[b]; });
  const auto* fs = f.format_desc.blocking.strides;
  int64_t dense = tb->block;  // the destination stride the next outer axis must have
  std::vector<std::pair<int64_t, int64_t>> reversed;  // (extent, source stride), innermost first
  if (tb->block_dim >= 0) {
    // The destination's block: steps of one along the blocked dim.
    int k = tb->block_dim;
    reversed.emplace_back(tb->block, fb->block_dim == k ? 1 : fs[k]);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const int k = *it;
    const int64_t extent = t.dims[k] / (tb->block_dim == k ? tb->block : 1);
    if (extent == 1) continue;
    if (ts[k] != dense) return std::nullopt;  // not dense
    dense *= extent;
    if (fb->block_dim == k && tb->block_dim != k) {
      // Blocked in the source only: [D/b, b] here, innermost part first.
      reversed.emplace_back(fb->block, 1);
      reversed.emplace_back(extent / fb->block, fs[k]);
    } else if (tb->block_dim == k) {
      reversed.emplace_back(extent, fb->block_dim == k ? fs[k] : fs[k] * tb->block);
    } else {
      reversed.emplace_back(extent, fs[k]);
    }
  }
  std::vector<int64_t> out_dims, src_strides;  // outermost first; none (one element) is fine for MakeCopy
  for (auto it = reversed.rbegin(); it != reversed.rend(); ++it) {
    out_dims.push_back(it->first);
    src_strides.push_back(it->second);
  }
  const auto elem_size = static_cast<int64_t>(dnnl_data_type_size(f.data_type));
  if (elem_size <= 0) return std::nullopt;
  return kernels::MakeCopy(out_dims, src_strides, f.offset0, elem_size);
}

void AddReorderStep(Plan& plan, int from, const memory::desc& from_md, int to, const memory::desc& to_md,
                    const std::string& label) {
  if (std::optional<kernels::StridedCopyPlan> copy = LayoutCopyPlan(from_md, to_md)) {
    auto step = std::make_unique<NativeStep>(
        std::vector<int>{from}, std::vector<int>{to},
        [copy = *std::move(copy)](const void* const* in, void* const* out) {
          kernels::RunStridedCopy(copy, in[0], out[0]);
          return absl::OkStatus();
        },
        "reorder", label);
    plan.steps.push_back(std::move(step));
    return;
  }
  auto step = std::make_unique<DnnlStep>();
  step->primitive = dnnl::reorder(dnnl::reorder::primitive_desc(plan.engine, from_md, plan.engine, to_md));
  step->AddArg(DNNL_ARG_SRC, from, from_md, false);
  step->AddArg(DNNL_ARG_DST, to, to_md, true);
  step->kind = "reorder";
  step->label = label;
  plan.steps.push_back(std::move(step));
}

}  // namespace aic::cpu
