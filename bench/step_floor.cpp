// bench/step_floor.h: the step's products from a dry run's tally, timed cold and warm, and
// AdamW's pass.
#include "bench/step_floor.h"

#include <unistd.h>

#include <algorithm>
#include <initializer_list>
#include <utility>

#include "bench/host_matrix.h"
#include "core/cpu/cpu_kernels.h"
#include "core/decoder/decoder_model.h"
#include "core/model_factory.h"
#include "parallel/planner/step_work.h"

namespace llmft::bench {

namespace {

constexpr int kRepeats = 3;
constexpr int64_t kOptimizerSample = int64_t{1} << 26;

// Reads every cache line of `floats` floats from p (reads, so that no dirty line is written
// back while a product runs).
float touch(const float* p, int64_t floats) {
  float sum = 0.0f;
  for (int64_t i = 0; i < floats; i += 16) sum += p[i];
  return sum;
}

// The last-level cache's bytes (0 where the system does not say).
int64_t last_level_cache_bytes() {
  return std::max<int64_t>(sysconf(_SC_LEVEL3_CACHE_SIZE), 0);
}

// Reading twice the last-level cache (at least 64 MiB) leaves nothing of what came before;
// then the operands named are read back in, as a step finds its activations.
class CacheEvictor {
 public:
  CacheEvictor()
      : floats_(std::max<int64_t>(2 * last_level_cache_bytes(), 64 << 20) / 4),
        buffer_(1, floats_, 1.0f) {}
  void evict_keeping(std::initializer_list<std::pair<const HostMatrix*, int64_t>> kept) {
    sink_ += touch(buffer_.get(), floats_);
    for (const auto& [matrix, floats] : kept) sink_ += touch(matrix->get(), floats);
  }
  int64_t floats() const { return floats_; }

 private:
  int64_t floats_;
  HostMatrix buffer_;
  volatile float sink_ = 0.0f;
};

// One product shape of the tally (output M x N, summed over K) at `tokens` rows: a weight
// gradient when K is the token count (dW += dY^T X, the gradient read and written),
// otherwise a forward or input-gradient product of activations (M x K) with a weight
// (N x K as the forward reads it, K x N as the input gradient does; the tally does not say
// which, so the faster; a forward product whose K happens to equal the token count is timed
// as a weight gradient, the same FLOPs). Seconds cold (only the activations in cache) and
// warm.
std::pair<double, double> product_seconds(int64_t M, int64_t N, int64_t K, int64_t tokens,
                                          CacheEvictor& evictor) {
  if (K == tokens) {
    const HostMatrix dy(K, M, 0.5f), x(K, N, 0.25f), dw(M, N, 0.0f);
    auto product = [&] {
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, M, N, K, 1.0f, dy.get(), M, x.get(), N,
                  1.0f, dw.get(), N);
    };
    auto cold_start = [&] { evictor.evict_keeping({{&dy, K * M}, {&x, K * N}}); };
    return {best_seconds(kRepeats, cold_start, product), best_seconds(kRepeats, product)};
  }
  const HostMatrix a(M, K, 0.5f), w(N, K, 0.25f), c(M, N, 0.0f);
  auto forward = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1.0f, a.get(), K, w.get(), K,
                0.0f, c.get(), N);
  };
  auto input_gradient = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a.get(), K, w.get(), N,
                0.0f, c.get(), N);
  };
  auto cold_start = [&] { evictor.evict_keeping({{&a, M * K}}); };
  return {std::min(best_seconds(kRepeats, cold_start, forward),
                   best_seconds(kRepeats, cold_start, input_gradient)),
          std::min(best_seconds(kRepeats, forward), best_seconds(kRepeats, input_gradient))};
}

// AdamW over `parameters`, timed on a sample of them and scaled: the pass streams its state
// (16 bytes a parameter) from memory at a steady rate once that state is past the caches,
// so a sample whose state is the evictor's size or kOptimizerSample parameters suffices,
// and a large model's state needs no second copy beside the caller's.
double adamw_seconds(int64_t parameters, int64_t evictor_floats) {
  const int64_t sample =
      std::min(parameters, std::max<int64_t>(kOptimizerSample, evictor_floats / 4));
  const HostMatrix param(1, sample, 0.5f), grad(1, sample, 1e-3f), m(1, sample, 0.0f),
      v(1, sample, 0.0f);
  const double seconds = best_seconds(kRepeats, [&] {
    cpu::adamw_update(param.get(), grad.get(), DType::f32, m.get(), v.get(), sample, 1e-4f, 0.9f,
                      0.95f, 1e-8f, 0.1f, 1.0f, 0.1f, 0.05f);
  });
  return seconds * static_cast<double>(parameters) / static_cast<double>(sample);
}

}  // namespace

StepFloor measure_step_floor(const ModelConfig& config, int batch, int seq) {
  Workload workload;
  workload.model = config;
  workload.seq_len = seq;
  workload.global_batch = batch;
  Layout layout;
  layout.micro_batch = batch;
  const WorkTally tally = step_work(workload, layout, ComputeRule::stored).micro_batch;
  const int64_t tokens = static_cast<int64_t>(batch) * seq;
  // Weights come from memory when the optimizer's pass over the state (weights, gradients
  // and AdamW's moments: 16 bytes a parameter) between a weight's uses in two steps fills
  // the last-level cache; a smaller model's step can keep them all.
  const bool state_in_cache = 16 * parameter_count(config) <= last_level_cache_bytes();
  // The LM head's input gradient (its depth the head's rows) reads the weight the head's
  // forward read just before, with only the logits' passes between.
  const int64_t head_rows =
      unit_layouts(config, {}, DecoderModel::kVocabRowMultiple).front().params.front().shape[0];
  CacheEvictor evictor;
  StepFloor floor;
  for (const auto& [shape, calls] : tally.gemm_calls) {
    const auto [M, N, K] = shape;
    const auto [cold, warm] = product_seconds(M, N, K, tokens, evictor);
    const bool weight_in_cache = state_in_cache || (K == head_rows && K != tokens);
    const double as_met = static_cast<double>(calls) * (weight_in_cache ? warm : cold);
    floor.products_s += as_met;
    floor.products_warm_s += static_cast<double>(calls) * warm;
    floor.products_flops += 2.0 * static_cast<double>(calls) * M * N * K;
    floor.sgemm_flops += as_met * sgemm_gflops(1024) * 1e9;
  }
  floor.optimizer_s = adamw_seconds(parameter_count(config), evictor.floats());
  floor.sgemm_flops += floor.optimizer_s * sgemm_gflops(1024) * 1e9;
  return floor;
}

}  // namespace llmft::bench
