#include "launch/rank_peaks.h"

#include <algorithm>
#include <vector>

#include "launch/rank_values.h"

namespace llmft {

RankPeak worst_rank_peak(Communicator* world, Backend& backend, const Allocator& allocator) {
  RankPeak mine{world ? world->rank() : 0, allocator.total_peak(), allocator.at_total_peak(),
                allocator.total_peak() + backend.memory_outside_allocator()};
  if (!world) return mine;
  constexpr int kValues = 2 + kMemoryCategoryCount;
  std::vector<uint64_t> values = {mine.total, mine.device_total};
  values.insert(values.end(), mine.at_peak.begin(), mine.at_peak.end());
  const std::vector<uint64_t> all = gather_rank_values(world, backend, values);
  RankPeak worst;
  for (int r = 0; r < world->size(); ++r) {
    const uint64_t* v = all.data() + r * kValues;
    worst.device_total = std::max<size_t>(worst.device_total, v[1]);
    if (r > 0 && v[0] <= worst.total) continue;
    worst.rank = r;
    worst.total = v[0];
    std::copy(v + 2, v + kValues, worst.at_peak.begin());
  }
  return worst;
}

}  // namespace llmft
