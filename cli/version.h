// What `aic-onnx --version` prints and `opt --stats` records.
#pragma once

#include <string>

namespace aic::cli {

std::string VersionString();  // "0.4.0 (git 6fe2c38a1b2c)"

}  // namespace aic::cli
