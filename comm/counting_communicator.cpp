#include "comm/counting_communicator.h"

#include "core/error.h"

namespace llmft {
namespace {

class Completed : public CommRequest {
 public:
  void wait() override {}
};

}  // namespace

CountingCommunicator::CountingCommunicator(int rank, int size, bool overlaps)
    : rank_(rank), size_(size), overlaps_(overlaps) {
  LLMFT_REQUIRE(size > 0 && rank >= 0 && rank < size,
                "internal: rank " << rank << " of a counting group of " << size);
}

std::unique_ptr<CommRequest> CountingCommunicator::counted(Collective collective, size_t bytes) {
  CollectiveCounter& counter = counters_[static_cast<int>(collective)];
  counter.calls += 1;
  counter.bytes += static_cast<int64_t>(bytes);
  return std::make_unique<Completed>();
}

std::unique_ptr<CommRequest> CountingCommunicator::all_reduce(Tensor data, ReduceOp) {
  return counted(Collective::all_reduce, data.bytes());
}

std::unique_ptr<CommRequest> CountingCommunicator::reduce_scatter(Tensor send, Tensor) {
  return counted(Collective::reduce_scatter, send.bytes());
}

std::unique_ptr<CommRequest> CountingCommunicator::all_gather(Tensor send, Tensor) {
  return counted(Collective::all_gather, send.bytes());
}

std::unique_ptr<CommRequest> CountingCommunicator::broadcast(Tensor data, int) {
  return counted(Collective::broadcast, data.bytes());
}

std::unique_ptr<Communicator> CountingCommunicator::split(int, int) {
  LLMFT_FAIL("internal: a counting communicator cannot be split; make one per group");
}

}  // namespace llmft
