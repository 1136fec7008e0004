// Registration entry points of the files that make up the tensor families;
// RegisterTensorOps and RegisterIndexingOps call them (registry.h declares
// only one function per family).
#pragma once

#include "ops/registry.h"

namespace aic {

void RegisterRearrangeOps(OpRegistry& r);  // rearrange.cc: DepthToSpace, SpaceToDepth, ReverseSequence
void RegisterPadOps(OpRegistry& r);        // pad.cc: Pad, CenterCropPad
void RegisterGeneratorOps(OpRegistry& r);  // generators.cc: Constant*, Range, EyeLike, OneHot, Trilu, CumSum, CumProd
void RegisterResizeOps(OpRegistry& r);     // resize.cc: Resize, Upsample
void RegisterScatterOps(OpRegistry& r);    // scatter.cc: Scatter, ScatterElements, ScatterND
void RegisterTensorScatterOps(OpRegistry& r);  // tensor_scatter.cc: TensorScatter (KV-cache update)
void RegisterSearchOps(OpRegistry& r);     // search.cc: TopK, ArgMax/ArgMin, NonZero, Unique

}  // namespace aic
