// The time a CPU training step (fp32, AdamW) cannot go under with its matrix products
// through OpenBLAS and its optimizer streaming the parameters' state through memory:
// every product one step runs (the counting device's tally of a dry run of the step,
// parallel/planner/step_work.h), each timed as a step meets it: the activations in the
// caches, and the weight-sized operand evicted from them unless the step can keep it there
// (a model whose optimizer state fits in the last-level cache; the LM head's input
// gradient, which follows the head's forward), plus AdamW's update of every parameter.
// All the step's other work (norms, activations, attention, the loss, the gradient norm,
// zeroing the gradients) counts as free, so the MFU this floor allows is an upper bound on
// what faster kernels for that work could reach.
#pragma once

#include "core/model_config.h"

namespace llmft::bench {

struct StepFloor {
  double products_s = 0;       // the products as a step meets them (see above)
  double products_warm_s = 0;  // the same products with every operand in cache
  double optimizer_s = 0;      // AdamW over every parameter
  double products_flops = 0;   // the products' FLOPs (2 M N K each)
  // The FLOPs sgemm (host_matrix.h) does in the floor's time, each part's time at the rate
  // measured right after it (a shared machine's speed drifts within seconds): the model
  // FLOPs of a step over this are the highest MFU the floor allows.
  double sgemm_flops = 0;
  double total_s() const { return products_s + optimizer_s; }
};

// Uses the OpenMP and OpenBLAS threads the caller set.
StepFloor measure_step_floor(const ModelConfig& config, int batch, int seq);

}  // namespace llmft::bench
