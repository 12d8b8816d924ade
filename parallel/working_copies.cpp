#include "parallel/working_copies.h"

namespace llmft {

WorkingCopies::WorkingCopies(Backend& backend, Allocator& allocator, const UnitTensors& stored)
    : be_(backend),
      alloc_(allocator),
      stored_(stored),
      passthrough_(stored.params.empty() || stored.params[0].dtype == DType::f32) {
  if (passthrough_) {
    view_ = stored;
    return;
  }
  view_.params.resize(stored.params.size());
  view_.grads.resize(stored.grads.size());
  params_.resize(stored.params.size());
  grads_.resize(stored.grads.size());
}

void WorkingCopies::acquire_params(const std::vector<int>& units) {
  if (passthrough_) return;
  for (int u : units) {
    const int64_t n = stored_.params[u].numel();
    params_[u] = alloc_.allocate(static_cast<size_t>(n) * sizeof(float), MemoryCategory::workspace,
                                 "f32 working weights");
    view_.params[u] = params_[u].as(DType::f32, {n});
    be_.convert(view_.params[u], stored_.params[u]);
  }
}

void WorkingCopies::release_params(const std::vector<int>& units) {
  if (passthrough_) return;
  for (int u : units) {
    params_[u].reset();
    view_.params[u] = Tensor();
  }
}

void WorkingCopies::acquire_grads(const std::vector<int>& units) {
  if (passthrough_) return;
  for (int u : units) {
    if (!grads_[u].empty()) continue;
    const int64_t n = stored_.grads[u].numel();
    grads_[u] = alloc_.allocate(static_cast<size_t>(n) * sizeof(float), MemoryCategory::workspace,
                                "f32 working gradient");
    view_.grads[u] = grads_[u].as(DType::f32, {n});
    be_.fill(view_.grads[u], 0.0f);
  }
}

void WorkingCopies::flush_grads(int unit) {
  if (passthrough_) return;
  be_.add_inplace(stored_.grads[unit], view_.grads[unit]);
  grads_[unit].reset();
  view_.grads[unit] = Tensor();
}

}  // namespace llmft
