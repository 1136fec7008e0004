// The misc op family: ops that belong to no larger family (losses,
// quantization, signal processing, detection, text, random, training). Each
// concept lives in its own file; this one only gathers their registrations.
#include "ops/misc/misc_ops.h"

namespace aic {

void RegisterMiscOps(OpRegistry& r) {
  RegisterLossOps(r);
  RegisterQuantizeOps(r);
  RegisterDetectionOps(r);
  RegisterSignalOps(r);
  RegisterLinalgOps(r);
  RegisterGridSampleOps(r);
  RegisterTrainingOps(r);
  RegisterTextOps(r);
  RegisterStringOps(r);
  RegisterRandomOps(r);
  RegisterCol2ImOps(r);
  RegisterGradientOps(r);
  RegisterImageDecoderOps(r);
}

}  // namespace aic
