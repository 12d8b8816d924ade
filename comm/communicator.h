// Communicator: collectives over a group of ranks (the world, a data-parallel group, a
// tensor-parallel group), on device tensors (host memory on CPU, device memory with
// NCCL). Every collective is non-blocking: it returns a CommRequest to wait on, so
// communication can overlap compute; the blocking form is start-then-wait.
//
// A wait polls for completion. It gives up with an llmft::Error naming the collective and
// the context (e.g. "step 12") after the timeout, and it fails at once, naming the rank,
// when another rank has reported a failure (report_failure), so that no rank waits
// forever for a peer that died.
//
// Per-collective counters (calls and bytes this rank sent into each collective) are
// readable for tests and metrics.
//
// Thread-safety: one thread per Communicator.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "core/reduce_group.h"
#include "core/tensor.h"

namespace llmft {

enum class Collective { all_reduce, reduce_scatter, all_gather, broadcast };
constexpr int kCollectiveCount = 4;
const char* collective_name(Collective c);

struct CollectiveCounter {
  int64_t calls = 0;
  int64_t bytes = 0;  // payload bytes of this rank's input buffer
};
using CommCounters = std::array<CollectiveCounter, kCollectiveCount>;

// rank(), size(), all_reduce(), reduce_scatter() and all_gather() come from ReduceGroup;
// a CommRequest's wait() follows the timeout and failure rules above.
class Communicator : public ReduceGroup {
 public:
  virtual std::unique_ptr<CommRequest> broadcast(Tensor data, int root) = 0;
  virtual void barrier() = 0;

  // A new communicator of the ranks that pass the same color, ordered by key (as
  // MPI_Comm_split). Collective over this communicator's ranks.
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  // What a timed-out or failed wait names as the place, e.g. "step 12".
  virtual void set_context(const std::string& context) = 0;
  // Whether a started collective progresses while the host queues more work (NCCL, on its
  // own stream), so that holding a request open while compute is queued overlaps the two.
  // MPI without a progress thread moves only inside MPI calls. Optional: false.
  virtual bool overlaps_compute() const { return false; }
  // Runs every collective once, at the sizes that choose each of its algorithms, on scratch
  // of its own, and resets the counters: a communicator that sets up its buffers at first
  // use (NCCL) then holds them before the device's memory is reserved (core/backend.h).
  // Collective over the group. Optional: nothing to set up.
  virtual void warm_up(DType dtype) { (void)dtype; }
  virtual const CommCounters& counters() const = 0;
  virtual void reset_counters() = 0;
};

}  // namespace llmft
