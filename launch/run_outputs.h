// RunOutputs: the outputs of `llmft train` that rank 0 alone opens before the first step —
// the --save-dir (checked for room for the model's f32 weights, and locked for this job:
// io/directory_lock.h) and the --metrics file. Opening them is decided on rank 0 for every
// rank (comm/mpi_lead_decision.h), so a directory that cannot be written or a metrics path
// that is a directory fails the job once, with one error, on every rank alike.
#pragma once

#include <optional>

#include "core/model_config.h"
#include "io/directory_lock.h"
#include "io/metrics.h"
#include "launch/train_options.h"

namespace llmft {

struct RunOutputs {
  std::optional<io::DirectoryLock> save_dir_lock;  // rank 0's, with a --save-dir
  io::MetricsWriter metrics{""};                   // disabled except on rank 0
};

// Collective over MPI_COMM_WORLD.
void open_run_outputs(const TrainOptions& o, const ModelConfig& config, bool lead,
                      RunOutputs& outputs);

}  // namespace llmft
