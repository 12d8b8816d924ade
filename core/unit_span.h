// UnitSpan: a part [begin, end) of a unit's flat elements: what a rank updates (the whole
// unit without ZeRO, its shard with ZeRO; optimizer state covers only that) or holds.
#pragma once

#include <algorithm>
#include <cstdint>

#include "core/unit_layout.h"

namespace llmft {

struct UnitSpan {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

inline UnitSpan whole(const UnitLayout& layout) {
  return UnitSpan{0, layout.numel};
}

// Calls f(param_index, offset_in_span, count) for each parameter of `layout` overlapping
// `span`, with the overlap's first element relative to span.begin.
template <typename F>
void for_each_param_piece(const UnitLayout& layout, UnitSpan span, F&& f) {
  for (int i = 0; i < static_cast<int>(layout.params.size()); ++i) {
    const ParamInfo& p = layout.params[i];
    const int64_t lo = std::max(span.begin, p.offset);
    const int64_t hi = std::min(span.end, p.offset + p.numel());
    if (lo < hi) f(i, lo - span.begin, hi - lo);
  }
}

}  // namespace llmft
