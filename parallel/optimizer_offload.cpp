#include "parallel/optimizer_offload.h"

#include <algorithm>

#include "core/error.h"

namespace llmft {

void check_offload(OptimizerKind kind) {
  LLMFT_REQUIRE(
      !is_fused(kind),
      "--offload-optimizer with --optimizer "
          << optimizer_kind_name(kind) << ": " << optimizer_kind_name(kind)
          << " updates each unit in its backward from a transient gradient and keeps "
             "no master weights"
          << (kind == OptimizerKind::lomo ? " and no state" : " and only factored statistics")
          << ", so there is nothing to offload; drop --offload-optimizer, or use "
             "--optimizer adamw or sgd");
}

OptimizerOffload::OptimizerOffload(Backend& device, const HostPool& host,
                                   const OptimizerConfig& config,
                                   const std::vector<UnitLayout>& units,
                                   const std::vector<UnitSpan>& spans, DType stored, DType compute)
    : device_(device),
      host_(*host.kernels),
      host_alloc_(*host.allocator),
      units_(units),
      spans_(spans),
      stored_(stored),
      compute_(compute) {
  check_offload(config.kind);
  optimizer_ = make_optimizer(config, host_, host_alloc_, units, spans);
  int64_t largest = 0;
  for (size_t u = 0; u < units.size(); ++u) {
    const size_t bytes = static_cast<size_t>(spans[u].size()) * sizeof(float);
    const std::string& name = units[u].name;
    grads_.push_back(host_alloc_.allocate(bytes, MemoryCategory::grads, "host grads " + name));
    masters_.push_back(
        host_alloc_.allocate(bytes, MemoryCategory::master_params, "host master " + name));
    largest = std::max(largest, spans[u].size());
  }
  if (stored != DType::f32) {  // f32 weights go to the device straight from the masters
    for (Staging& s : staging_) {
      s.buffer = host_alloc_.allocate(static_cast<size_t>(largest) * dtype_size(stored),
                                      MemoryCategory::comm_buffers, "weights to the device");
      s.copied = device_.create_event();
    }
  }
  scalar_ = host_alloc_.allocate(sizeof(float), MemoryCategory::other, "host norm");
}

void OptimizerOffload::zero_grads() {
  for (size_t u = 0; u < grads_.size(); ++u) host_.fill(grads(static_cast<int>(u)), 0.0f);
}

void OptimizerOffload::receive(int unit, const Tensor& reduced) {
  const int64_t n = spans_[unit].size();
  LLMFT_REQUIRE(reduced.numel() == n, "internal: offloaded gradient of the wrong size");
  Arrival arrival;
  arrival.unit = unit;
  arrival.staging = host_alloc_.allocate(static_cast<size_t>(n) * dtype_size(compute_),
                                         MemoryCategory::comm_buffers, "gradient to the host");
  device_.copy(arrival.staging.as(compute_, {n}), reduced);
  arrival.copied = device_.create_event();
  device_.record(*arrival.copied, Queue::compute);
  arrivals_.push_back(std::move(arrival));
}

std::vector<int> OptimizerOffload::accept_received() {
  std::vector<int> accepted;
  for (Arrival& arrival : arrivals_) {
    device_.synchronize(*arrival.copied);
    const int64_t n = spans_[arrival.unit].size();
    const Tensor received = arrival.staging.as(compute_, {n});
    if (compute_ == DType::f32) {
      host_.add_inplace(grads(arrival.unit), received);
    } else {
      Buffer widened = host_alloc_.allocate(static_cast<size_t>(n) * sizeof(float),
                                            MemoryCategory::comm_buffers, "widened gradient");
      host_.convert(widened.as(DType::f32, {n}), received);
      host_.add_inplace(grads(arrival.unit), widened.as(DType::f32, {n}));
    }
    accepted.push_back(arrival.unit);
  }
  arrivals_.clear();
  return accepted;
}

void OptimizerOffload::update(int unit, float lr, float grad_scale, const Tensor& device_weights) {
  const int64_t n = spans_[unit].size();
  optimizer_->update_unit(unit, units_[unit], spans_[unit], master(unit), grads(unit), lr,
                          grad_scale);
  if (stored_ == DType::f32) {
    // The copy reads the master while the device runs; the host next writes it in the next
    // step's update of this unit, after waiting for that step's gradient of it, which the
    // device's queue produces after this copy.
    device_.copy(device_weights, master(unit));
    return;
  }
  Staging& staging = staging_[next_staging_];
  next_staging_ ^= 1;
  device_.synchronize(*staging.copied);  // its previous copy has left
  const Tensor rounded = staging.buffer.as(stored_, {n});
  host_.convert(rounded, master(unit));
  device_.copy(device_weights, rounded);
  device_.record(*staging.copied, Queue::compute);
}

}  // namespace llmft
