#include "io/nearest_name.h"

#include <algorithm>

namespace llmft::io {
namespace {

constexpr size_t kMaxEdits = 2;

// The optimal string alignment distance: Levenshtein's, plus the swap of two adjacent
// characters as one edit.
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitution = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

}  // namespace

std::optional<std::string> nearest_name(std::string_view name,
                                        const std::vector<std::string_view>& candidates) {
  std::optional<std::string> nearest;
  size_t best = std::min(kMaxEdits, name.size() / 3) + 1;
  for (std::string_view candidate : candidates) {
    // Lengths further apart than the best so far cannot come closer.
    const size_t gap = name.size() > candidate.size() ? name.size() - candidate.size()
                                                      : candidate.size() - name.size();
    if (gap >= best) continue;
    const size_t distance = edit_distance(name, candidate);
    if (distance < best) {
      best = distance;
      nearest = std::string(candidate);
    }
  }
  return nearest;
}

}  // namespace llmft::io
