// CountingBackend: a device that only counts. Its kernels do nothing and its memory has
// addresses but no bytes, so the real Model and Engine can run a step on it to learn
// what that step allocates, when, and under which category, without computing anything
// or owning the memory (the memory model, parallel/memory_model.h, is such a dry run).
// It stands for a backend by taking that backend's compute rule (core/compute_dtype.h),
// which is what the code that allocates asks of a backend.
//
// Buffers of at most kRealBytes are real host memory, and the copy hooks move their bytes:
// the step's scalars (token counts, loss sums, norms) then read back as written. Larger
// buffers read back as zeros.
//
// Thread-safety: one per dry run, used from one thread.
#pragma once

#include <cstdint>
#include <map>

#include "core/backend.h"

namespace llmft {

class CountingMemory : public DeviceMemory {
 public:
  static constexpr size_t kRealBytes = 4096;

  CountingMemory() = default;
  CountingMemory(const CountingMemory&) = delete;
  CountingMemory& operator=(const CountingMemory&) = delete;
  ~CountingMemory() override;
  void* allocate(size_t bytes) override;
  void release(void* ptr, size_t bytes) override;
  // Whether `ptr` points into a real (small) buffer.
  bool is_real(const void* ptr) const;

 private:
  // Above 2^48, where no x86-64 or AArch64 process maps memory: never a real address.
  uintptr_t next_address_ = uintptr_t{1} << 52;
  std::map<uintptr_t, size_t> real_;  // real buffers: start address -> bytes
};

class CountingBackend : public Backend {
 public:
  explicit CountingBackend(ComputeRule rule = ComputeRule::f32) : rule_(rule) {}
  std::string name() const override { return "counting"; }
  std::string describe() const override;
  ComputeRule compute_rule() const override { return rule_; }
  DeviceMemory& memory() override { return memory_; }
  void synchronize() override {}
  // Nothing runs, so every event is reached at once and no time passes.
  std::unique_ptr<Event> create_event() override { return std::make_unique<Event>(); }
  void record(Event&, Queue) override {}
  void wait(Queue, const Event&) override {}
  void synchronize(const Event&) override {}
  double elapsed_seconds(const Event&, const Event&) override { return 0.0; }

  void copy_to_device(Tensor dst, const void* host_src) override;
  void copy_to_host(void* host_dst, Tensor src) override;
  void copy(Tensor dst, Tensor src) override;
  void fill(Tensor, float) override {}
  void convert(Tensor, Tensor) override {}

  void linear_forward(Tensor, Tensor, Tensor, Tensor) override {}
  void linear_backward(Tensor, bool, Tensor, Tensor, Tensor, Tensor, Tensor) override {}
  void embedding_forward(Tensor, Tensor, Tensor, Tensor, int64_t, int64_t) override {}
  void embedding_backward(Tensor, Tensor, Tensor, Tensor, int64_t) override {}
  void layernorm_forward(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, float) override {}
  void layernorm_backward(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) override {
  }
  void rmsnorm_forward(Tensor, Tensor, Tensor, Tensor, float) override {}
  void rmsnorm_backward(Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) override {}
  void rope_forward(Tensor, int, int, const RopeFrequencies&, int64_t) override {}
  void rope_backward(Tensor, int, int, const RopeFrequencies&, int64_t) override {}
  void attention_forward(Tensor, Tensor, Tensor, int, int, int64_t) override {}
  void attention_backward(Tensor, Tensor, Tensor, Tensor, Tensor, int, int) override {}
  void gelu_forward(Tensor, Tensor) override {}
  void gelu_backward(Tensor, Tensor, Tensor) override {}
  void swiglu_forward(Tensor, Tensor) override {}
  void swiglu_backward(Tensor, Tensor, Tensor) override {}
  void add_inplace(Tensor, Tensor) override {}
  void cross_entropy_max(Tensor, Tensor, int64_t) override {}
  void cross_entropy_sums(Tensor, Tensor, Tensor, int64_t, int64_t) override {}
  void cross_entropy_finish(Tensor, Tensor, Tensor, Tensor, int64_t, int64_t, float) override {}
  void sum_squares(Tensor, Tensor) override {}
  void adamw_update(Tensor, Tensor, Tensor, Tensor, float, float, float, float, float, float, float,
                    float) override {}
  void sgd_update(Tensor, Tensor, Tensor, float, float, float, float) override {}
  void adalomo_square_sums(Tensor, Tensor, Tensor, float) override {}
  void adalomo_moments(Tensor, Tensor, Tensor, Tensor, Tensor, int64_t, int64_t, float) override {}
  void adalomo_norms(Tensor, Tensor, Tensor, Tensor, Tensor, int64_t, float) override {}
  void adalomo_apply(Tensor, Tensor, Tensor, Tensor, Tensor, int64_t, int64_t, float, float,
                     float) override {}

 private:
  ComputeRule rule_;
  CountingMemory memory_;
};

}  // namespace llmft
