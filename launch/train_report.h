// TrainReport: what `llmft train` tells its user on rank 0 — the resolved configuration
// and memory prediction first, then one line per logged step, validation losses, and a
// closing memory comparison — and the JSON object of each step for --metrics.
#pragma once

#include <optional>

#include "comm/communicator.h"
#include "core/allocator.h"
#include "core/model_config.h"
#include "io/json.h"
#include "io/window_layout.h"
#include "launch/rank_peaks.h"
#include "launch/train_options.h"
#include "parallel/engine.h"
#include "parallel/memory_model.h"
#include "parallel/mesh.h"

namespace llmft {

struct StepRecord {
  int step;
  StepStats stats;
  double seconds;
  double flops_per_token;
  size_t measured_peak;  // this rank's (rank 0's) allocator peak so far
  RankPeak worst_rank;   // the largest peak of any rank so far
  CommCounters comm;     // this rank's data-parallel collectives during the step
  CommCounters tp_comm;  // and its tensor-parallel ones
  size_t host_peak = 0;  // this rank's (rank 0's) host pool peak so far (an offloaded optimizer)
  double epochs = 0;     // passes over the training windows after the step (1.4: 40% into the 2nd)
};

class TrainReport {
 public:
  // Prints the configuration lines; `device` is the backend's describe(), and
  // `fixed_overhead` and `communicators` the device memory it measured outside the
  // allocator before the run (Backend::fixed_overhead, communicator_overhead).
  TrainReport(const TrainOptions& options, const ModelConfig& config,
              const MemoryPrediction& predicted, const io::WindowLayout& windows, MeshShape mesh,
              const std::string& device, size_t fixed_overhead, size_t communicators);
  void validation(int step, double loss);
  void step(const StepRecord& record, const std::optional<double>& val_loss);
  io::Json metrics_json(const StepRecord& record, const std::optional<double>& val_loss) const;
  // Prints measured vs predicted peak memory per category, of the device and (an
  // offloaded optimizer) of the host pool, and the device's whole peak: `worst` (the last
  // step's worst_rank_peak) against the prediction plus the memory outside the allocator.
  void finish(const Allocator& allocator, const Allocator* host_allocator, const RankPeak& worst);

 private:
  size_t predicted_device_peak() const {
    return predicted_.peak_total + fixed_overhead_ + communicators_;
  }

  const TrainOptions& options_;
  MemoryPrediction predicted_;
  size_t fixed_overhead_;
  size_t communicators_;
  double uniform_loss_;
};

}  // namespace llmft
