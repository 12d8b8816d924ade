// The memory model: predicts a rank's peak device memory per allocator category from
// the model config and the run's shape alone, before anything is allocated. It is
// derived from what each layer allocates (see the header comments of core/gpt2/) and
// rounds every allocation as the Allocator does; tests hold it to within 1% of the
// allocator's measured peak.
#pragma once

#include <string>

#include "core/memory_category.h"
#include "core/model_config.h"
#include "optim/optimizer.h"

namespace llmft {

struct RunShape {
  int micro_batch = 1;
  int seq_len = 1;
  OptimizerConfig optimizer;
};

struct MemoryPrediction {
  CategoryBytes peak_by_category{};  // each category's own peak over the step
  CategoryBytes at_peak{};           // the breakdown at the moment of the total peak
  size_t peak_total = 0;
  std::string peak_phase;  // where the total peaks, e.g. "backward of the head"
};

MemoryPrediction predict_memory(const ModelConfig& config, const RunShape& shape);

}  // namespace llmft
