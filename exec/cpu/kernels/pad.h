// Pad of a dense f32 tensor (constant, reflect or edge), negative pads (crops)
// included: every output index maps, per axis, to an input index or to
// "outside" (constant mode only). The maps are built once, at compile time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aic::cpu::kernels {

struct PadPlan {
  std::vector<int64_t> in_dims, out_dims;
  std::vector<std::vector<int64_t>> maps;  // per axis, out index -> in index or -1
  float value = 0;
};

// pads: begins then ends (2 * rank). Nullopt for a mode this kernel lacks or
// a reflect over an axis too short for it.
std::optional<PadPlan> MakePadPlan(const std::vector<int64_t>& in_dims, const std::vector<int64_t>& pads,
                                   const std::string& mode, float value);

void PadF32(const PadPlan& plan, const float* x, float* y);

}  // namespace aic::cpu::kernels
