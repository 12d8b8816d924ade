// DryRun: one rank of a layout run on nothing — the real Model and Engine for a RunShape on
// the counting device (core/counting/counting_backend.h: kernels that do nothing but tally
// their work, addresses without memory) with counting communicators for the rank's groups
// (comm/counting_communicator.h), and, when the optimizer is offloaded, a second counting
// device for the host pool with an allocator of its own. The memory model (parallel/memory_model.h)
// reads what a step allocated; the time model (parallel/planner/step_work.h) reads what its kernels
// did.
#pragma once

#include <memory>

#include "comm/counting_communicator.h"
#include "core/allocator.h"
#include "core/counting/counting_backend.h"
#include "core/model_config.h"
#include "core/model_factory.h"
#include "parallel/engine.h"
#include "parallel/memory_model.h"

namespace llmft {

class DryRun {
 public:
  DryRun(const ModelConfig& config, const RunShape& shape);
  DryRun(const DryRun&) = delete;
  DryRun& operator=(const DryRun&) = delete;

  // Step `step` over `micro_batches` micro-batches of the shape (every position a target;
  // the tokens are never read).
  void train_step(int step, int micro_batches);

  const Allocator& allocator() const { return allocator_; }
  // The host pool's allocator when the shape offloads the optimizer, else null.
  const Allocator* host_allocator() const { return host_allocator_.get(); }
  const Engine& engine() const { return *engine_; }
  const WorkTally& tally() const { return device_.tally(); }
  // What the host pool's kernels did (an offloaded optimizer; empty otherwise).
  const WorkTally& host_tally() const { return host_.tally(); }
  TpSlice slice() const { return slice_; }

 private:
  RunShape shape_;
  TpSlice slice_;
  CountingBackend device_;
  Allocator allocator_;
  CountingBackend host_;  // the offloaded optimizer's kernels
  std::unique_ptr<Allocator> host_allocator_;
  std::unique_ptr<CountingCommunicator> data_parallel_, tensor_parallel_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Engine> engine_;
};

}  // namespace llmft
