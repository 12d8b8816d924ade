// MpiCommunicator: the Communicator over an MPI communicator, on host memory (the CPU
// backend's tensors). Sums (all_reduce with ReduceOp::sum, reduce_scatter) are
// OrderedSums (comm/ordered_sum.h): added in rank order, so their results do not depend
// on the MPI library or its algorithms, and bit for bit the same on every rank. The other
// collectives are MPI's non-blocking ones (MPI_Iallreduce with MPI_MAX, MPI_Iallgather,
// MPI_Ibcast) on the tensors' own memory, one MPI element per tensor element
// (comm/mpi_reduce_ops.h).
// Requests wait as MpiRequest does: they fail after the timeout, or when another rank
// reports a failure. barrier() waits the same way, on MPI_Ibarrier.
// Thread-safety: one thread per MpiCommunicator, and that thread calls MPI
// (MPI_THREAD_FUNNELED).
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "comm/communicator.h"
#include "comm/ordered_sum.h"

namespace llmft {

constexpr double kDefaultCommTimeoutSeconds = 300;

class MpiCommunicator : public Communicator {
 public:
  // Over `comm`, which it owns (MPI_Comm_free in the destructor) unless it is
  // MPI_COMM_WORLD. Collective over comm's ranks (it duplicates comm for the sums).
  // Requests may not outlive the communicator.
  // REQUIRES: MPI is initialised; timeout_seconds > 0
  explicit MpiCommunicator(MPI_Comm comm, double timeout_seconds = kDefaultCommTimeoutSeconds);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::unique_ptr<CommRequest> all_reduce(Tensor data, ReduceOp op) override;
  std::unique_ptr<CommRequest> reduce_scatter(Tensor send, Tensor recv) override;
  std::unique_ptr<CommRequest> all_gather(Tensor send, Tensor recv) override;
  // Counts data's bytes on every rank, the root's and the receivers'.
  std::unique_ptr<CommRequest> broadcast(Tensor data, int root) override;
  void barrier() override;

  // The new communicator inherits the timeout and the context. REQUIRES: color >= 0
  std::unique_ptr<Communicator> split(int color, int key) override;

  void set_context(const std::string& context) override { context_ = context; }
  const CommCounters& counters() const override { return counters_; }
  void reset_counters() override { counters_ = {}; }

  // How long one wait may last before it fails; applies to collectives started later.
  // REQUIRES: seconds > 0
  void set_timeout_seconds(double seconds);
  double timeout_seconds() const { return timeout_seconds_; }

 private:
  void record_call(Collective collective, size_t bytes);
  // Counts the call and returns the request that waits for it.
  std::unique_ptr<CommRequest> started(Collective collective, size_t bytes, MPI_Request request);
  // "<name> (<context>)", or the bare name while no context is set.
  std::string describe(const char* name) const;

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  double timeout_seconds_;
  std::string context_;
  CommCounters counters_;
  MPI_Comm gather_comm_;               // a duplicate of comm_ for the sums' all-gathers
  std::unique_ptr<OrderedSums> sums_;  // sums in flight (all_reduce, reduce_scatter)
};

}  // namespace llmft
