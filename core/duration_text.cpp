#include "core/duration_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace llmft {

std::string duration_text(double seconds) {
  const long long s = std::llround(std::max(seconds, 0.0));
  char text[32];
  if (s < 60) {
    std::snprintf(text, sizeof(text), "%llds", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof(text), "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof(text), "%lldh%02lldm", s / 3600, s % 3600 / 60);
  }
  return text;
}

}  // namespace llmft
