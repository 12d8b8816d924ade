// The time model's work tally (parallel/planner/step_work.h): what the counting device
// tallies of a dry step is what the step really does. Its products carry exactly the
// model's 6 x (matrix parameters) FLOPs per token, attention is tallied once per block and
// pass with the run's shape, and grad_accum micro-batches plus the step's own work tally
// exactly what a dry step of grad_accum micro-batches does. With measured kernel costs the
// prediction follows the tally (more rows or more accumulation never cost less).
#include <doctest/doctest.h>

#include <string>

#include "core/decoder/decoder_model.h"
#include "parallel/dry_run.h"
#include "parallel/planner/step_time.h"
#include "parallel/planner/step_work.h"

using namespace llmft;

namespace {

Workload tiny(const std::string& preset, OptimizerKind kind) {
  Workload w;
  w.model = preset_config(preset);
  w.optimizer.kind = kind;
  w.seq_len = 24;
  w.global_batch = 4;
  w.clip_grad = true;
  return w;
}

// Parameters of the model's matrix products on tensor-parallel ranks of `tp`: every block's
// weights and the head (the tied embedding table's product), whose vocabulary is padded to
// tp equal slices of a multiple of DecoderModel::kVocabRowMultiple rows.
double matrix_parameters(const ModelConfig& c, int tp) {
  const double C = c.hidden, I = c.intermediate, kv = c.n_kv_head * c.head_dim();
  const double block = C * (C + 2 * kv) + C * C + (c.family == ModelFamily::llama ? 3 : 2) * C * I;
  const int64_t multiple = DecoderModel::kVocabRowMultiple;
  const int64_t slice_rows = ((c.vocab_size + tp - 1) / tp + multiple - 1) / multiple * multiple;
  const double vocabulary = static_cast<double>(slice_rows * tp);
  return c.n_layer * block + vocabulary * C;
}

}  // namespace

TEST_CASE("a micro-batch's products carry 6 x matrix parameters FLOPs per token") {
  for (const std::string preset : {"gpt2-tiny", "llama-tiny"}) {
    for (int tp : {1, 2}) {
      CAPTURE(preset);
      CAPTURE(tp);
      const Workload w = tiny(preset, OptimizerKind::adamw);
      const Layout l{1, tp, 0, 2, 2, false};
      const StepWork work = step_work(w, l, ComputeRule::f32);
      const double tokens = 2.0 * w.seq_len;
      // Integers far below 2^53: exact in double.
      CHECK(work.micro_batch.total_gemm_flops() ==
            6 * matrix_parameters(w.model, tp) * tokens / tp);
      CHECK(work.once.total_gemm_flops() == 0);
      // One forward and one backward call per block, with this rank's heads.
      for (const auto& [shape, calls] : work.micro_batch.attention) {
        const auto [batch, queries, heads, kv_heads, head_dim, backward] = shape;
        CHECK(calls == w.model.n_layer);
        CHECK(batch == 2);
        CHECK(queries == w.seq_len);
        CHECK(heads == w.model.n_head / tp);
        CHECK(kv_heads == w.model.n_kv_head / tp);
      }
      CHECK(work.micro_batch.attention.size() == 2);
    }
  }
}

TEST_CASE("grad_accum micro-batches and the step's own work tally a whole dry step") {
  for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::sgd}) {
    for (int zero : {0, 1, 3}) {
      CAPTURE(zero);
      const Workload w = tiny("llama-tiny", kind);
      const Layout l{2, 1, zero, 1, 3, false};
      const StepWork work = step_work(w, l, ComputeRule::f32);
      RunShape shape = run_shape(w, l, 0, 0);
      DryRun run(w.model, shape);
      run.train_step(1, 3);
      const WorkTally first = run.tally();
      run.train_step(2, 3);
      const WorkTally step = run.tally().minus(first);
      CHECK(step.kernel_calls == 3 * work.micro_batch.kernel_calls + work.once.kernel_calls);
      CHECK(step.total_gemm_flops() == 3 * work.micro_batch.total_gemm_flops());
      for (int k = 0; k < kKernelKinds; ++k) {
        CHECK(step.kernel_bytes[k] ==
              3 * work.micro_batch.kernel_bytes[k] + work.once.kernel_bytes[k]);
      }
    }
  }
}

TEST_CASE("with measured kernel costs, more rows or more accumulation never cost less") {
  DeviceDescription d = device_preset("cpu");
  d.peak_flops = 1e11;
  d.gemm_half_rate_rows = 32;
  d.memory_bandwidth = 1e10;
  d.kernel_call_s = 1e-6;
  const Workload w = tiny("gpt2-tiny", OptimizerKind::adamw);
  const double mb1 = predict_step_time(w, Layout{1, 1, 0, 1, 4, false}, d).compute_s;
  const double mb2 = predict_step_time(w, Layout{1, 1, 0, 2, 2, false}, d).compute_s;
  const double mb4 = predict_step_time(w, Layout{1, 1, 0, 4, 1, false}, d).compute_s;
  // The same tokens in fewer, larger micro-batches: fewer calls, larger products.
  CHECK(mb4 < mb2);
  CHECK(mb2 < mb1);
  const double some = predict_step_time(w, Layout{1, 1, 0, 4, 1, 1}, d).compute_s;
  const double checkpointed = predict_step_time(w, Layout{1, 1, 0, 4, 1, 4}, d).compute_s;
  CHECK(some > mb4);
  CHECK(checkpointed > some);  // the recomputed forward of every block
  d.kernel_call_s = 2e-6;
  CHECK(predict_step_time(w, Layout{1, 1, 0, 4, 1, false}, d).compute_s > mb4);
}
