#include "launch/rank_values.h"

#include "core/allocator.h"

namespace llmft {

std::vector<uint64_t> gather_rank_values(Communicator* world, Backend& backend,
                                         const std::vector<uint64_t>& mine) {
  if (!world) return mine;
  // 64-bit counts move as i32 pairs: a gather does no arithmetic.
  const int64_t count = static_cast<int64_t>(mine.size());
  Allocator scratch(backend.memory(), 0);
  Buffer send_buf = scratch.allocate(count * 8, MemoryCategory::comm_buffers, "rank values");
  Buffer recv_buf =
      scratch.allocate(count * 8 * world->size(), MemoryCategory::comm_buffers, "all values");
  Tensor send = send_buf.as(DType::i32, {2 * count});
  Tensor recv = recv_buf.as(DType::i32, {2 * count * world->size()});
  backend.copy_to_device(send, mine.data());
  world->all_gather(send, recv)->wait();
  std::vector<uint64_t> all(mine.size() * world->size());
  backend.copy_to_host(all.data(), recv);
  return all;
}

}  // namespace llmft
