// Checkpointer: saving and resuming the whole training state with every rank of the job
// taking part (collective over MPI_COMM_WORLD).
//
// save(): rank 0 clears partial files of interrupted writes and checks the free space; all
// ranks write ".step_N.h5.partial" together (parallel HDF5: each its own hyperslabs), the
// attributes, and last the "complete" mark, and flush it; rank 0 syncs the file to disk and
// renames it "step_N.h5".
// A failed write fails on every rank alike (io/file_agreement.h), removes its partial file
// and leaves every earlier checkpoint as it was; the training state is only read.
//
// A checkpoint is verified once a later step's loss and gradient norm were healthy: they
// came from the state it holds. The directory keeps the newest `keep` verified checkpoints
// and every newer one (confirm() prunes after each healthy step). When training diverges,
// set_aside() renames the checkpoints of the unhealthy state to "step_N.h5.diverged", so
// that --resume never picks them and they stay for inspection.
//
// resume(): reads a checkpoint into an Engine built for this run's layout, whatever layout
// wrote it (each rank reads only the hyperslabs it holds), after refusing one this run
// cannot continue (checkpoint/checkpoint_info.h), and verifies every value it restores.
#pragma once

#include <cstdint>
#include <string>

#include "checkpoint/checkpoint_info.h"
#include "core/backend.h"
#include "core/tp_slice.h"
#include "parallel/engine.h"

namespace llmft {

// This rank's place in the job, which decides what it writes and reads.
struct RankPlace {
  TpSlice slice;
  int dp_rank = 0;
  bool lead = false;  // world rank 0: the one that touches the directory
};

class Checkpointer {
 public:
  // Collective. `dir` exists, is writable and locked by this job (on the lead rank);
  // `timeout_seconds` bounds every wait of the ranks on each other (--comm-timeout).
  Checkpointer(std::string dir, int keep, double timeout_seconds, bool lead);

  // Collective: writes the state after step info.step; returns the checkpoint's path.
  std::string save(const Engine& engine, Backend& backend, RankPlace place,
                   const CheckpointInfo& info);

  // Every checkpoint before step `verified_before` is verified (a later step's update was
  // applied with a healthy loss and norm); prunes to `keep` when that verifies a new one.
  void confirm(int64_t verified_before);

  // Collective: training diverged, and the state after step `from_step` on was unhealthy.
  // Sets aside the checkpoints of those steps; returns what happened and where to resume,
  // as a sentence for the error.
  std::string set_aside(int64_t from_step);

 private:
  std::string dir_;
  int keep_;
  double timeout_seconds_;
  bool lead_;
  std::string newest_;           // the newest complete checkpoint ("" when none)
  int64_t unconfirmed_ = -1;     // the step of a checkpoint not yet verified (-1: none)
  int64_t verified_before_ = 0;  // checkpoints of earlier steps are verified
};

// Collective: the checkpoint `resume` names — "latest" for the newest complete one in
// `dir` (empty when there is none yet), or a checkpoint file, or a directory's newest —
// as the lead rank found it. `option` names where the path came from in errors
// ("--resume", "--checkpoint"). Throws when an explicit path holds no checkpoint. When
// newer files were passed over (incomplete or unreadable), the lead says so on stdout.
std::string resolve_resume_path(const std::string& resume, const std::string& dir, bool lead,
                                const std::string& option, double timeout_seconds);

// Collective: checks the checkpoint at `path` against `run`, then reads it into `engine`
// (its weights alone with run.weights_only, else its whole state and progress). Returns
// its info.
CheckpointInfo resume_from(const std::string& path, const ResumeTarget& run, Engine& engine,
                           Backend& backend, RankPlace place, double timeout_seconds);

}  // namespace llmft
