// ReduceGroup: what model code needs from communication — summing (or taking the maximum
// of) a tensor in place across a group of ranks, and (sequence parallelism) summing into
// each rank's block or gathering the blocks — so that tensor-parallel layers in core/ can
// communicate without core depending on comm/. comm's Communicator is one.
//
// A reduction is non-blocking: it returns a CommRequest to wait on, so a layer can start
// it as soon as its input is ready and compute something else meanwhile. A result that
// only later device work reads is waited for on the device (wait_on_device), which need
// not block the host; one the host reads (a scalar, a copy to host memory) with wait().
#pragma once

#include <memory>

#include "core/tensor.h"

namespace llmft {

enum class ReduceOp { sum, max };

class CommRequest {
 public:
  virtual ~CommRequest() = default;
  // Blocks until the collective completes.
  virtual void wait() = 0;
  // Makes work queued on the compute queue from now on run after the collective; returns
  // without blocking the host where the transport can (NCCL), and still fails within the
  // transport's timeout (comm/nccl_watchdog.h). Host-memory transports: the same as wait().
  virtual void wait_on_device() { wait(); }
};

class ReduceGroup {
 public:
  virtual ~ReduceGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place; data is f32, bf16 or fp16 (sum and max in f32 arithmetic per element).
  virtual std::unique_ptr<CommRequest> all_reduce(Tensor data, ReduceOp op) = 0;
  // Sum over ranks of send (size() * n elements), rank r receives block r (n elements).
  // REQUIRES: send.numel() == size() * recv.numel(), same dtype.
  virtual std::unique_ptr<CommRequest> reduce_scatter(Tensor send, Tensor recv) = 0;
  // recv (size() * n elements) = every rank's send (n elements), in rank order.
  virtual std::unique_ptr<CommRequest> all_gather(Tensor send, Tensor recv) = 0;
};

}  // namespace llmft
