// Number formatting shared by the report's candidate lines and renderers, so
// that text, Markdown and JSON agree digit for digit.
#pragma once

#include <cstdint>
#include <string>

namespace aic::analysis {

// Fixed-point with `digits` decimals: Fixed(0.5512, 2) == "0.55".
std::string Fixed(double v, int digits);
// Shortest round-trip-stable form for JSON, 6 significant digits: "0.551234".
std::string Number(double v);
// "1.5 MiB (1572864 bytes)"; small sizes: "160 bytes".
std::string Bytes(int64_t bytes);
// "1.23 M", "45.6 k" or the integer itself below 10^4: for candidate lines.
std::string Short(int64_t v);

}  // namespace aic::analysis
