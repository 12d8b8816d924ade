// CountingCommunicator: rank `rank` of a group of `size` whose collectives move nothing
// and complete at once, while the counters count them as MpiCommunicator's would. With
// CountingBackend (core/counting/counting_backend.h) it lets the real Engine run one
// rank's step of a layout alone, to learn what it allocates (parallel/memory_model.h).
// Thread-safety: one thread.
#pragma once

#include <memory>
#include <string>

#include "comm/communicator.h"

namespace llmft {

class CountingCommunicator : public Communicator {
 public:
  // `overlaps`: answers overlaps_compute() as the communicator it stands for would.
  // REQUIRES: 0 <= rank < size
  CountingCommunicator(int rank, int size, bool overlaps = false);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<CommRequest> all_reduce(Tensor data, ReduceOp op) override;
  std::unique_ptr<CommRequest> reduce_scatter(Tensor send, Tensor recv) override;
  std::unique_ptr<CommRequest> all_gather(Tensor send, Tensor recv) override;
  std::unique_ptr<CommRequest> broadcast(Tensor data, int root) override;
  void barrier() override {}
  // A group of the ranks passing the same color cannot be known from one rank alone.
  std::unique_ptr<Communicator> split(int color, int key) override;
  void set_context(const std::string&) override {}
  const CommCounters& counters() const override { return counters_; }
  void reset_counters() override { counters_ = {}; }
  bool overlaps_compute() const override { return overlaps_; }

 private:
  std::unique_ptr<CommRequest> counted(Collective collective, size_t bytes);

  int rank_, size_;
  bool overlaps_;
  CommCounters counters_;
};

}  // namespace llmft
