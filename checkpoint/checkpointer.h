// Checkpointer: saving and resuming the whole training state with every rank of the job
// taking part (collective over MPI_COMM_WORLD).
//
// save(): rank 0 clears partial files of interrupted writes; all ranks write
// ".step_N.h5.partial" together (parallel HDF5: each its own hyperslabs), the attributes,
// and last the "complete" mark; rank 0 flushes the file to disk, renames it "step_N.h5"
// and removes checkpoints beyond the newest `keep`. A failed write removes its partial
// file and leaves every earlier checkpoint as it was; the training state is only read.
//
// resume(): reads a checkpoint into an Engine built for this run's layout, whatever layout
// wrote it (each rank reads only the hyperslabs it holds), after refusing one this run
// cannot continue (checkpoint/checkpoint_info.h).
#pragma once

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
  // `dir` exists and is writable (io/output_directory.h, on the lead rank).
  Checkpointer(std::string dir, int keep);

  // Collective: writes the state after step info.step; returns the checkpoint's path.
  std::string save(const Engine& engine, Backend& backend, RankPlace place,
                   const CheckpointInfo& info) const;

 private:
  std::string dir_;
  int keep_;
};

// Collective: the checkpoint `resume` names — "latest" for the newest complete one in
// `dir` (empty when there is none yet), or a checkpoint file, or a directory's newest —
// as the lead rank found it. Throws when an explicit path holds no checkpoint.
std::string resolve_resume_path(const std::string& resume, const std::string& dir, bool lead);

// Collective: checks the checkpoint at `path` against `run`, then reads it into `engine`
// (its weights alone with run.weights_only, else its whole state and progress). Returns
// its info.
CheckpointInfo resume_from(const std::string& path, const ResumeTarget& run, Engine& engine,
                           Backend& backend, RankPlace place);

}  // namespace llmft
