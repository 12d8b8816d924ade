#include "parallel/working_copies.h"

#include "core/error.h"

namespace llmft {

WorkingCopies::WorkingCopies(Backend& backend, Allocator& allocator, const UnitTensors& stored,
                             const std::vector<ShardLayout>& shards, bool transient_grads,
                             Communicator* gather_group)
    : be_(backend),
      alloc_(allocator),
      stored_(stored),
      shards_(shards),
      gather_group_(gather_group),
      dtype_(stored.params[0].dtype),
      compute_(compute_dtype(backend.compute_rule(), dtype_)),
      convert_params_(dtype_ != compute_),
      own_grads_(transient_grads || (!stored.grads.empty() && stored.grads[0].dtype != compute_ &&
                                     stored.grads[0].dtype != DType::f32)),
      transient_grads_(transient_grads) {
  const size_t units = stored.params.size();
  const bool passthrough = !convert_params_ && gather_group_ == nullptr;
  view_.params = passthrough ? stored.params : std::vector<Tensor>(units);
  view_.grads = own_grads_ ? std::vector<Tensor>(units) : stored.grads;
  params_.resize(units);
  grads_.resize(units);
  gathering_.resize(units);
  gathers_.resize(units);
}

void WorkingCopies::prefetch_params(const std::vector<int>& units) {
  if (gather_group_ == nullptr) return;
  for (int u : units) {
    if (gathers_[u] || !params_[u].empty()) continue;
    const ShardLayout& s = shards_[u];
    gathering_[u] = alloc_.allocate(static_cast<size_t>(s.padded) * dtype_size(dtype_),
                                    MemoryCategory::comm_buffers, "gathered weights");
    gathers_[u] =
        gather_group_->all_gather(stored_.params[u], gathering_[u].as(dtype_, {s.padded}));
  }
}

Tensor WorkingCopies::padded_grad(int unit) const {
  return grads_[unit].as(compute_, {shards_[unit].padded});
}

void WorkingCopies::acquire_params(const std::vector<int>& units) {
  prefetch_params(units);
  for (int u : units) {
    const ShardLayout& s = shards_[u];
    Tensor whole = stored_.params[u];
    Buffer gathered;
    if (gather_group_ != nullptr) {
      gathers_[u]->wait_on_device();
      gathers_[u].reset();
      gathered = std::move(gathering_[u]);
      whole = gathered.as(dtype_, {s.padded}).view(0, {s.numel});
    }
    if (convert_params_) {
      params_[u] = alloc_.allocate(static_cast<size_t>(s.numel) * dtype_size(compute_),
                                   MemoryCategory::workspace, "working weights");
      view_.params[u] = params_[u].as(compute_, {s.numel});
      be_.convert(view_.params[u], whole);
    } else if (gather_group_ != nullptr) {
      params_[u] = std::move(gathered);
      view_.params[u] = whole;
    }
  }
}

void WorkingCopies::release_params(const std::vector<int>& units) {
  if (!convert_params_ && gather_group_ == nullptr) return;
  for (int u : units) {
    params_[u].reset();
    view_.params[u] = Tensor();
  }
}

void WorkingCopies::acquire_grads(const std::vector<int>& units) {
  if (!own_grads_) return;
  for (int u : units) {
    if (!grads_[u].empty()) continue;
    const ShardLayout& s = shards_[u];
    const int64_t n = transient_grads_ ? s.padded : s.numel;
    grads_[u] =
        alloc_.allocate(static_cast<size_t>(n) * dtype_size(compute_),
                        transient_grads_ ? MemoryCategory::grads : MemoryCategory::workspace,
                        transient_grads_ ? "gradient" : "working gradient");
    be_.fill(grads_[u].as(compute_, {n}), 0.0f);
    view_.grads[u] = grads_[u].as(compute_, {s.numel});
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
