// Model FLOPs of a training step: 6 x (parameters used in matrix products) per token,
// plus attention's 12 x layers x hidden x seq_len per token (forward + backward), the
// convention of the Megatron-LM and PaLM papers for achieved-FLOP/s figures; and the
// throughput every report (the step line, the metrics, the benchmarks) derives from it.
#pragma once

#include <cstdint>

#include "core/model_config.h"

namespace llmft {

double training_flops_per_token(const ModelConfig& config, int seq_len);

// A step's (or a span of steps') throughput, by the one definition llmft reports:
// `processed_tokens` are every input position the step computed (padding included),
// summed over the data-parallel ranks; per device divides by all `devices` (ranks, tensor-
// parallel ones included, as Megatron's tokens/s/GPU); model FLOP/s is tokens/s x
// `flops_per_token`; MFU is model FLOP/s over `devices` x `peak_flops_per_device`, 0 when
// the peak is unknown (0).
struct Throughput {
  double tokens_per_s = 0;
  double tokens_per_s_per_device = 0;
  double model_flops_per_s = 0;
  double mfu = 0;
};

// REQUIRES: seconds > 0, devices > 0
Throughput step_throughput(double processed_tokens, double seconds, double flops_per_token,
                           int devices, double peak_flops_per_device);

}  // namespace llmft
