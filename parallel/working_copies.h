// WorkingCopies: the full-unit tensors a unit's forward and backward compute with, in the
// backend's compute dtype (core/compute_dtype.h: f32 on the CPU, the stored dtype on GPUs).
//
// Weights: with ZeRO-3 a rank stores only its shard of each unit, and each unit is
// all-gathered (comm_buffers) before it runs: prefetch_params starts the gather of the
// next unit while the current one computes, and acquire_params waits for it (or gathers
// at once). When the compute dtype is not the stored one (bf16/fp16 on the CPU) the unit
// is then converted to a working copy (workspace) and the stored-dtype one dropped;
// otherwise weights are used as they are. release_params frees what acquire made.
// Gradients, in one of two modes:
//  - stored (sgd/adamw without gradient sharding): each unit's gradient lives in a
//    stored buffer (in the stored dtype, or f32 with --grad-accum-dtype fp32); backward
//    accumulates into it directly when it is in the compute dtype or f32 (every backend
//    writes weight gradients into f32, core/backend.h: an f32 sum of bf16/fp16 weights'
//    gradients over micro-batches and tied uses, each product added in f32); otherwise (a
//    bf16/fp16 buffer, f32 compute: the CPU) the unit accumulates into a working buffer
//    (workspace) added once per micro-batch into the stored gradient by flush_grads;
//  - transient (LOMO, AdaLomo, and ZeRO-2/3): acquire_grads gives a unit a zeroed
//    gradient in the compute dtype of the unit's padded length (grads category), which
//    the Engine reduces and uses, then release_grads frees.
//
// Thread-safety: one per Engine, used from one thread.
#pragma once

#include <vector>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/backend.h"
#include "core/model.h"
#include "parallel/shard.h"

namespace llmft {

class WorkingCopies {
 public:
  // `stored` holds whole units (or, with `gather_group`, this rank's shards) and, in
  // stored mode, their gradients. `stored` and `shards` must outlive this object.
  WorkingCopies(Backend& backend, Allocator& allocator, const UnitTensors& stored,
                const std::vector<ShardLayout>& shards, bool transient_grads,
                Communicator* gather_group);

  // What model code receives: views of whole units, valid for acquired units.
  const UnitTensors& view() const { return view_; }
  // The padded gradient of a unit in transient mode (view().grads is its prefix).
  Tensor padded_grad(int unit) const;
  void acquire_params(const std::vector<int>& units);
  // ZeRO-3: starts gathering these units (no-op otherwise, or if already started).
  void prefetch_params(const std::vector<int>& units);
  void release_params(const std::vector<int>& units);
  // Gives each unit a zeroed gradient buffer, unless it already has one.
  void acquire_grads(const std::vector<int>& units);
  // Stored mode: stored gradient += working gradient, then releases the working one.
  void flush_grads(int unit);
  // Transient mode: frees the unit's gradient.
  void release_grads(int unit);

 private:
  Backend& be_;
  Allocator& alloc_;
  const UnitTensors& stored_;
  const std::vector<ShardLayout>& shards_;
  Communicator* gather_group_;
  DType dtype_;    // stored
  DType compute_;  // what the backend's kernels read and write (core/compute_dtype.h)
  bool convert_params_, own_grads_, transient_grads_;
  UnitTensors view_;
  std::vector<Buffer> params_, grads_, gathering_;
  std::vector<std::unique_ptr<CommRequest>> gathers_;  // in flight, per unit
};

}  // namespace llmft
