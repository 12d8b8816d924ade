// What the planner lays out and what it chooses. A Workload is what the user fixes: the
// model, optimizer, dtype, sequence length and global batch. A Layout is one way to run
// it on `dp x tp` ranks: the ZeRO stage, the micro-batch and gradient accumulation
// (global batch = micro_batch x grad_accum x dp) and how many blocks are checkpointed
// (the first ones: core/model.h's ModelOptions says why), and whether the optimizer is
// offloaded to host memory (parallel/optimizer_offload.h), and whether tensor parallelism
// runs Megatron's sequence parallelism.
#pragma once

#include <string>

#include "core/dtype.h"
#include "core/model_config.h"
#include "optim/optimizer.h"
#include "parallel/memory_model.h"

namespace llmft {

struct Workload {
  ModelConfig model;
  OptimizerConfig optimizer;
  DType dtype = DType::f32;
  int seq_len = 1;
  int global_batch = 1;  // windows per optimizer step, over all data-parallel ranks
  bool clip_grad = false;
};

struct Layout {
  int dp = 1;
  int tp = 1;
  int zero_stage = 0;
  int micro_batch = 1;
  int grad_accum = 1;
  int checkpointed_blocks = 0;  // activation checkpointing of the first blocks (n_layer: all)
  bool offload_optimizer = false;
  bool sequence_parallel = false;  // with tp > 1 (core/model.h ModelOptions)

  int world() const { return dp * tp; }
};

// The memory model's shape of rank (dp_rank, tp_rank) of the layout.
RunShape run_shape(const Workload& workload, const Layout& layout, int dp_rank, int tp_rank);

// "llama-7b (6.74B parameters), adamw, bf16, seq-len 512, global batch 64, gradient sums
// in fp32" (the gradient sums' dtype with 16-bit weights and sgd or adamw).
std::string describe_workload(const Workload& workload);

// "dp 2 x tp 4, ZeRO-1, micro-batch 2 x 4 accumulated, checkpointing 8 blocks, optimizer
// offloaded".
std::string describe_layout(const Layout& layout);

}  // namespace llmft
