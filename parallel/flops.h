// Model FLOPs of a training step: 6 x (parameters used in matrix products) per token,
// plus attention's 12 x layers x hidden x seq_len per token (forward + backward), the
// convention of the Megatron-LM and PaLM papers for achieved-FLOP/s figures.
#pragma once

#include <cstdint>

#include "core/model_config.h"

namespace llmft {

double training_flops_per_token(const ModelConfig& config, int seq_len);

}  // namespace llmft
