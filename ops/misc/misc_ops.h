// The misc family's concept files (loss.cc, quantize.cc, signal.cc, ...) each
// register their ops through one function declared here; RegisterMiscOps
// (misc.cc) calls them all.
#pragma once

#include "ops/registry.h"

namespace aic {

void RegisterLossOps(OpRegistry& r);
void RegisterQuantizeOps(OpRegistry& r);
void RegisterDetectionOps(OpRegistry& r);
void RegisterSignalOps(OpRegistry& r);
void RegisterLinalgOps(OpRegistry& r);
void RegisterGridSampleOps(OpRegistry& r);
void RegisterTrainingOps(OpRegistry& r);
void RegisterTextOps(OpRegistry& r);
void RegisterStringOps(OpRegistry& r);  // string_ops.cc: StringConcat, StringSplit, RegexFullMatch
void RegisterRandomOps(OpRegistry& r);
void RegisterCol2ImOps(OpRegistry& r);
void RegisterGradientOps(OpRegistry& r);
void RegisterImageDecoderOps(OpRegistry& r);  // image_decoder.cc, codecs in image_codecs*.cc

}  // namespace aic
