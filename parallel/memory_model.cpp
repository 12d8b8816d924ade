#include "parallel/memory_model.h"

#include "parallel/dry_run.h"
#include "parallel/state_transfers.h"

namespace llmft {

MemoryPrediction predict_memory(const ModelConfig& config, const RunShape& shape) {
  DryRun run(config, shape);
  run.train_step(1, 1);
  const Allocator& alloc = run.allocator();
  MemoryPrediction prediction;
  prediction.peak_by_category = alloc.peak_by_category();
  prediction.at_peak = alloc.at_total_peak();
  prediction.peak_total = alloc.total_peak();
  prediction.peak_phase = alloc.peak_phase();
  if (const Allocator* host = run.host_allocator()) {
    prediction.host_peak_by_category = host->peak_by_category();
    prediction.host_peak_total = host->total_peak();
  }
  prediction.checkpoint_staging = checkpoint_staging_bytes(run.engine(), run.slice());
  return prediction;
}

}  // namespace llmft
