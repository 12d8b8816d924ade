// TrainCheckpoints: what `llmft train` does with checkpoints — resuming before the first
// step (--resume, with a note of every setting that changed since the checkpoint),
// saving every --checkpoint-every steps and after the last one (--checkpoint-dir, which
// this job locks and whose free space it checks for the checkpoints it will keep), setting
// aside the checkpoints of a state that diverged, and turning SIGTERM, SIGINT and SIGUSR1
// into "save after this step and exit with kPreemptedExitCode" (checkpoint/preemption.h;
// without a checkpoint directory, "stop after this step" with kInterruptedExitCode). Every
// rank makes every call, in the same order; rank 0 prints and touches the directory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "checkpoint/checkpointer.h"
#include "checkpoint/preemption.h"
#include "core/model_config.h"
#include "io/directory_lock.h"
#include "launch/train_options.h"
#include "parallel/engine.h"
#include "parallel/mesh.h"

namespace llmft {

// The checkpoint --resume continues from: "" without --resume or when --resume finds no
// checkpoint yet. Collective; found before anything is read or created, so that a wrong
// --resume fails first and a resumed run need not read --init-from, whose weights the
// checkpoint replaces.
std::string resume_checkpoint(const TrainOptions& options, bool lead);

class TrainCheckpoints {
 public:
  // Prepares and locks --checkpoint-dir (rank 0) and starts watching for signals;
  // `resume_path` is resume_checkpoint()'s.
  TrainCheckpoints(const TrainOptions& options, std::string resume_path, const ModelConfig& config,
                   Engine& engine, Backend& backend, RankPlace place, MeshShape mesh);

  // Where training starts: the step after the resumed checkpoint's, at the data position
  // it had reached; step 1 at position 0 without --resume, with --resume-weights-only, or
  // when --resume finds no checkpoint yet.
  struct Start {
    int step = 1;
    int64_t windows_consumed = 0;
  };
  Start resume();

  // After step `step` (`windows_consumed` windows drawn so far), which the divergence guard
  // let through, the steps up to `healthy_through` with their updates applied (checkpoints
  // before it are verified): saves when a checkpoint is due (every --checkpoint-every steps, the
  // last step, or when any rank was signalled). Returns the exit code when the job must
  // stop now: it was signalled, and the state is saved (kPreemptedExitCode) or there is no
  // --checkpoint-dir to save it in (kInterruptedExitCode).
  std::optional<int> after_step(int step, int64_t windows_consumed, int healthy_through);

  // Training diverged: the state after step `unhealthy_from` on was unhealthy. Sets aside
  // its checkpoints; returns a sentence for the error saying what is left and where to
  // resume.
  std::string after_divergence(int unhealthy_from);

 private:
  void save(int step, int64_t windows_consumed);
  // Says on rank 0's stderr that the job stops after `step` because it was signalled, and
  // `outcome`; returns `exit_code`.
  int stop(int step, const std::string& outcome, int exit_code) const;
  // The note of what differs between the resumed checkpoint and this run ("" if nothing).
  std::string changed_settings(const CheckpointInfo& info) const;

  const TrainOptions& options_;
  const ModelConfig& config_;
  Engine& engine_;
  Backend& backend_;
  RankPlace place_;
  MeshShape mesh_;
  std::string data_;                       // data_fingerprint(--data)
  std::string resume_path_;                // empty: nothing to resume
  std::optional<io::DirectoryLock> lock_;  // rank 0's, with a checkpoint directory
  std::optional<Checkpointer> checkpointer_;
  PreemptionWatch watch_;
};

}  // namespace llmft
