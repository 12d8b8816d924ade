// OptimizerOffload: an accumulating optimizer (SGD, AdamW) kept in host memory, as in
// ZeRO-Offload (docs/ARCHITECTURE.md, "Optimizer offload"). The device keeps the stored-
// dtype weights and each unit's gradient only while its backward produces it; the host pool
// (the device's host_pool_memory(), pinned on CUDA, under an Allocator and budget of its
// own) keeps, over the span of each unit this rank updates, the f32 sum of the step's
// gradients, the f32 master weights and the optimizer's state, and the host backend's
// vectorised kernels update them there.
//
// The Engine hands over each unit's reduced gradient as each micro-batch completes it
// (receive: a copy queued on the device) and accepts it one unit later, once the device has
// been given the next unit's backward, so on a GPU the host adds (and, when nothing waits
// for the global norm, updates) while the device computes. update() queues the copy of
// the new master weights into the device's weights: f32 straight from the master; bf16/fp16
// rounded on the host into one of two staging buffers, which alternate so that one unit's
// copy overlaps the next unit's update.
//
// Thread-safety: one per Engine, used from its thread.
#pragma once

#include <memory>
#include <vector>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/unit_layout.h"
#include "core/unit_span.h"
#include "optim/optimizer.h"

namespace llmft {

// The host side of a run with --offload-optimizer: its kernels and its memory.
struct HostPool {
  Backend* kernels = nullptr;      // host kernels (the CPU backend; a counting one in dry runs)
  Allocator* allocator = nullptr;  // over the device's host_pool_memory(), its own budget
};

// Throws an Error saying why when `kind` has nothing to offload (LOMO, AdaLomo).
void check_offload(OptimizerKind kind);

class OptimizerOffload {
 public:
  // spans[u]: the part of unit u this rank updates; `stored`: the weights' dtype on the
  // device; `compute`: the dtype of the gradients the device hands over.
  OptimizerOffload(Backend& device, const HostPool& host, const OptimizerConfig& config,
                   const std::vector<UnitLayout>& units, const std::vector<UnitSpan>& spans,
                   DType stored, DType compute);

  void zero_grads();
  // Queues the copy of `reduced` (span-sized, on the device) to the host; the device buffer
  // may be released once this returns (the copy is queued compute work).
  void receive(int unit, const Tensor& reduced);
  // Adds every received gradient into its unit's host sum, in the order received; returns
  // the units accepted.
  std::vector<int> accept_received();
  // Starts optimizer step `update` (1-based, the bias corrections' step).
  void begin_step(int update) { optimizer_->begin_step(update); }
  // Updates the unit's masters and state from its gradient sum and queues the rounded
  // weights' copy into `device_weights` (the unit's span on the device).
  void update(int unit, float lr, float grad_scale, const Tensor& device_weights);

  Backend& kernels() { return host_; }
  // One real f32 scalar in the host pool (norms add into it).
  Tensor scalar() const { return scalar_.as(DType::f32, {1}); }
  Tensor grads(int unit) const { return grads_[unit].as(DType::f32, {spans_[unit].size()}); }
  Tensor master(int unit) const { return masters_[unit].as(DType::f32, {spans_[unit].size()}); }
  std::vector<OptimizerState> state(int unit) const { return optimizer_->state(unit); }

 private:
  struct Arrival {
    int unit = 0;
    Buffer staging;  // the gradient as the device computed it
    std::unique_ptr<Event> copied;
  };
  struct Staging {  // bf16/fp16 runs only
    Buffer buffer;  // stored-dtype weights on their way to the device
    std::unique_ptr<Event> copied;
  };

  Backend& device_;
  Backend& host_;
  Allocator& host_alloc_;
  const std::vector<UnitLayout>& units_;
  std::vector<UnitSpan> spans_;
  DType stored_, compute_;
  std::vector<Buffer> grads_, masters_;
  Buffer scalar_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<Arrival> arrivals_;
  Staging staging_[2];
  int next_staging_ = 0;
};

}  // namespace llmft
