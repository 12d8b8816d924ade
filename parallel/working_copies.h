// WorkingCopies: the f32 tensors a unit's forward and backward compute with when the
// weights and gradients are stored in bf16 or fp16. Before a unit runs, its stored
// weights are converted to an f32 copy (workspace); its gradient is accumulated in an
// f32 buffer (workspace) and added once into the stored gradient when the unit's
// gradient is complete. With f32 storage the stored tensors are used directly and
// nothing is copied.
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
  // stored.grads may be empty (inference). The tensors must outlive this object.
  WorkingCopies(Backend& backend, Allocator& allocator, const UnitTensors& stored);

  // What model code receives: f32 views, valid for acquired units.
  const UnitTensors& view() const { return view_; }
  void acquire_params(const std::vector<int>& units);
  void release_params(const std::vector<int>& units);
  // Gives each unit a zeroed f32 gradient buffer, unless it already has one.
  void acquire_grads(const std::vector<int>& units);
  // stored gradient += working gradient, then releases the working one.
  void flush_grads(int unit);

 private:
  Backend& be_;
  Allocator& alloc_;
  const UnitTensors& stored_;
  bool passthrough_;
  UnitTensors view_;
  std::vector<Buffer> params_, grads_;
};

}  // namespace llmft
