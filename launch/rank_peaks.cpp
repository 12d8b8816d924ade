#include "launch/rank_peaks.h"

#include <algorithm>
#include <vector>

namespace llmft {

RankPeak worst_rank_peak(Communicator* world, Backend& backend, const Allocator& allocator) {
  RankPeak mine{world ? world->rank() : 0, allocator.total_peak(), allocator.at_total_peak()};
  if (!world) return mine;
  // Each rank's peak and breakdown as 64-bit counts, moved bit for bit as i32 pairs (a
  // gather does no arithmetic), through buffers outside the run's allocator and peaks.
  constexpr int kValues = 1 + kMemoryCategoryCount;
  std::vector<uint64_t> values = {mine.total};
  values.insert(values.end(), mine.at_peak.begin(), mine.at_peak.end());
  Allocator scratch(backend.memory(), 0);
  const int ranks = world->size();
  Buffer send_buf = scratch.allocate(kValues * 8, MemoryCategory::comm_buffers, "peak");
  Buffer recv_buf = scratch.allocate(kValues * 8 * ranks, MemoryCategory::comm_buffers, "peaks");
  Tensor send = send_buf.as(DType::i32, {2 * kValues});
  Tensor recv = recv_buf.as(DType::i32, {2 * kValues * ranks});
  backend.copy_to_device(send, values.data());
  world->all_gather(send, recv)->wait();
  std::vector<uint64_t> all(static_cast<size_t>(kValues) * ranks);
  backend.copy_to_host(all.data(), recv);
  RankPeak worst;
  for (int r = 0; r < ranks; ++r) {
    const uint64_t* v = all.data() + r * kValues;
    if (r > 0 && v[0] <= worst.total) continue;
    worst.rank = r;
    worst.total = v[0];
    std::copy(v + 1, v + kValues, worst.at_peak.begin());
  }
  return worst;
}

}  // namespace llmft
