#include "cli/version.h"

#include "aic_version.h"  // generated at build time (cmake/version.cmake)

namespace aic::cli {

std::string VersionString() { return std::string(AIC_VERSION) + " (git " + AIC_GIT_DESCRIBE + ")"; }

}  // namespace aic::cli
