#include "analysis/format.h"

#include <cmath>
#include <cstdio>

namespace aic::analysis {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  std::string s = buf;
  if (s == "-0" || s.rfind("-0.", 0) == 0) {
    // -0.00 reads as a sign error; rounding to zero drops the sign.
    bool all_zero = s.find_first_not_of("-0.") == std::string::npos;
    if (all_zero) s.erase(0, 1);
  }
  return s;
}

std::string Number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string Bytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " bytes";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 3) {
    v /= 1024;
    ++u;
  }
  return Fixed(v, 1) + " " + units[u] + " (" + std::to_string(bytes) + " bytes)";
}

std::string Short(int64_t v) {
  double a = std::fabs(static_cast<double>(v));
  if (a < 1e4) return std::to_string(v);
  if (a < 1e6) return Fixed(static_cast<double>(v) / 1e3, 1) + " k";
  if (a < 1e9) return Fixed(static_cast<double>(v) / 1e6, 2) + " M";
  return Fixed(static_cast<double>(v) / 1e9, 2) + " G";
}

}  // namespace aic::analysis
