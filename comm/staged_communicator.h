// StagedCommunicator: collectives on device memory through a communicator that works on
// host memory (MPI). Each collective copies its input from the device to host buffers
// (after the work queued before it: the backend's copy waits for it), starts the wrapped
// communicator's collective on them, and its wait() copies the result back to the device.
// It is how ranks that share one GPU communicate (NCCL refuses two ranks on one device)
// and how a build without NCCL runs on GPUs; on the CPU backend it is a copy around the
// same collective, which is how tests check it. Results are the wrapped communicator's,
// bit for bit. Buffers are pageable host memory, held by each request until its wait.
// Thread-safety: as the wrapped communicator.
#pragma once

#include <memory>
#include <string>

#include "comm/communicator.h"
#include "core/backend.h"

namespace llmft {

class StagedCommunicator : public Communicator {
 public:
  // `backend` owns the memory of every tensor passed in and outlives this communicator.
  StagedCommunicator(std::unique_ptr<Communicator> host, Backend& backend);

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  std::unique_ptr<CommRequest> all_reduce(Tensor data, ReduceOp op) override;
  std::unique_ptr<CommRequest> reduce_scatter(Tensor send, Tensor recv) override;
  std::unique_ptr<CommRequest> all_gather(Tensor send, Tensor recv) override;
  std::unique_ptr<CommRequest> broadcast(Tensor data, int root) override;
  void barrier() override { host_->barrier(); }
  std::unique_ptr<Communicator> split(int color, int key) override;
  void set_context(const std::string& context) override { host_->set_context(context); }
  const CommCounters& counters() const override { return host_->counters(); }
  void reset_counters() override { host_->reset_counters(); }

 private:
  std::unique_ptr<Communicator> host_;
  Backend& backend_;
};

}  // namespace llmft
