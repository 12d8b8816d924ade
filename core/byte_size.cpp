#include "core/byte_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace llmft {

namespace {

double unit_multiplier(std::string unit, const std::string& text, const std::string& what) {
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.empty() || unit == "b") return 1.0;
  if (unit == "kb" || unit == "k") return 1e3;
  if (unit == "mb" || unit == "m") return 1e6;
  if (unit == "gb" || unit == "g") return 1e9;
  if (unit == "tb" || unit == "t") return 1e12;
  if (unit == "kib") return 1024.0;
  if (unit == "mib") return 1024.0 * 1024;
  if (unit == "gib") return 1024.0 * 1024 * 1024;
  if (unit == "tib") return 1024.0 * 1024 * 1024 * 1024;
  LLMFT_FAIL(what << ": unknown size unit in '" << text
                  << "': use e.g. 2GiB, 512MiB, 1.5GB or a plain number of bytes");
}

}  // namespace

size_t parse_byte_size(const std::string& text, const std::string& what) {
  const char* begin = text.c_str();
  char* end = nullptr;
  double value = std::strtod(begin, &end);
  LLMFT_REQUIRE(end != begin && std::isfinite(value) && value >= 0,
                what << ": '" << text << "' is not a size: use e.g. 2GiB, 512MiB or 1.5GB");
  std::string unit(end);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.erase(0, 1);
  double bytes = value * unit_multiplier(unit, text, what);
  return static_cast<size_t>(std::llround(bytes));
}

std::string format_bytes(double bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int unit = 0;
  double value = bytes;
  while (std::fabs(value) >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  char out[64];
  if (unit == 0) {
    std::snprintf(out, sizeof(out), "%.0f B", value);
  } else {
    std::snprintf(out, sizeof(out), "%.2f %s", value, kUnits[unit]);
  }
  return out;
}

}  // namespace llmft
