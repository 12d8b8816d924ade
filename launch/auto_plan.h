// --auto-plan: before training, the planner picks the layout (dp x tp, ZeRO stage,
// micro-batch and accumulation, checkpointing) for the ranks the job was launched with.
// The devices are described by a preset refined by startup benchmarks (cached per host
// and world; --no-calibrate keeps the preset); every rank plans from the same figures,
// broadcast from rank 0, so all choose the same layout.
#pragma once

#include "comm/communicator.h"
#include "core/backend.h"
#include "core/model_config.h"
#include "launch/train_options.h"
#include "optim/optimizer.h"
#include "parallel/planner/layout.h"

namespace llmft {

// The planner's request for this training run's workload on `world_size` ranks: the
// layout options given explicitly are constraints. Collective over `world` (null: one
// rank). Rank 0 prints the plan and writes --plan-json. Throws llmft::Error when no
// layout fits.
Layout auto_plan(const TrainOptions& o, const po::variables_map& values, const ModelConfig& config,
                 const OptimizerConfig& optimizer, Backend& backend, Communicator* world,
                 int world_size);

// Sets the training options the layout decides: --dp, --tp, --zero, --micro-batch,
// --grad-accum and --activation-checkpointing.
void apply_layout(TrainOptions& o, const Layout& layout);

}  // namespace llmft
