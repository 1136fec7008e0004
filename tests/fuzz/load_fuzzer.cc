// libFuzzer target for the model loader: any bytes must give a model or an
// error, never a crash; a model that loads and verifies must survive a save
// and reload.
#include <cstddef>
#include <cstdint>

#include "graph/verify.h"
#include "onnx_io/load.h"
#include "onnx_io/save.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto model = aic::LoadModelFromBytes(data, size);
  if (!model.ok()) return 0;
  if (!aic::Verify(*(*model)->graph).ok()) return 0;
  auto bytes = aic::SerializeModel(**model);
  if (!bytes.ok()) return 0;
  auto again = aic::LoadModelFromBytes(bytes->data(), bytes->size());
  if (!again.ok()) __builtin_trap();  // what we wrote we must read back
  return 0;
}
