#include "parallel/working_copies.h"

#include "core/error.h"

namespace llmft {

WorkingCopies::WorkingCopies(Backend& backend, Allocator& allocator, const UnitTensors& stored,
                             bool transient_grads)
    : be_(backend),
      alloc_(allocator),
      stored_(stored),
      copy_params_(stored.params[0].dtype != DType::f32),
      own_grads_(transient_grads || (copy_params_ && !stored.grads.empty())),
      transient_grads_(transient_grads) {
  const size_t units = stored.params.size();
  view_.params = copy_params_ ? std::vector<Tensor>(units) : stored.params;
  view_.grads = own_grads_ ? std::vector<Tensor>(units) : stored.grads;
  params_.resize(units);
  grads_.resize(units);
}

void WorkingCopies::acquire_params(const std::vector<int>& units) {
  if (!copy_params_) return;
  for (int u : units) {
    const int64_t n = stored_.params[u].numel();
    params_[u] = alloc_.allocate(static_cast<size_t>(n) * sizeof(float), MemoryCategory::workspace,
                                 "f32 working weights");
    view_.params[u] = params_[u].as(DType::f32, {n});
    be_.convert(view_.params[u], stored_.params[u]);
  }
}

void WorkingCopies::release_params(const std::vector<int>& units) {
  if (!copy_params_) return;
  for (int u : units) {
    params_[u].reset();
    view_.params[u] = Tensor();
  }
}

void WorkingCopies::acquire_grads(const std::vector<int>& units) {
  if (!own_grads_) return;
  const MemoryCategory category =
      transient_grads_ ? MemoryCategory::grads : MemoryCategory::workspace;
  for (int u : units) {
    if (!grads_[u].empty()) continue;
    const int64_t n = stored_.params[u].numel();
    grads_[u] = alloc_.allocate(static_cast<size_t>(n) * sizeof(float), category,
                                transient_grads_ ? "gradient" : "f32 working gradient");
    view_.grads[u] = grads_[u].as(DType::f32, {n});
    be_.fill(view_.grads[u], 0.0f);
  }
}

void WorkingCopies::flush_grads(int unit) {
  if (!own_grads_) return;
  LLMFT_REQUIRE(!transient_grads_, "internal: flush_grads in transient mode");
  be_.add_inplace(stored_.grads[unit], view_.grads[unit]);
  release_grads(unit);
}

void WorkingCopies::release_grads(int unit) {
  grads_[unit].reset();
  if (own_grads_) view_.grads[unit] = Tensor();
}

}  // namespace llmft
