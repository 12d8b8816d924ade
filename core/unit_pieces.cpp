#include "core/unit_pieces.h"

#include <algorithm>

namespace llmft {

std::vector<TensorPiece> unit_pieces(const UnitLayout& layout, TpSlice slice, UnitSpan range,
                                     bool owner_only) {
  std::vector<TensorPiece> pieces;
  for (size_t i = 0; i < layout.params.size(); ++i) {
    const ParamInfo& p = layout.params[i];
    if (owner_only && !tp_counts(p, slice)) continue;
    for (const TpRun& run : tp_runs(p, slice)) {
      // The run's elements as unit offsets, clipped to the held range.
      const int64_t begin = std::max(range.begin, p.offset + run.local);
      const int64_t end = std::min(range.end, p.offset + run.local + run.count);
      if (begin >= end) continue;
      const int64_t skip = begin - (p.offset + run.local);
      pieces.push_back({static_cast<int>(i), run.full + skip, begin - range.begin, end - begin});
    }
  }
  return pieces;
}

}  // namespace llmft
