// The step kinds every plan uses: a oneDNN primitive over slots (compute and
// reorders alike) and its pointer binding.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "exec/cpu/internal.h"

namespace aic::cpu {

memory::dims ToDnnlDims(const std::vector<int64_t>& dims) {
  if (dims.empty()) return {1};
  return memory::dims(dims.begin(), dims.end());
}

memory::desc ChannelBlockedMd(const std::vector<int64_t>& dims, int64_t block) {
  using tag = memory::format_tag;
  const tag t = dims.size() == 3 ? (block == 16 ? tag::nCw16c : tag::nCw8c)
                : dims.size() == 4 ? (block == 16 ? tag::nChw16c : tag::nChw8c)
                                   : (block == 16 ? tag::nCdhw16c : tag::nCdhw8c);
  return memory::desc(ToDnnlDims(dims), memory::data_type::f32, t);
}

memory::desc ChannelsLastMd(const std::vector<int64_t>& dims) {
  using tag = memory::format_tag;
  const tag channels_last = dims.size() == 3 ? tag::nwc : dims.size() == 4 ? tag::nhwc : tag::ndhwc;
  return memory::desc(ToDnnlDims(dims), memory::data_type::f32, channels_last);
}

int64_t ChannelBlockOf(const memory::desc& md, const std::vector<int64_t>& dims) {
  if (dims.size() < 3 || dims.size() > 5) return 0;
  if (md == ChannelsLastMd(dims)) return dims[1];
  for (int64_t block : {16, 8}) {
    if (md == ChannelBlockedMd(dims, block)) return block;
  }
  return 0;
}

memory::desc PlainMd(const std::vector<int64_t>& dims) {
  memory::dims d = ToDnnlDims(dims);
  memory::dims strides(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * d[i + 1];
  return memory::desc(d, memory::data_type::f32, strides);
}

memory::desc WithDataType(memory::desc md, memory::data_type type) {
  md.data.data_type = static_cast<dnnl_data_type_t>(type);
  return md;
}

void DnnlStep::AddArg(int arg, int slot, const memory::desc& md, bool is_output) {
  args.push_back({arg, slot, md});
  (is_output ? writes : reads).push_back(slot);
}

void DnnlStep::Bind(Plan& plan) {
  bound_.clear();
  refresh_.clear();
  for (const Arg& a : args) {
    const Slot& s = plan.slots[a.slot];
    memory m(a.md, plan.engine, s.ptr != nullptr ? s.ptr : DNNL_MEMORY_NONE);
    bound_[a.arg] = m;
    if (s.storage == Slot::Storage::kFeed || s.storage == Slot::Storage::kDynamic ||
        s.storage == Slot::Storage::kOutput) {
      refresh_.emplace_back(m, a.slot);
    }
  }
}

absl::Status DnnlStep::Execute(Plan& plan) {
  for (auto& [m, slot] : refresh_) m.set_data_handle(plan.slots[slot].ptr);
  if (accumulate >= 0) {
    const Slot& from = plan.slots[accumulate];
    void* dst = plan.slots[writes[0]].ptr;
    if (from.ptr != dst) std::memcpy(dst, from.ptr, from.bytes());
  }
  try {
    primitive.execute(plan.stream, bound_);
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("oneDNN step '", label, "' failed: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace aic::cpu
