// Reorders between layouts as our own strided copy where it can: plain NCHW
// to or from channels-last (NHWC) or a channel-blocked layout (nChw16c,
// nChw8c, nCdhw16c, ...) is a transpose of the buffer read as a dense tensor
// ([N, H, W, C], [N, C/b, H, W, b]), and kernels/strided_copy.h runs it in
// register tiles. oneDNN 2.6's reorder took 0.56 ms to bring a 1x1
// convolution's [1,1024,14,14] output (800 KB) from NHWC to NCHW, 0.09 ms
// this way.
#pragma once

#include <optional>
#include <string>

#include "exec/cpu/internal.h"
#include "exec/cpu/kernels/strided_copy.h"

namespace aic::cpu {

// The copy from `from` to `to` (same dims and data type) as a strided copy
// in `to`'s memory order: `to` dense, neither padded, each with at most one
// inner block, a dim blocked in both with the same block. nullopt otherwise.
std::optional<kernels::StridedCopyPlan> LayoutCopyPlan(const memory::desc& from, const memory::desc& to);

// Appends a step copying slot `from` (laid out as from_md) into slot `to`
// (to_md), kind "reorder": LayoutCopyPlan's copy where there is one, else a
// oneDNN reorder.
void AddReorderStep(Plan& plan, int from, const memory::desc& from_md, int to, const memory::desc& to_md,
                    const std::string& label);

}  // namespace aic::cpu
