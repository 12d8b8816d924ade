// WorkingCopies: the f32 tensors a unit's forward and backward compute with.
//
// Weights: when they are stored in bf16 or fp16, a unit's stored weights are converted
// to an f32 copy (workspace) before it runs and dropped after; f32 weights are used as
// they are.
// Gradients, in one of two modes:
//  - accumulate (non-fused optimizers): each unit's gradient lives in a stored buffer;
//    with bf16/fp16 storage the unit accumulates into an f32 buffer (workspace) that is
//    added once into the stored gradient by flush_grads; with f32 storage the stored
//    buffer is used directly;
//  - transient (LOMO, AdaLomo): there is no stored gradient; acquire_grads gives a unit a
//    zeroed f32 gradient (grads category) that release_grads frees after its update.
//
// Thread-safety: one per Engine, used from one thread.
#pragma once

#include <vector>

#include "core/allocator.h"
#include "core/backend.h"
#include "core/model.h"

namespace llmft {

class WorkingCopies {
 public:
  // stored.grads is empty in transient mode and for inference. `stored` must outlive
  // this object.
  WorkingCopies(Backend& backend, Allocator& allocator, const UnitTensors& stored,
                bool transient_grads);

  // What model code receives: f32 views, valid for acquired units.
  const UnitTensors& view() const { return view_; }
  void acquire_params(const std::vector<int>& units);
  void release_params(const std::vector<int>& units);
  // Gives each unit a zeroed f32 gradient buffer, unless it already has one.
  void acquire_grads(const std::vector<int>& units);
  // Accumulate mode: stored gradient += working gradient, then releases the working one.
  void flush_grads(int unit);
  // Transient mode: frees the unit's gradient.
  void release_grads(int unit);

 private:
  Backend& be_;
  Allocator& alloc_;
  const UnitTensors& stored_;
  bool copy_params_, own_grads_, transient_grads_;
  UnitTensors view_;
  std::vector<Buffer> params_, grads_;
};

}  // namespace llmft
