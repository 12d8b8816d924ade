#include "parallel/tp_gather.h"

namespace llmft {

std::vector<float> gather_tp_unit(Communicator* group, Backend& backend, Allocator& allocator,
                                  const UnitLayout& whole, const UnitLayout& local,
                                  const std::vector<float>& mine) {
  if (!group) return whole_from_slice(whole, local, mine);
  // Every rank's slice of a unit has the same length (the vocabulary is padded).
  const int64_t n = local.numel, ranks = group->size();
  Buffer send_buf = allocator.allocate(static_cast<size_t>(n) * sizeof(float),
                                       MemoryCategory::comm_buffers, "slice to gather");
  Buffer recv_buf = allocator.allocate(static_cast<size_t>(n * ranks) * sizeof(float),
                                       MemoryCategory::comm_buffers, "gathered slices");
  Tensor send = send_buf.as(DType::f32, {n}), recv = recv_buf.as(DType::f32, {n * ranks});
  backend.copy_to_device(send, mine.data());
  group->all_gather(send, recv)->wait();
  std::vector<float> slices(static_cast<size_t>(n * ranks));
  backend.copy_to_host(slices.data(), recv);
  std::vector<float> values(static_cast<size_t>(whole.numel), 0.0f);
  for (int r = 0; r < ranks; ++r) {
    place_slice(whole, local, TpSlice{r, static_cast<int>(ranks)}, slices.data() + r * n, values);
  }
  return values;
}

}  // namespace llmft
