// TrainCheckpoints: what `llmft train` does with checkpoints — resuming before the first
// step (--resume), saving every --checkpoint-every steps and after the last one
// (--checkpoint-dir), and, while it has a checkpoint directory, turning SIGTERM, SIGINT
// and SIGUSR1 into "save after this step and exit with kPreemptedExitCode"
// (checkpoint/preemption.h). Every rank makes every call, in the same order; rank 0 prints.
#pragma once

#include <cstdint>
#include <optional>

#include "checkpoint/checkpointer.h"
#include "checkpoint/preemption.h"
#include "core/model_config.h"
#include "launch/train_options.h"
#include "parallel/engine.h"
#include "parallel/mesh.h"

namespace llmft {

class TrainCheckpoints {
 public:
  // Finds the checkpoint --resume names, prepares --checkpoint-dir (rank 0) and starts
  // watching for signals when there is one.
  TrainCheckpoints(const TrainOptions& options, const ModelConfig& config, Engine& engine,
                   Backend& backend, RankPlace place, MeshShape mesh);

  // Where training starts: the step after the resumed checkpoint's, at the data position
  // it had reached; step 1 at position 0 without --resume, with --resume-weights-only, or
  // when --resume finds no checkpoint yet.
  struct Start {
    int step = 1;
    int64_t windows_consumed = 0;
  };
  Start resume();

  // After step `step` (`windows_consumed` windows drawn so far): saves when a checkpoint is
  // due (every --checkpoint-every steps, the last step, or when any rank was signalled).
  // Returns true when the job must stop now (it was signalled; the state is saved).
  bool after_step(int step, int64_t windows_consumed);

 private:
  void save(int step, int64_t windows_consumed);

  const TrainOptions& options_;
  const ModelConfig& config_;
  Engine& engine_;
  Backend& backend_;
  RankPlace place_;
  MeshShape mesh_;
  std::string resume_path_;  // empty: nothing to resume
  std::optional<Checkpointer> checkpointer_;
  std::optional<PreemptionWatch> watch_;
};

}  // namespace llmft
